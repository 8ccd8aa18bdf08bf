"""The reference claim in parts, for mutants whose one bug is in one statement or in how the
statements are wrapped (BEGIN, COMMIT, ROLLBACK, what runs in between).

- the statements: QUARANTINE, SELECT, UPDATE (named parameters :owner, :now, :lease_ms, :id);
- the steps over them: `quarantine`, `select`, `lease`, `all_steps`;
- `transaction(conn, begin, body)`: begin, body(), COMMIT; roll back and re-raise on error;
- `claim_with(...)`: the reference claim with one statement swapped for a buggy one.

Mutants built from these behave exactly like the reference except for their one bug.
"""

from __future__ import annotations

from lab.store import Claim

#: A job whose lease is not valid at :now (never claimed, or its lease has run out).
NOT_VALID = "(status = 'pending' OR (status = 'leased' AND lease_until <= :now))"

QUARANTINE = (f"UPDATE jobs SET status = 'quarantined' WHERE {NOT_VALID}"
              " AND (attempts >= max_attempts OR deadline <= :now)")


def quarantine_batch(limit: int) -> str:
    """The reference's quarantine, but of at most `limit` jobs a call (one batch, lowest ids
    first): the scale mutants' statement (`claim_with(quarantine_batch(500))`)."""
    return (f"UPDATE jobs SET status = 'quarantined' WHERE id IN (SELECT id FROM jobs WHERE"
            f" {NOT_VALID} AND (attempts >= max_attempts OR deadline <= :now) ORDER BY id"
            f" LIMIT {limit})")


SELECT = (f"SELECT id FROM jobs WHERE {NOT_VALID}"
          " AND attempts < max_attempts AND deadline > :now ORDER BY id LIMIT 1")
UPDATE = ("UPDATE jobs SET status = 'leased', owner = :owner, token = token + 1,"
          " attempts = attempts + 1, lease_until = MIN(:now + :lease_ms, deadline)"
          " WHERE id = :id RETURNING id, qty, owner, token, attempts, lease_until")


def quarantine(conn, now: int) -> None:
    conn.execute(QUARANTINE, {"now": now})


def select(conn, now: int) -> int | None:
    row = conn.execute(SELECT, {"now": now}).fetchone()
    return None if row is None else row[0]


#: The live rows with what the lease's expiry needs, lowest ids first: the scale mutants read a
#: few of them and decide in Python (`first_claimable`).
LIVE_ROWS = ("SELECT id, status, lease_until, attempts, max_attempts, deadline FROM jobs"
             " WHERE status IN ('pending', 'leased') ORDER BY id")


def first_claimable(rows, now: int) -> int | None:
    """The first of `rows` (as LIVE_ROWS gives them) whose lease is not valid at `now` and
    that has attempts and time left, decided in Python; None if none of them is."""
    for job, status, until, attempts, max_attempts, deadline in rows:
        if (status == "pending" or until <= now) and attempts < max_attempts and deadline > now:
            return job
    return None


def lease(conn, job: int, owner: str, now: int, lease_ms: int) -> Claim:
    stamp = conn.execute(UPDATE, {"owner": owner, "now": now, "lease_ms": lease_ms,
                                  "id": job}).fetchone()
    return Claim(*stamp)


def all_steps(conn, owner: str, now: int, lease_ms: int) -> Claim | None:
    """Quarantine, select, lease: the body of the reference claim's transaction."""
    quarantine(conn, now)
    job = select(conn, now)
    return None if job is None else lease(conn, job, owner, now, lease_ms)


def transaction(conn, begin: str, body):
    """`begin`, run `body()`, COMMIT; on any error roll back and re-raise."""
    conn.execute(begin)
    try:
        result = body()
        conn.execute("COMMIT")
    except BaseException:
        if conn.in_transaction:
            conn.execute("ROLLBACK")
        raise
    return result


def in_write_transaction(conn, body):
    return transaction(conn, "BEGIN IMMEDIATE", body)


def claim_with(quarantine: str | None = QUARANTINE, select: str = SELECT, update: str = UPDATE):
    """The reference claim, with the given statements in place of its own (None: no quarantine
    step at all)."""

    def claim(conn, owner, now, lease_ms):
        params = {"owner": owner, "now": now, "lease_ms": lease_ms}

        def body():
            if quarantine is not None:
                conn.execute(quarantine, params)
            row = conn.execute(select, params).fetchone()
            if row is None:
                return None
            return Claim(*conn.execute(update, {**params, "id": row[0]}).fetchone())

        return in_write_transaction(conn, body)

    return claim
