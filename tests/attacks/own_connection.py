"""A claim that works on a connection of its own: it reads the database's path with PRAGMA
database_list on the connection it is given, opens a second connection to that file and there
reads the job before BEGIN IMMEDIATE, then updates it by id (not atomic: two real workers
double-claim). The grader's trace, the race's lockstep and the crash's kill points hang on the
connection it was given and saw only the PRAGMA: this scored 100 where the same queue on the
given connection (OWN_CONNECTION = False, its honest counterpart) scores 86. The target process
now sees the second connection to the file (grader.harness.target.filewatch).
Self-contained: nothing of the reference or the tests is imported."""

import sqlite3

from lab.store import BUSY_TIMEOUT_MS, Claim

OWN_CONNECTION = True  # the trick; False: the same queue on the connection it is given

NOT_VALID = "(status = 'pending' OR (status = 'leased' AND lease_until <= :now))"


def claim(conn, owner, now, lease_ms):
    db = conn
    if OWN_CONNECTION:
        path = conn.execute("PRAGMA database_list").fetchone()[2]
        db = sqlite3.connect(path, timeout=BUSY_TIMEOUT_MS / 1000, isolation_level=None)
    try:
        row = db.execute(f"SELECT id FROM jobs WHERE {NOT_VALID} AND attempts < max_attempts"
                         " AND deadline > :now ORDER BY id LIMIT 1", {"now": now}).fetchone()
        db.execute("BEGIN IMMEDIATE")
        try:
            db.execute(f"UPDATE jobs SET status = 'quarantined' WHERE {NOT_VALID}"
                       " AND (attempts >= max_attempts OR deadline <= :now)", {"now": now})
            stamp = None if row is None else db.execute(
                "UPDATE jobs SET status = 'leased', owner = :owner, token = token + 1,"
                " attempts = attempts + 1, lease_until = MIN(:now + :lease_ms, deadline)"
                " WHERE id = :id RETURNING id, qty, owner, token, attempts, lease_until",
                {"owner": owner, "now": now, "lease_ms": lease_ms, "id": row[0]}).fetchone()
            db.execute("COMMIT")
        except BaseException:
            if db.in_transaction:
                db.execute("ROLLBACK")
            raise
        return None if stamp is None else Claim(*stamp)
    finally:
        if db is not conn:
            db.close()


def finish(conn, claim, now):
    cur = conn.execute(
        "UPDATE jobs SET status = 'done', finished_at = :now"
        " WHERE id = :id AND status = 'leased' AND owner = :owner AND token = :token"
        " AND attempts = :attempt AND lease_until = :lease_until"
        " AND :now < lease_until AND :now < deadline",
        {"now": now, "id": claim.id, "owner": claim.owner, "token": claim.token,
         "attempt": claim.attempt, "lease_until": claim.lease_until})
    return cur.rowcount == 1


def work_once(conn, owner, send, clock, lease_ms):
    c = claim(conn, owner, clock(), lease_ms)
    if c is None:
        return None
    send(c)
    return finish(conn, c, clock())
