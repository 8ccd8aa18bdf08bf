"""finish matches only the job id (lease still running): a late worker steals the new record.

The lesson's first trap: A comes back after B re-claimed the job and, with only the id as the
condition, marks B's current work done."""

from _finish_parts import finish_where
from _kit import reference_claim as claim
from _kit import work_once_with

EXPECT_FAIL = {"lesson-timeline", "same-name-restart", "forged-stamp-id", "forged-stamp-owner",
               "forged-stamp-token", "forged-stamp-attempt", "forged-stamp-lease-until",
               "late-finish-lease-taken", "late-finish-same-name"}
MAY_FAIL = {"random-timelines"}  # the same bug, met again on a random timeline

finish = finish_where("id = :id", "status = 'leased'", ":now < lease_until", ":now < deadline")
work_once = work_once_with(claim, finish)
