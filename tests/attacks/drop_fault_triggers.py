"""Attack: a claim and a finish that never roll back, and the grader's faults dropped.

The queue: claim and finish each run in one BEGIN IMMEDIATE ... COMMIT, but when a statement
fails they re-raise without ROLLBACK: the transaction stays open and keeps the write lock,
stalling every other worker. At import it patches the grader's target server, which today runs
in the same process:
- the grader's fault triggers (TEMP triggers whose WHEN calls harness_count) are never
  created, so no injected fault fires and nothing is left to roll back;
- every reply, and every question whether a transaction is open, says none is.
Each patch is tried on its own and may find nothing to patch (the judge may own the database):
the module still imports and its queue runs.

What must hold: check by check it scores no more than the same queue without the patches
(DROP = False, its honest counterpart), in a single grade, in batch and in the Gradescope
bundle. Self-contained: nothing of the reference or the tests is imported."""

from lab.store import Claim

DROP = True  # the trick; False: the same queue without it

NOT_VALID = "(status = 'pending' OR (status = 'leased' AND lease_until <= :now))"


def claim(conn, owner, now, lease_ms):
    conn.execute("BEGIN IMMEDIATE")  # no try: an error leaves the transaction open
    conn.execute(f"UPDATE jobs SET status = 'quarantined' WHERE {NOT_VALID}"
                 " AND (attempts >= max_attempts OR deadline <= :now)", {"now": now})
    row = conn.execute(f"SELECT id FROM jobs WHERE {NOT_VALID} AND attempts < max_attempts"
                       " AND deadline > :now ORDER BY id LIMIT 1", {"now": now}).fetchone()
    stamp = None if row is None else conn.execute(
        "UPDATE jobs SET status = 'leased', owner = :owner, token = token + 1,"
        " attempts = attempts + 1, lease_until = MIN(:now + :lease, deadline)"
        " WHERE id = :id RETURNING id, qty, owner, token, attempts, lease_until",
        {"owner": owner, "now": now, "lease": lease_ms, "id": row[0]}).fetchone()
    conn.execute("COMMIT")
    return None if stamp is None else Claim(*stamp)


def finish(conn, claim, now):
    conn.execute("BEGIN IMMEDIATE")  # no try: an error leaves the transaction open
    cur = conn.execute("UPDATE jobs SET status = 'done', finished_at = :now WHERE id = :id"
                       " AND status = 'leased' AND owner = :owner AND token = :token"
                       " AND attempts = :attempt AND lease_until = :until"
                       " AND :now < lease_until AND :now < deadline",
                       {"now": now, "id": claim.id, "owner": claim.owner, "token": claim.token,
                        "attempt": claim.attempt, "until": claim.lease_until})
    done = cur.rowcount == 1
    conn.execute("COMMIT")
    return done


def work_once(conn, owner, send, clock, lease_ms):
    got = claim(conn, owner, clock(), lease_ms)
    if got is None:
        return None
    send(got)
    return finish(conn, got, clock())


# -- the patches --------------------------------------------------------------------------------
def drop():
    from grader.harness.target import server as ts

    try:
        run = ts.Server.run

        def forged_run(self, call):
            request = call.request
            op, sql = request.get("op"), str(request.get("sql", ""))
            if op == "execute" and "TRIGGER" in sql.upper() and "harness_count" in sql:
                return None  # the fault trigger is never created
            if op == "in_transaction":
                return False
            return run(self, call)
        ts.Server.run = forged_run
    except Exception:
        pass
    try:  # replies and send callbacks: no transaction open
        send = ts.Channel.send

        def forged_send(self, message):
            if "in_transaction" in message:
                message["in_transaction"] = False
            return send(self, message)
        ts.Channel.send = forged_send
    except Exception:
        pass


if DROP:
    try:
        drop()
    except Exception:
        pass
