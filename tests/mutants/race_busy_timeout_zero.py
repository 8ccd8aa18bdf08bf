"""claim sets `PRAGMA busy_timeout = 0`, so a second claimer does not wait for the write lock.

The transaction itself is the reference's, BEGIN IMMEDIATE first. But with no busy timeout, the
worker that reaches BEGIN IMMEDIATE while the other holds the write lock gets "database is locked"
at once instead of waiting its turn (waiting within the busy timeout is what the contract
expects). The race must say so, not blame a read before the write lock that never happens."""

from _claim_parts import all_steps, in_write_transaction
from _kit import reference_finish as finish
from _kit import work_once_with

EXPECT_FAIL = {"race-one-winner"}
EXPECT_TEXT = {"race-one-winner": "PRAGMA busy_timeout = 0"}
EXPECT_NO_TEXT = {"race-one-winner": "read first"}


def claim(conn, owner, now, lease_ms):
    conn.execute("PRAGMA busy_timeout = 0")  # "never wait": fail fast instead
    return in_write_transaction(conn, lambda: all_steps(conn, owner, now, lease_ms))


work_once = work_once_with(claim, finish)
