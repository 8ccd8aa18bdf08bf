"""claim quarantines at most 500 jobs per call (one batch: `... WHERE id IN (SELECT ... LIMIT
500)`), "to keep the transaction short".

With more than 500 jobs due at once, the rest stay pending past their deadline until later
claims get to them: any number of jobs may be due at once."""

from _claim_parts import claim_with, quarantine_batch
from _kit import reference_finish as finish
from _kit import work_once_with

EXPECT_FAIL = {"quarantine-past-deadline", "random-timelines"}
EXPECT_TEXT = {"quarantine-past-deadline": "not a first batch"}

claim = claim_with(quarantine_batch(500))
work_once = work_once_with(claim, finish)
