"""claim takes the job (new token) first and quarantines it only once it went over max_attempts.

"Claim, then check" burns a token on a job that had no attempt left: the quarantined row carries a
generation nobody ever held."""

from _claim_parts import NOT_VALID, UPDATE, in_write_transaction
from _kit import reference_finish as finish
from _kit import work_once_with

from lab.store import Claim

EXPECT_FAIL = {"quarantine-before-new-token"}
# collateral: these checks quarantine a spent job in their setup, and the bug gives it a token first
MAY_FAIL = {"requeue-token-increases", "skips-done-and-quarantined", "random-timelines"}


def claim(conn, owner, now, lease_ms):
    params = {"owner": owner, "now": now, "lease_ms": lease_ms}

    def body():
        conn.execute(f"UPDATE jobs SET status = 'quarantined' WHERE {NOT_VALID}"
                     " AND deadline <= :now", params)
        while True:
            row = conn.execute(f"SELECT id FROM jobs WHERE {NOT_VALID} AND deadline > :now"
                               " ORDER BY id LIMIT 1", params).fetchone()
            if row is None:
                return None
            stamp = conn.execute(UPDATE, {**params, "id": row[0]}).fetchone()
            over = conn.execute("SELECT attempts > max_attempts FROM jobs WHERE id = ?",
                                (row[0],)).fetchone()[0]
            if not over:
                return Claim(*stamp)
            conn.execute("UPDATE jobs SET status = 'quarantined' WHERE id = ?", (row[0],))

    return in_write_transaction(conn, body)


work_once = work_once_with(claim, finish)
