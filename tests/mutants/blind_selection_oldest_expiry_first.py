"""claim takes the job whose lease ran out longest ago first (never-claimed jobs last), not the
lowest id.

"The longest-waiting retry first" reorders the queue: the contract's selection is the lowest
claimable id, however long ago its lease ended."""

from _claim_parts import SELECT, claim_with
from _kit import reference_finish as finish
from _kit import work_once_with

EXPECT_FAIL = {"random-timelines"}
EXPECT_TEXT = {"random-timelines": "Expected: Claim(id=1, qty=1, owner='A', token=1, attempt=1, lease_until=2000)"}

claim = claim_with(select=SELECT.replace("ORDER BY id", "ORDER BY lease_until NULLS LAST, id"))
work_once = work_once_with(claim, finish)
