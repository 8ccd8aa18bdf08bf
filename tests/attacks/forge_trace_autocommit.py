"""Attack: a claim with no transaction at all, and a grader told it had one.

The queue: claim runs in autocommit (its quarantine UPDATE, then a SELECT of the lowest
claimable id, then an UPDATE of that id: two real workers that both read before either writes
double-claim). At import it patches the grader's target server, which today runs in the same
process, so that what the judge is told of the call is the reference's:
- every reply to a claim lists its statements inside BEGIN IMMEDIATE ... COMMIT;
- every reply and send callback says no transaction is open, and no connection of its own;
- no statement of a gated claim (the race, the crash) is announced to the judge: each runs as
  if the judge had said "free" (so nothing is forced, and nothing killed);
- every count of a fault trigger's firings has gone up since the last one.
Each patch is tried on its own and may find nothing to patch (the judge may own the database):
the module still imports and its queue runs.

What must hold: check by check it scores no more than the same queue without the patches
(FORGE = False, its honest counterpart), in a single grade, in batch and in the Gradescope
bundle. Self-contained: nothing of the reference or the tests is imported."""

from lab.store import Claim

FORGE = True  # the trick; False: the same queue without it

NOT_VALID = "(status = 'pending' OR (status = 'leased' AND lease_until <= :now))"
CALLS = ("claim", "finish", "work_once")


def claim(conn, owner, now, lease_ms):
    conn.execute(f"UPDATE jobs SET status = 'quarantined' WHERE {NOT_VALID}"
                 " AND (attempts >= max_attempts OR deadline <= :now)", {"now": now})
    row = conn.execute(f"SELECT id FROM jobs WHERE {NOT_VALID} AND attempts < max_attempts"
                       " AND deadline > :now ORDER BY id LIMIT 1", {"now": now}).fetchone()
    if row is None:
        return None
    stamp = conn.execute("UPDATE jobs SET status = 'leased', owner = :owner, token = token + 1,"
                         " attempts = attempts + 1, lease_until = MIN(:now + :lease, deadline)"
                         " WHERE id = :id RETURNING id, qty, owner, token, attempts, lease_until",
                         {"owner": owner, "now": now, "lease": lease_ms, "id": row[0]}).fetchone()
    return Claim(*stamp)


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
def reshaped(statements):
    """[conn, sql] pairs as the reference's claim runs them: inside one BEGIN IMMEDIATE."""
    if not statements or any(sql.upper().startswith("BEGIN") for _, sql in statements):
        return statements
    conn = statements[0][0]
    return [[conn, "BEGIN IMMEDIATE"], *statements, [conn, "COMMIT"]]


def forge():
    from grader.harness.target import server as ts

    server = ts.Server
    try:  # replies to claim: the reference's statements
        reply = server.reply

        def forged_reply(self, call, message, *rest):
            if call.request.get("op") == "claim":
                call.statements[:] = reshaped(call.statements)
            return reply(self, call, message, *rest)
        server.reply = forged_reply
    except Exception:
        pass
    try:  # every message out: no transaction open, no connection of its own
        send = ts.Channel.send

        def forged_send(self, message):
            if "in_transaction" in message:
                message["in_transaction"] = False
            message.pop("own_connections", None)
            return send(self, message)
        ts.Channel.send = forged_send
    except Exception:
        pass
    try:
        from grader.harness.target import filewatch

        filewatch.FileWatch.take = lambda self: []
    except Exception:
        pass
    try:  # the gate: never announce a statement, as if the judge had said "free"
        trace = server.trace

        def quiet_trace(self, conn, sql):
            if self.stack:
                self.stack[-1].free = True
            return trace(self, conn, sql)
        server.trace = quiet_trace
    except Exception:
        pass
    try:
        ask = server.ask
        server.ask = lambda self, call, name, arg: "free" if name == "statement" \
            else ask(self, call, name, arg)
    except Exception:
        pass
    try:  # fault triggers: each count a little higher than the last
        run, asked = server.run, [0]

        def forged_run(self, call):
            value = run(self, call)
            if call.request.get("op") == "count" and type(value) is int:
                asked[0] += 1
                return value + asked[0]
            return value
        server.run = forged_run
    except Exception:
        pass


if FORGE:
    try:
        forge()
    except Exception:
        pass
