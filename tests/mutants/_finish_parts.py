"""Shared parts for finish mutants: the reference finish's conditions, and `finish_where`,
which builds a finish from a list of them (one left out, or one changed, is the bug)."""

from __future__ import annotations

#: Every condition the reference finish puts in its UPDATE's WHERE clause.
CONDITIONS = (
    "id = :id", "status = 'leased'", "owner = :owner", "token = :token",
    "attempts = :attempt", "lease_until = :lease_until", ":now < lease_until", ":now < deadline",
)


def update_where(conn, claim, now, conditions=CONDITIONS):
    """Run finish's conditional UPDATE with exactly `conditions`; return the cursor."""
    sql = "UPDATE jobs SET status = 'done', finished_at = :now WHERE " + " AND ".join(conditions)
    return conn.execute(sql, {
        "now": now, "id": claim.id, "owner": claim.owner, "token": claim.token,
        "attempt": claim.attempt, "lease_until": claim.lease_until,
    })


def finish_where(*conditions: str):
    """A finish whose single conditional UPDATE checks exactly `conditions`."""

    def finish(conn, claim, now):
        return update_where(conn, claim, now, conditions).rowcount == 1

    return finish


def finish_without(condition: str):
    """The reference finish with one condition left out."""
    assert condition in CONDITIONS, condition
    return finish_where(*(c for c in CONDITIONS if c != condition))


def finish_by_identity(*counters: str):
    """The reference finish as a read then a write, comparing the stamp's `counters` ("token",
    "attempt") with the row's by identity (`is`, right for small integers only) and every other
    field by value: the scale mutants of `is`."""
    from _claim_parts import transaction

    def same(field: str, got, want) -> bool:
        return got is want if field in counters else got == want

    def finish(conn, claim, now):
        def body():
            row = conn.execute("SELECT status, owner, token, attempts, lease_until, deadline"
                               " FROM jobs WHERE id = ?", (claim.id,)).fetchone()
            ok = (row is not None and row[0] == "leased" and row[1] == claim.owner
                  and same("token", row[2], claim.token) and same("attempt", row[3], claim.attempt)
                  and row[4] == claim.lease_until and now < row[4] and now < row[5])
            if ok:
                conn.execute("UPDATE jobs SET status = 'done', finished_at = ? WHERE id = ?",
                             (now, claim.id))
            return ok

        return transaction(conn, "BEGIN IMMEDIATE", body)

    return finish
