"""Attack: a claim that makes the race's lockstep give up, so that nothing is forced.

The claim reads the pending job before BEGIN IMMEDIATE and updates it by id (two real workers
double-claim). In the race, each claimer leaves its pid in a table of its own in the database
(the only thing the two share) and reads the other's; the one with the lower pid then stops for
longer than the lockstep (the race's policy then) waited for a process that held no lock (5 s).
The lockstep gave up, both claims ran freely, the other claimer finished alone, and the race
passed: +7 where the same claim without the stall (STALL = False, its honest counterpart) fails
the race. The explorer's schedule has the same limit for code of its own between statements
(grader.harness.judge.explore.PAUSE_WAIT); a race whose schedule was given up is now a failure with
its own diagnosis.
Self-contained: nothing of the reference or the tests is imported."""

import os
import time

from lab.store import Claim

STALL = True  # the trick; False: the same claim without it
STALL_SECONDS = 8  # the lockstep waits at most 5 s for a process that holds no write lock

NOT_VALID = "(status = 'pending' OR (status = 'leased' AND lease_until <= :now))"
stalled = False


def stall(conn) -> None:
    """Once a process: the claimer with the lower pid of two in this folder stops a while."""
    global stalled
    if stalled:
        return
    stalled = True
    # the two claimers share nothing but the database (neither may touch its folder): each
    # leaves its pid in a table of its own there and reads the other's (the lockstep runs both
    # INSERTs before either SELECT)
    conn.execute("CREATE TABLE IF NOT EXISTS claimers (pid INTEGER)")
    conn.execute("INSERT INTO claimers VALUES (?)", (os.getpid(),))
    others = [pid for (pid,) in conn.execute("SELECT pid FROM claimers") if pid != os.getpid()]
    if others and os.getpid() < min(others):
        time.sleep(STALL_SECONDS)


def claim(conn, owner, now, lease_ms):
    if STALL:
        stall(conn)
    row = conn.execute(f"SELECT id FROM jobs WHERE {NOT_VALID} AND attempts < max_attempts"
                       " AND deadline > :now ORDER BY id LIMIT 1", {"now": now}).fetchone()
    conn.execute("BEGIN IMMEDIATE")
    try:
        conn.execute(f"UPDATE jobs SET status = 'quarantined' WHERE {NOT_VALID}"
                     " AND (attempts >= max_attempts OR deadline <= :now)", {"now": now})
        got = None
        if row is not None:
            got = conn.execute("UPDATE jobs SET status = 'leased', owner = :owner,"
                               " token = token + 1, attempts = attempts + 1,"
                               " lease_until = min(:now + :lease, deadline) WHERE id = :id"
                               " RETURNING id, qty, owner, token, attempts, lease_until",
                               {"owner": owner, "now": now, "lease": lease_ms,
                                "id": row[0]}).fetchone()
        conn.execute("COMMIT")
    except BaseException:
        if conn.in_transaction:
            conn.execute("ROLLBACK")
        raise
    return None if got is None else Claim(*got)


def finish(conn, claim, now):
    cur = conn.execute("UPDATE jobs SET status = 'done', finished_at = :now WHERE id = :id"
                       " AND status = 'leased' AND owner = :owner AND token = :token"
                       " AND attempts = :attempt AND lease_until = :until"
                       " AND :now < lease_until AND :now < deadline",
                       {"now": now, "id": claim.id, "owner": claim.owner, "token": claim.token,
                        "attempt": claim.attempt, "until": claim.lease_until})
    return cur.rowcount == 1


def work_once(conn, owner, send, clock, lease_ms):
    got = claim(conn, owner, clock(), lease_ms)
    if got is None:
        return None
    send(got)
    return finish(conn, got, clock())
