"""A correct implementation that decides in Python and scans with cursors.

claim reads the candidate rows through a cursor it iterates and leaves as soon as it found the
job (closing it: no statement left running), quarantines each due job with its own UPDATE,
and builds the Claim by reading the row back. finish rejects early, on each failed condition
its own branch, and every branch ends the transaction (ROLLBACK) before returning False.
work_once ignores what send returned, and reads the clock once more for a log line while
nothing is open. Numbers are compared with ==, at any size.
"""

from __future__ import annotations

from lab.store import Claim

_log: list[tuple] = []


def claim(conn, owner, now, lease_ms):
    conn.execute("BEGIN IMMEDIATE")
    try:
        due = [job for (job,) in conn.execute(
            "SELECT id FROM jobs WHERE (status = 'pending' OR (status = 'leased'"
            " AND lease_until <= ?)) AND (attempts >= max_attempts OR deadline <= ?)",
            (now, now)).fetchall()]
        for job in due:
            conn.execute("UPDATE jobs SET status = 'quarantined' WHERE id = ?", (job,))
        chosen = None
        cursor = conn.execute("SELECT id, status, lease_until, attempts, max_attempts, deadline"
                              " FROM jobs WHERE status IN ('pending', 'leased') ORDER BY id")
        try:
            for job, status, until, attempts, most, deadline in cursor:
                if (status == "pending" or until <= now) and attempts < most and now < deadline:
                    chosen = job
                    break
        finally:
            cursor.close()
        if chosen is None:
            conn.execute("COMMIT")
            return None
        conn.execute("UPDATE jobs SET status = 'leased', owner = ?, token = token + 1,"
                     " attempts = attempts + 1, lease_until = MIN(? + ?, deadline)"
                     " WHERE id = ?", (owner, now, lease_ms, chosen))
        row = conn.execute("SELECT id, qty, owner, token, attempts, lease_until FROM jobs"
                           " WHERE id = ?", (chosen,)).fetchone()
        conn.execute("COMMIT")
    except BaseException:
        if conn.in_transaction:
            conn.execute("ROLLBACK")
        raise
    return Claim(*row)


def finish(conn, claim, now):
    conn.execute("BEGIN IMMEDIATE")
    try:
        row = conn.execute("SELECT status, owner, token, attempts, lease_until, deadline"
                           " FROM jobs WHERE id = ?", (claim.id,)).fetchone()
        if row is None:
            conn.execute("ROLLBACK")
            return False
        status, owner, token, attempts, until, deadline = row
        if status != "leased" or owner != claim.owner:
            conn.execute("ROLLBACK")
            return False
        if token != claim.token or attempts != claim.attempt or until != claim.lease_until:
            conn.execute("ROLLBACK")
            return False
        if not (now < until and now < deadline):  # the deadline may have moved under the lease
            conn.execute("ROLLBACK")
            return False
        conn.execute("UPDATE jobs SET status = 'done', finished_at = ? WHERE id = ?",
                     (now, claim.id))
        conn.execute("COMMIT")
        return True
    except BaseException:
        if conn.in_transaction:
            conn.execute("ROLLBACK")
        raise


def work_once(conn, owner, send, clock, lease_ms):
    c = claim(conn, owner, clock(), lease_ms)
    if c is None:
        return None
    reply = send(c)  # whatever it says, the delivery happened: finish decides
    _log.append((c.id, reply, clock()))
    return finish(conn, c, clock())
