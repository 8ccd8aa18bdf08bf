"""claim's quarantine step does not exclude done jobs: a finished job past its deadline moves.

The quarantine tests "lease not valid" as lease_until <= now and forgets the status, so a done
job's row changes long after it was finished."""

from _claim_parts import NOT_VALID, QUARANTINE, claim_with
from _kit import reference_finish as finish
from _kit import work_once_with

EXPECT_FAIL = {"skips-done-and-quarantined"}
MAY_FAIL = {"random-timelines"}  # the same bug, met again on a random timeline

claim = claim_with(quarantine=QUARANTINE.replace(
    NOT_VALID, "(lease_until IS NULL OR lease_until <= :now)"))
work_once = work_once_with(claim, finish)
