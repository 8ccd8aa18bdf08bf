"""claim opens its transaction with a plain (deferred) BEGIN and reads before it writes.

Alone it is correct. With two workers, both take a read lock at the SELECT; when both then try
to write, each would wait for the other's read lock: SQLite answers "database is locked" at once
to one of them (the busy timeout does not help), where BEGIN IMMEDIATE would have made it wait
its turn."""

from _claim_parts import QUARANTINE, lease, select, transaction
from _kit import reference_finish as finish
from _kit import work_once_with

EXPECT_FAIL = {"claim-in-one-immediate-transaction", "race-one-winner"}
EXPECT_TEXT = {"race-one-winner": "database is locked"}


def claim(conn, owner, now, lease_ms):
    def body():
        job = select(conn, now)  # the read lock first ...
        conn.execute(QUARANTINE, {"now": now})  # ... then the upgrade to the write lock
        return None if job is None else lease(conn, job, owner, now, lease_ms)

    return transaction(conn, "BEGIN", body)


work_once = work_once_with(claim, finish)
