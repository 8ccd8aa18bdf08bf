"""claim keeps the new token and attempt count in 32-bit integers: past 2**31 - 1 they wrap
around to negative numbers.

A long-lived queue's counters pass 2**31 (a token is one more per claim, forever): the job's
next holder gets a token that is not one more than the last, and its stamp no longer orders
the generations of the lease."""

from _claim_parts import QUARANTINE, SELECT, claim_with
from _kit import reference_finish as finish
from _kit import work_once_with

EXPECT_FAIL = {"lowest-id-first", "random-timelines"}
EXPECT_TEXT = {"random-timelines": "token=2147483648"}


#: x + 1 as a signed 32-bit integer would hold it (C's int32_t, Java's int).
WRAPPED = "(({column} + 1 + 2147483648) % 4294967296) - 2147483648"

UPDATE = ("UPDATE jobs SET status = 'leased', owner = :owner,"
          f" token = {WRAPPED.format(column='token')},"
          f" attempts = {WRAPPED.format(column='attempts')},"
          " lease_until = MIN(:now + :lease_ms, deadline)"
          " WHERE id = :id RETURNING id, qty, owner, token, attempts, lease_until")

claim = claim_with(QUARANTINE, SELECT, UPDATE)
work_once = work_once_with(claim, finish)
