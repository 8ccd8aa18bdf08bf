"""A correct implementation whose claim is two statements: one UPDATE that quarantines every
due job, and one UPDATE ... RETURNING that selects and leases the lowest claimable id in a
subquery; finish is one conditional UPDATE whose changed-row count is the answer. work_once
sends on a helper thread, waits for it, and only then reads the finishing clock.
"""

from __future__ import annotations

import threading

from lab.store import Claim

FREE = "(status = 'pending' OR (status = 'leased' AND lease_until <= :now))"


def claim(conn, owner, now, lease_ms):
    conn.execute("BEGIN IMMEDIATE")
    try:
        conn.execute(f"UPDATE jobs SET status = 'quarantined' WHERE {FREE}"
                     " AND (attempts >= max_attempts OR deadline <= :now)", {"now": now})
        rows = conn.execute(
            "UPDATE jobs SET status = 'leased', owner = :owner, token = token + 1,"
            " attempts = attempts + 1, lease_until = MIN(:now + :lease_ms, deadline)"
            f" WHERE id = (SELECT id FROM jobs WHERE {FREE} AND attempts < max_attempts"
            " AND deadline > :now ORDER BY id LIMIT 1)"
            " RETURNING id, qty, owner, token, attempts, lease_until",
            {"owner": owner, "now": now, "lease_ms": lease_ms}).fetchall()
        conn.execute("COMMIT")
    except BaseException:
        if conn.in_transaction:
            conn.execute("ROLLBACK")
        raise
    return Claim(*rows[0]) if rows else None


def finish(conn, claim, now):
    cursor = conn.execute(
        "UPDATE jobs SET status = 'done', finished_at = :now WHERE id = :id"
        " AND status = 'leased' AND owner = :owner AND token = :token AND attempts = :attempt"
        " AND lease_until = :lease_until AND :now < lease_until AND :now < deadline",
        {"now": now, "id": claim.id, "owner": claim.owner, "token": claim.token,
         "attempt": claim.attempt, "lease_until": claim.lease_until})
    return cursor.rowcount == 1


def work_once(conn, owner, send, clock, lease_ms):
    c = claim(conn, owner, clock(), lease_ms)
    if c is None:
        return None
    failure = []

    def deliver():
        try:
            send(c)
        except BaseException as exc:
            failure.append(exc)

    helper = threading.Thread(target=deliver)
    helper.start()
    helper.join()
    if failure:
        raise failure[0]
    return finish(conn, c, clock())
