"""finish accepts a stamp when the row's lease_until is at least the stamp's (lease_until >=
:lease_until): "the lease runs at least as long as my stamp says".

Every field of the stamp must match the row exactly: a stamp that states an earlier end than
the row's, while the row's lease is still running, lands. The forged-lease_until check forges a
longer lease, which this finish rightly rejects, then a shorter one that is still running at the
finish, which it accepts. Found by an instructor-style hunt: it scored 100 before."""

from _finish_parts import CONDITIONS, finish_where
from _kit import reference_claim as claim
from _kit import work_once_with

EXPECT_FAIL = {"forged-stamp-lease-until"}
MAY_FAIL = {"random-timelines"}  # the same bug, met again on a random timeline
EXPECT_TEXT = {"forged-stamp-lease-until": "(the row says {t0 + lease_ms}) must be rejected,"
                                           " even though the row's lease is still running"}

finish = finish_where(*("lease_until >= :lease_until" if c == "lease_until = :lease_until"
                        else c for c in CONDITIONS))
work_once = work_once_with(claim, finish)
