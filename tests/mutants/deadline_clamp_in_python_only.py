"""claim clamps lease_until to the deadline in the Claim only; the row keeps the unclamped value.

The Claim is computed in Python instead of read back from the row, so the stamp and the row
disagree and even the holder's own honest finish is rejected."""

from _claim_parts import NOT_VALID, QUARANTINE, in_write_transaction
from _kit import reference_finish as finish
from _kit import work_once_with

from lab.store import Claim

EXPECT_FAIL = {"deadline-clamp", "finish-at-deadline"}
MAY_FAIL = {"random-timelines"}  # the same bug, met again on a random timeline


def claim(conn, owner, now, lease_ms):
    def body():
        conn.execute(QUARANTINE, {"now": now})
        row = conn.execute(
            f"SELECT id, qty, token, attempts, deadline FROM jobs WHERE {NOT_VALID}"
            " AND attempts < max_attempts AND deadline > :now ORDER BY id LIMIT 1",
            {"now": now}).fetchone()
        if row is None:
            return None
        job, qty, token, attempts, deadline = row
        conn.execute("UPDATE jobs SET status = 'leased', owner = ?, token = ?, attempts = ?,"
                     " lease_until = ? WHERE id = ?",
                     (owner, token + 1, attempts + 1, now + lease_ms, job))
        return Claim(job, qty, owner, token + 1, attempts + 1, min(now + lease_ms, deadline))

    return in_write_transaction(conn, body)


work_once = work_once_with(claim, finish)
