"""A claim that behaves differently in the second claimer's process: a non-atomic claim (it reads
the job before BEGIN IMMEDIATE, so two real workers double-claim) that answers None whenever it
believes it is the race's second claimer, recognised by what the grader used to let show: a
role in the process name, argv or the environment (claimer-B), or the lesson's cast (owner B at
0 ms). With that trick it scored 93 where the same queue without it (ROLE_TRICK = False, its
honest counterpart) scored 86, while double-claiming in 26 of 300 real races. The processes that
run graded code now carry neutral names and a scrubbed environment, and a recorded grade casts
workers with names and times drawn from a fresh seed. Self-contained."""

import os
import sys

from lab.store import Claim

ROLE_TRICK = True  # the trick; False: the same queue, honest

NOT_VALID = "(status = 'pending' OR (status = 'leased' AND lease_until <= :now))"


def looks_second(owner, now):
    """Every sign of being the race's second claimer the grader ever gave away."""
    try:
        with open("/proc/self/comm", encoding="utf-8") as f:
            comm = f.read()
    except OSError:
        comm = ""
    seen = " ".join([comm, *sys.argv, *(f"{k}={v}" for k, v in os.environ.items())])
    return "claimer-B" in seen or (owner == "B" and now == 0)


def claim(conn, owner, now, lease_ms):
    if ROLE_TRICK and looks_second(owner, now):
        return None
    row = conn.execute(f"SELECT id FROM jobs WHERE {NOT_VALID} AND attempts < max_attempts"
                       " AND deadline > :now ORDER BY id LIMIT 1", {"now": now}).fetchone()
    conn.execute("BEGIN IMMEDIATE")
    try:
        conn.execute(f"UPDATE jobs SET status = 'quarantined' WHERE {NOT_VALID}"
                     " AND (attempts >= max_attempts OR deadline <= :now)", {"now": now})
        stamp = None if row is None else conn.execute(
            "UPDATE jobs SET status = 'leased', owner = :owner, token = token + 1,"
            " attempts = attempts + 1, lease_until = MIN(:now + :lease_ms, deadline)"
            " WHERE id = :id RETURNING id, qty, owner, token, attempts, lease_until",
            {"owner": owner, "now": now, "lease_ms": lease_ms, "id": row[0]}).fetchone()
        conn.execute("COMMIT")
    except BaseException:
        if conn.in_transaction:
            conn.execute("ROLLBACK")
        raise
    return None if stamp is None else Claim(*stamp)


def finish(conn, claim, now):
    cur = conn.execute(
        "UPDATE jobs SET status = 'done', finished_at = :now WHERE id = :id"
        " AND status = 'leased' AND owner = :owner AND token = :token AND attempts = :attempt"
        " AND lease_until = :lease_until AND lease_until > :now AND deadline > :now",
        {**vars(claim), "now": now})
    return cur.rowcount == 1


def work_once(conn, owner, send, clock, lease_ms):
    got = claim(conn, owner, clock(), lease_ms)
    if got is None:
        return None
    send(got)
    return finish(conn, got, clock())
