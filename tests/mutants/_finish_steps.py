"""A finish written as "read the row, compare it with the stamp in Python, then update".

For mutants whose one bug is in how those steps are wrapped in transactions: the comparison
itself is right (the same rule as the reference's WHERE clause).
"""

from __future__ import annotations

from lab.store import get_job


def read(conn, job: int) -> dict | None:
    return get_job(conn, job)


def is_current(row: dict | None, claim, now: int) -> bool:
    return (row is not None and row["status"] == "leased" and row["owner"] == claim.owner
            and row["token"] == claim.token and row["attempts"] == claim.attempt
            and row["lease_until"] == claim.lease_until
            and now < row["lease_until"] and now < row["deadline"])


def mark_done(conn, job: int, now: int) -> None:
    conn.execute("UPDATE jobs SET status = 'done', finished_at = ? WHERE id = ?", (now, job))
