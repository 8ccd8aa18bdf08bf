"""claim quarantines at most 100 jobs per call ("a batch keeps the transaction short").

The contract quarantines every job it applies to in every claim: when hundreds of jobs come due
at once, all but the first hundred stay pending past their deadline."""

from _claim_parts import NOT_VALID, claim_with
from _kit import reference_finish as finish
from _kit import work_once_with

EXPECT_FAIL = {"quarantine-past-deadline", "random-timelines"}
EXPECT_TEXT = {"quarantine-past-deadline": "however many, not a first batch"}

claim = claim_with(quarantine=(
    "UPDATE jobs SET status = 'quarantined' WHERE id IN (SELECT id FROM jobs"
    f" WHERE {NOT_VALID} AND (attempts >= max_attempts OR deadline <= :now)"
    " ORDER BY id LIMIT 100)"))
work_once = work_once_with(claim, finish)
