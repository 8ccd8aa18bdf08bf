"""Shared parts for claim mutants: the reference claim's three statements, and `claim_with`,
which builds a claim from them with one statement swapped for a buggy one.

Each mutant then shows only its bug, e.g. `claim = claim_with(select=SELECT.replace(...))`.
"""

from __future__ import annotations

from lab.store import Claim

#: A job whose lease is not valid at :now (never claimed, or its lease has run out).
NOT_VALID = "(status = 'pending' OR (status = 'leased' AND lease_until <= :now))"

QUARANTINE = (f"UPDATE jobs SET status = 'quarantined' WHERE {NOT_VALID}"
              " AND (attempts >= max_attempts OR deadline <= :now)")
SELECT = (f"SELECT id FROM jobs WHERE {NOT_VALID}"
          " AND attempts < max_attempts AND deadline > :now ORDER BY id LIMIT 1")
UPDATE = ("UPDATE jobs SET status = 'leased', owner = :owner, token = token + 1,"
          " attempts = attempts + 1, lease_until = MIN(:now + :lease_ms, deadline)"
          " WHERE id = :id RETURNING id, qty, owner, token, attempts, lease_until")


def in_write_transaction(conn, body):
    """Run `body()` inside BEGIN IMMEDIATE ... COMMIT (ROLLBACK and re-raise on error)."""
    conn.execute("BEGIN IMMEDIATE")
    try:
        result = body()
        conn.execute("COMMIT")
    except BaseException:
        if conn.in_transaction:
            conn.execute("ROLLBACK")
        raise
    return result


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
