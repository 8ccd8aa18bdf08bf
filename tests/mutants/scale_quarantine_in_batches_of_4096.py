"""claim quarantines at most 4,096 jobs per call (one batch: `... WHERE id IN (SELECT ... LIMIT
4096)`), "to keep the transaction short".

With more than 4,096 jobs due at once, the rest stay pending past their deadline until later
claims get to them: any number of jobs may be due at once. Found by a blind set written from the
contract alone, when the random timeline at the domain's size set about 1,200 due jobs: it now
sets over 4,200."""

from _claim_parts import claim_with, quarantine_batch
from _kit import reference_finish as finish
from _kit import work_once_with

# the class scale_quarantine_in_batches_of_500 carries through every suite, at a larger size
LIGHT = True
EXPECT_FAIL = {"random-timelines"}
EXPECT_TEXT = {"random-timelines": "status=pending"}

claim = claim_with(quarantine_batch(4096))
work_once = work_once_with(claim, finish)
