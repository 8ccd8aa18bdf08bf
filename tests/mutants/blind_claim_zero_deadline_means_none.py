"""claim reads a deadline of 0 as "no deadline": it never quarantines such a job, and claims it.

0 is a convenient "unset" in many schemas, but here the column is NOT NULL and every value is an
instant: a deadline of 0 ms has always passed, so the job must be quarantined, never leased."""

from _claim_parts import NOT_VALID, claim_with
from _kit import reference_finish as finish
from _kit import work_once_with

EXPECT_FAIL = {"random-timelines"}
EXPECT_TEXT = {"random-timelines": "deadline=0, max_attempts=3"}

claim = claim_with(
    quarantine=(f"UPDATE jobs SET status = 'quarantined' WHERE {NOT_VALID}"
                " AND (attempts >= max_attempts OR (deadline > 0 AND deadline <= :now))"),
    select=(f"SELECT id FROM jobs WHERE {NOT_VALID} AND attempts < max_attempts"
            " AND (deadline = 0 OR deadline > :now) ORDER BY id LIMIT 1"),
    update=("UPDATE jobs SET status = 'leased', owner = :owner, token = token + 1,"
            " attempts = attempts + 1, lease_until = CASE deadline WHEN 0 THEN :now + :lease_ms"
            " ELSE MIN(:now + :lease_ms, deadline) END"
            " WHERE id = :id RETURNING id, qty, owner, token, attempts, lease_until"))
work_once = work_once_with(claim, finish)
