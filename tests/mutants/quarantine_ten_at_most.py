"""claim quarantines at most 10 jobs per call (a batch size to keep the transaction short).

The contract quarantines every job it applies to in every claim: with more than ten jobs past
their deadline at once, the rest stay pending past their deadline."""

from _claim_parts import NOT_VALID, claim_with
from _kit import reference_finish as finish
from _kit import work_once_with

EXPECT_FAIL = {"quarantine-past-deadline", "random-timelines"}
EXPECT_TEXT = {"random-timelines": "'s row is not what the contract leaves",
               "quarantine-past-deadline": "not a first batch"}

claim = claim_with(quarantine=(
    "UPDATE jobs SET status = 'quarantined' WHERE id IN (SELECT id FROM jobs"
    f" WHERE {NOT_VALID} AND (attempts >= max_attempts OR deadline <= :now)"
    " ORDER BY id LIMIT 10)"))
work_once = work_once_with(claim, finish)
