"""A custom row_factory (rows as dicts keyed by column name) set for the length of each call and
restored in finally to whatever the connection had; finish reads the row inside BEGIN IMMEDIATE,
compares in Python and writes with UPDATE ... WHERE id = ? AND token = ?."""

from __future__ import annotations

import sqlite3
from contextlib import contextmanager
from typing import Any, Callable, Iterator

from lab.store import Claim


def _dict_row(cursor: sqlite3.Cursor, row: tuple) -> dict[str, Any]:
    return {d[0]: v for d, v in zip(cursor.description, row)}


@contextmanager
def _dict_rows(conn: sqlite3.Connection) -> Iterator[None]:
    saved = conn.row_factory
    conn.row_factory = _dict_row
    try:
        yield
    finally:
        conn.row_factory = saved


@contextmanager
def _immediate(conn: sqlite3.Connection) -> Iterator[None]:
    conn.execute("BEGIN IMMEDIATE")
    try:
        yield
        conn.execute("COMMIT")
    except BaseException:
        if conn.in_transaction:
            conn.execute("ROLLBACK")
        raise


def claim(conn: sqlite3.Connection, owner: str, now: int, lease_ms: int) -> Claim | None:
    free = "(status = 'pending' OR (status = 'leased' AND lease_until <= :now))"
    with _dict_rows(conn), _immediate(conn):
        conn.execute(f"UPDATE jobs SET status = 'quarantined' WHERE {free}"
                     " AND (attempts >= max_attempts OR deadline <= :now)", {"now": now})
        job = conn.execute(f"SELECT * FROM jobs WHERE {free} AND attempts < max_attempts"
                           " AND deadline > :now ORDER BY id LIMIT 1", {"now": now}).fetchone()
        if job is None:
            return None
        out = conn.execute(
            "UPDATE jobs SET status = 'leased', owner = :owner, token = token + 1,"
            " attempts = attempts + 1, lease_until = MIN(:now + :ms, deadline)"
            " WHERE id = :id RETURNING *",
            {"owner": owner, "now": now, "ms": lease_ms, "id": job["id"]}).fetchone()
    return Claim(id=out["id"], qty=out["qty"], owner=out["owner"], token=out["token"],
                 attempt=out["attempts"], lease_until=out["lease_until"])


def finish(conn: sqlite3.Connection, claim: Claim, now: int) -> bool:
    with _dict_rows(conn), _immediate(conn):
        row = conn.execute("SELECT * FROM jobs WHERE id = ?", (claim.id,)).fetchone()
        if (row is None or row["status"] != "leased" or row["owner"] != claim.owner
                or row["token"] != claim.token or row["attempts"] != claim.attempt
                or row["lease_until"] != claim.lease_until
                or not now < row["lease_until"] or not now < row["deadline"]):
            return False
        cur = conn.execute("UPDATE jobs SET status = 'done', finished_at = ?"
                           " WHERE id = ? AND token = ?", (now, claim.id, claim.token))
        return cur.rowcount == 1


def work_once(conn: sqlite3.Connection, owner: str, send: Callable[[Claim], object],
              clock: Callable[[], int], lease_ms: int) -> bool | None:
    c = claim(conn, owner, clock(), lease_ms)
    if c is None:
        return None
    send(c)
    return finish(conn, c, clock())
