"""claim takes the job with the most attempts used first (ties by id), not the lowest id.

"Give the job closest to quarantine its chance first" reorders the queue: the contract's selection
is the lowest claimable id, however often a job was tried."""

from _claim_parts import SELECT, claim_with
from _kit import reference_finish as finish
from _kit import work_once_with

EXPECT_FAIL = {"random-timelines"}
EXPECT_TEXT = {"random-timelines": "Expected: Claim(id=1, qty=1, owner='A', token=1, attempt=1, lease_until=2000)"}

claim = claim_with(select=SELECT.replace("ORDER BY id", "ORDER BY attempts DESC, id"))
work_once = work_once_with(claim, finish)
