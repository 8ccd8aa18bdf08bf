"""claim takes the claimable job with the smallest qty first (ties by id), not the lowest id.

"Quick jobs first" keeps the queue short, but the contract's selection is the lowest claimable
id: a large job can wait behind every smaller one enqueued after it."""

from _claim_parts import SELECT, claim_with
from _kit import reference_finish as finish
from _kit import work_once_with

EXPECT_FAIL = {"lock-free-during-send"}  # the job enqueued during A's send (qty 1) goes first
MAY_FAIL = {"random-timelines"}  # the same bug, met again on a random timeline
EXPECT_TEXT = {"lock-free-during-send": "{B} should have got the other pending job {id:2}"}

claim = claim_with(select=SELECT.replace("ORDER BY id", "ORDER BY qty, id"))
work_once = work_once_with(claim, finish)
