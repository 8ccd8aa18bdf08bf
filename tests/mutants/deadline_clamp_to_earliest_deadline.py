"""claim cuts the lease at the earliest deadline in the whole queue, not at its own job's.

lease_until = min(now + lease_ms, deadline) names the claimed job's own deadline. Taking
MIN(deadline) over every job instead cuts a lease short whenever another job is due sooner; the
report must explain it by the lease_until rule (the row's lease_until against min(now + lease_ms,
its deadline)), not as a quarantine problem."""

from _claim_parts import claim_with
from _kit import reference_finish as finish
from _kit import work_once_with

UPDATE = ("UPDATE jobs SET status = 'leased', owner = :owner, token = token + 1,"
          " attempts = attempts + 1,"
          " lease_until = MIN(:now + :lease_ms, (SELECT MIN(deadline) FROM jobs))"  # the bug
          " WHERE id = :id RETURNING id, qty, owner, token, attempts, lease_until")

claim = claim_with(update=UPDATE)
work_once = work_once_with(claim, finish)

EXPECT_FAIL = {"skips-done-and-quarantined", "quarantine-past-deadline", "random-timelines"}
EXPECT_TEXT = {"quarantine-past-deadline": "which is the deadline of job {id:1},"
                                           " another job; the contract gives lease_until ="
                                           " min(now + lease_ms, deadline)",
               "skips-done-and-quarantined": "which is the deadline of job {id:1}, another job"}
EXPECT_NO_TEXT = {"quarantine-past-deadline": "after quarantining the jobs past their deadline",
                  "skips-done-and-quarantined": "must never be claimed"}
# issue 38: every call is also held to the contract's rules after it (no transaction or
# statement left open, every row as the model makes it), at the domain's sizes
MAY_FAIL = {'claim-rolls-back-on-error'}
