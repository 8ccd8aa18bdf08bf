"""claim re-claims jobs with an expired lease before any never-claimed job, not the lowest id.

"Retries first, they have waited longest" sounds fair, but the contract's selection is the lowest
claimable id whatever its state: a pending job with a lower id waits behind every expired one."""

from _claim_parts import SELECT, claim_with
from _kit import reference_finish as finish
from _kit import work_once_with

EXPECT_FAIL = {"random-timelines"}
EXPECT_TEXT = {"random-timelines": "Expected: Claim(id=1, qty=1, owner='A', token=1, attempt=1, lease_until=2000)"}

claim = claim_with(select=SELECT.replace("ORDER BY id", "ORDER BY status = 'leased' DESC, id"))
work_once = work_once_with(claim, finish)
