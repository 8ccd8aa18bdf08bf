"""The reference claim's three statements without its transaction control.

For mutants whose one bug is in how the statements are wrapped (BEGIN, COMMIT, ROLLBACK,
what runs in between), not in the statements themselves: each such mutant writes its own
transaction control around these and nothing else differs from the reference.
"""

from __future__ import annotations

from lab.store import Claim

_LEASE_NOT_VALID = "(status = 'pending' OR (status = 'leased' AND lease_until <= :now))"


def quarantine(conn, now: int) -> None:
    conn.execute(
        f"UPDATE jobs SET status = 'quarantined' WHERE {_LEASE_NOT_VALID}"
        " AND (attempts >= max_attempts OR deadline <= :now)",
        {"now": now},
    )


def select(conn, now: int) -> int | None:
    row = conn.execute(
        f"SELECT id FROM jobs WHERE {_LEASE_NOT_VALID}"
        " AND attempts < max_attempts AND deadline > :now ORDER BY id LIMIT 1",
        {"now": now},
    ).fetchone()
    return None if row is None else row[0]


def lease(conn, job: int, owner: str, now: int, lease_ms: int) -> Claim:
    stamp = conn.execute(
        "UPDATE jobs SET status = 'leased', owner = :owner, token = token + 1,"
        " attempts = attempts + 1, lease_until = MIN(:now + :lease_ms, deadline)"
        " WHERE id = :id RETURNING id, qty, owner, token, attempts, lease_until",
        {"owner": owner, "now": now, "lease_ms": lease_ms, "id": job},
    ).fetchone()
    return Claim(*stamp)


def all_steps(conn, owner: str, now: int, lease_ms: int) -> Claim | None:
    """Quarantine, select, lease: the body of the reference claim's transaction."""
    quarantine(conn, now)
    job = select(conn, now)
    return None if job is None else lease(conn, job, owner, now, lease_ms)
