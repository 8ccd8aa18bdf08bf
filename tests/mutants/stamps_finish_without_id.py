"""finish's WHERE clause forgets the job id: a stamp naming another job finishes the holder's own.

The UPDATE matches owner, token, attempt and lease_until only, so which row it changes does not
depend on the stamp's id at all."""

from _finish_parts import finish_without
from _kit import reference_claim as claim
from _kit import work_once_with

EXPECT_FAIL = {"forged-stamp-id"}
MAY_FAIL = {"random-timelines",  # the same bug, met again on a random timeline
            "lock-free-during-send"}  # and by the probe's restarted A, holding two leases

finish = finish_without("id = :id")
work_once = work_once_with(claim, finish)
