"""claim treats any job whose lease ran out as free, whatever its status: done jobs come back.

The selection tests lease_until only (NULL or <= now) and forgets that 'done' and 'quarantined'
jobs are never claimable."""

from _claim_parts import NOT_VALID, SELECT, claim_with
from _kit import reference_finish as finish
from _kit import work_once_with

EXPECT_FAIL = {"skips-done-and-quarantined"}
MAY_FAIL = {"random-timelines"}
# the job it took is the story (issue 38.5), not job 2's quarantine, which it did
EXPECT_TEXT = {"skips-done-and-quarantined": "the claim took job {id:1}, which is done"}
EXPECT_NO_TEXT = {"skips-done-and-quarantined": "has used its only attempt"}  # the same bug, met again on a random timeline

claim = claim_with(select=SELECT.replace(NOT_VALID, "(lease_until IS NULL OR lease_until <= :now)"))
work_once = work_once_with(claim, finish)
