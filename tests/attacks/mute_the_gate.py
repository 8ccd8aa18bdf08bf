"""Attack: a claim in two transactions, and a race's gate that never hears of them.

The queue: claim reads the lowest claimable id in one BEGIN IMMEDIATE transaction and leases
that id in a second one (between the two another worker reads the same id: two real workers
double-claim). At import it patches the grader's target server, which today runs in the same
process, so that no statement of a gated claim (the race, the crash) is announced to the judge:
each runs as if the judge had said "free", so the race's lockstep forces nothing. What it
reports of its statements stays true. Each patch is tried on its own and may find nothing to
patch (the judge may own the database): the module still imports and its queue runs.

What must hold: check by check it scores no more than the same queue without the patches
(MUTE = False, its honest counterpart), in a single grade, in batch and in the Gradescope
bundle; the race fails for both. Self-contained: nothing of the reference or the tests is
imported."""

from lab.store import Claim

MUTE = True  # the trick; False: the same queue without it

NOT_VALID = "(status = 'pending' OR (status = 'leased' AND lease_until <= :now))"


def transaction(conn, sql, params):
    """One statement's first row, in a BEGIN IMMEDIATE transaction of its own."""
    conn.execute("BEGIN IMMEDIATE")
    try:
        row = conn.execute(sql, params).fetchone()
        conn.execute("COMMIT")
    except BaseException:
        if conn.in_transaction:
            conn.execute("ROLLBACK")
        raise
    return row


def claim(conn, owner, now, lease_ms):
    row = transaction(conn, f"SELECT id FROM jobs WHERE {NOT_VALID} AND attempts < max_attempts"
                      " AND deadline > :now ORDER BY id LIMIT 1", {"now": now})
    conn.execute("BEGIN IMMEDIATE")
    try:
        conn.execute(f"UPDATE jobs SET status = 'quarantined' WHERE {NOT_VALID}"
                     " AND (attempts >= max_attempts OR deadline <= :now)", {"now": now})
        stamp = None if row is None else conn.execute(
            "UPDATE jobs SET status = 'leased', owner = :owner, token = token + 1,"
            " attempts = attempts + 1, lease_until = MIN(:now + :lease, deadline)"
            " WHERE id = :id RETURNING id, qty, owner, token, attempts, lease_until",
            {"owner": owner, "now": now, "lease": lease_ms, "id": row[0]}).fetchone()
        conn.execute("COMMIT")
    except BaseException:
        if conn.in_transaction:
            conn.execute("ROLLBACK")
        raise
    return None if stamp is None else Claim(*stamp)


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


# -- the patches --------------------------------------------------------------------------------
def mute():
    from grader.harness.target import server as ts

    try:  # a gated claim's statements are never announced: "free" from the first
        trace = ts.Server.trace

        def quiet_trace(self, conn, sql):
            if self.stack:
                self.stack[-1].free = True
            return trace(self, conn, sql)
        ts.Server.trace = quiet_trace
    except Exception:
        pass
    try:  # and should one be asked about, the answer is "free" without asking
        ask = ts.Server.ask
        ts.Server.ask = lambda self, call, name, arg: "free" if name == "statement" \
            else ask(self, call, name, arg)
    except Exception:
        pass


if MUTE:
    try:
        mute()
    except Exception:
        pass
