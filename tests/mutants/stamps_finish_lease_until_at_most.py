"""finish accepts a stamp when the row's lease_until is at most the stamp's (lease_until <=
:lease_until): "the lease ends no later than my stamp says".

Every field of the stamp must match the row exactly: a stamp that claims a longer lease than the
row holds lands. The forged-lease_until check's first forgery, a longer lease, catches it."""

from _finish_parts import CONDITIONS, finish_where
from _kit import reference_claim as claim
from _kit import work_once_with

LIGHT = True  # a variant: graded here and in drawn worlds, not by the parity and the sweep
EXPECT_FAIL = {"forged-stamp-lease-until"}
MAY_FAIL = {"random-timelines"}  # the same bug, met again on a random timeline
EXPECT_TEXT = {"forged-stamp-lease-until": "(the row says {t0 + lease_ms}) must be rejected,"
                                           " even though the row's lease is still running"}

finish = finish_where(*("lease_until <= :lease_until" if c == "lease_until = :lease_until"
                        else c for c in CONDITIONS))
work_once = work_once_with(claim, finish)
