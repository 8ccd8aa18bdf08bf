"""claim keeps the cursor of its candidates' SELECT in a global, read only to its first row.

The statement is still running when claim returns (every row after the first unread): it
keeps a read lock on the database, so no other worker can commit a write."""

from _claim_parts import NOT_VALID, lease, quarantine, transaction
from _kit import reference_finish as finish
from _kit import work_once_with

EXPECT_FAIL = {"claim-lowest-id"}
MAY_FAIL = {"random-timelines"}
EXPECT_TEXT = {"claim-lowest-id": "still running"}

_kept = []


def claim(conn, owner, now, lease_ms):
    def body():
        quarantine(conn, now)
        return None

    transaction(conn, "BEGIN IMMEDIATE", body)
    conn.execute("BEGIN IMMEDIATE")
    try:
        cursor = conn.execute(f"SELECT id FROM jobs WHERE {NOT_VALID} AND attempts < max_attempts"
                              " AND deadline > :now ORDER BY id", {"now": now})
        first = cursor.fetchone()
        result = None if first is None else lease(conn, first[0], owner, now, lease_ms)
        conn.execute("COMMIT")
    except BaseException:
        if conn.in_transaction:
            conn.execute("ROLLBACK")
        raise
    _kept.append(cursor)
    return result


work_once = work_once_with(claim, finish)
