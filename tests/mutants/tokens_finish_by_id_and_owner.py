"""finish matches job id and worker name, not the token: a restarted run's old stamp counts.

The lesson's second trap: A restarted under the same name cannot be told apart from its earlier
run by name alone, so the earlier run's late finish overwrites the new generation's record."""

from _finish_parts import finish_where
from _kit import reference_claim as claim
from _kit import work_once_with

EXPECT_FAIL = {"same-name-restart", "forged-stamp-token", "forged-stamp-attempt",
               "forged-stamp-lease-until",
               "late-finish-same-name"}
MAY_FAIL = {"random-timelines"}  # the same bug, met again on a random timeline

finish = finish_where("id = :id", "status = 'leased'", "owner = :owner", ":now < lease_until",
                      ":now < deadline")
work_once = work_once_with(claim, finish)
