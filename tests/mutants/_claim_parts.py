"""SQL pieces of the reference claim, for mutants that only move them around (race, crash).

Mutants built from these behave exactly like the reference when a single worker runs alone;
only the transaction boundaries differ, which is what the race and crash checks are about."""

from __future__ import annotations

from lab.store import Claim

#: A job whose lease is not valid at :now (never claimed, or its lease has run out).
LEASE_NOT_VALID = "(status = 'pending' OR (status = 'leased' AND lease_until <= :now))"

QUARANTINE = (f"UPDATE jobs SET status = 'quarantined' WHERE {LEASE_NOT_VALID}"
              " AND (attempts >= max_attempts OR deadline <= :now)")
SELECT_CLAIMABLE = (f"SELECT id FROM jobs WHERE {LEASE_NOT_VALID}"
                    " AND attempts < max_attempts AND deadline > :now ORDER BY id LIMIT 1")
LEASE = ("UPDATE jobs SET status = 'leased', owner = :owner, token = token + 1,"
         " attempts = attempts + 1, lease_until = MIN(:now + :lease_ms, deadline)"
         " WHERE id = :id RETURNING id, qty, owner, token, attempts, lease_until")


def select_claimable(conn, now: int) -> int | None:
    row = conn.execute(SELECT_CLAIMABLE, {"now": now}).fetchone()
    return None if row is None else row[0]


def lease(conn, job: int, owner: str, now: int, lease_ms: int) -> Claim:
    stamp = conn.execute(LEASE, {"owner": owner, "now": now, "lease_ms": lease_ms,
                                 "id": job}).fetchone()
    return Claim(*stamp)


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
