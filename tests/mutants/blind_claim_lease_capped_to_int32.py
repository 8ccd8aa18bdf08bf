"""claim caps lease_ms at 2**31 - 1 ms, the largest delay a 32-bit timer takes.

About 24.8 days: a longer lease is silently cut (as JavaScript's setTimeout would), so a job
claimed for longer comes free early and another worker can take it while the first still works."""

from _claim_parts import all_steps, in_write_transaction
from _kit import reference_finish as finish
from _kit import work_once_with

EXPECT_FAIL = {"random-timelines"}
EXPECT_TEXT = {"random-timelines": "; the contract gives lease_until = min(now + lease_ms, deadline)"}

INT32_MAX = 2 ** 31 - 1


def claim(conn, owner, now, lease_ms):
    lease_ms = min(lease_ms, INT32_MAX)
    return in_write_transaction(conn, lambda: all_steps(conn, owner, now, lease_ms))


work_once = work_once_with(claim, finish)
