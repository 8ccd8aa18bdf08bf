"""claim takes the claimable job with the earliest deadline first (ties by id), not the lowest id.

"Most urgent first" is a sensible scheduling policy, but the contract's selection is the lowest
claimable id: a job enqueued later with a nearer deadline jumps the queue."""

from _claim_parts import SELECT, claim_with
from _kit import reference_finish as finish
from _kit import work_once_with

EXPECT_FAIL = {"random-timelines"}
EXPECT_TEXT = {"random-timelines": "Expected: Claim(id={id:1},"}

claim = claim_with(select=SELECT.replace("ORDER BY id", "ORDER BY deadline, id"))
work_once = work_once_with(claim, finish)
