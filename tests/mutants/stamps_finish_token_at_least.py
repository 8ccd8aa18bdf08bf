"""finish accepts a stamp when the row's token is at least the stamp's (token >= :token): "my
generation, or a later one".

Only equality tells generations apart: a stamp of an earlier generation (forged, or an old
claim's whose other fields happen to match) lands. The forged-token check forges a later token,
which this finish rightly rejects, then an earlier one, which it accepts."""

from _finish_parts import CONDITIONS, finish_where
from _kit import reference_claim as claim
from _kit import work_once_with

EXPECT_FAIL = {"forged-stamp-token",
               "late-finish-same-name"}
MAY_FAIL = {"random-timelines"}  # the same bug, met again on a random timeline
EXPECT_TEXT = {"forged-stamp-token": "stamp with token=0 (the row says 1) must be rejected: it is"
                                     " not the lease's current generation"}

finish = finish_where(*("token >= :token" if c == "token = :token" else c for c in CONDITIONS))
work_once = work_once_with(claim, finish)
