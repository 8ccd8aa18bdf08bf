"""claim quarantines jobs out of attempts even while their lease is still valid.

The holder on its last attempt is working within its lease; quarantining the job under it makes
its honest finish fail."""

from _claim_parts import NOT_VALID, QUARANTINE, claim_with
from _kit import reference_finish as finish
from _kit import work_once_with

EXPECT_FAIL = {"quarantine-spares-valid-lease"}
MAY_FAIL = {"random-timelines"}  # the same bug, met again on a random timeline

claim = claim_with(quarantine=QUARANTINE.replace(NOT_VALID, "status IN ('pending', 'leased')"))
work_once = work_once_with(claim, finish)
