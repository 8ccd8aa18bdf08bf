"""A correct implementation that never UPDATEs: it rewrites rows whole with INSERT OR REPLACE.

Nobody should write a queue like this, but it is correct, and it keeps the checks honest: the
fault injection of claim-rolls-back-on-error and finish-leaves-no-transaction must hit a row
rewritten this way too (an UPDATE trigger alone would never fire, and those checks would shrink
to nothing), and the transaction-shape checks must accept writes that are not UPDATEs.
- claim reads the rows to quarantine and the job to lease inside BEGIN IMMEDIATE, computes the
  new rows in Python and writes each back with INSERT OR REPLACE;
- finish does the same for the one row, after comparing the stamp in Python.
"""

from __future__ import annotations

import sqlite3
from typing import Callable

from lab.store import COLUMNS, Claim

_PUT = (f"INSERT OR REPLACE INTO jobs ({', '.join(COLUMNS)})"
        f" VALUES ({', '.join(':' + c for c in COLUMNS)})")


def _rows(conn: sqlite3.Connection) -> list[dict]:
    cur = conn.execute(f"SELECT {', '.join(COLUMNS)} FROM jobs ORDER BY id")
    return [dict(zip(COLUMNS, r)) for r in cur.fetchall()]


def _lease_not_valid(row: dict, now: int) -> bool:
    return row["status"] == "pending" or (row["status"] == "leased" and row["lease_until"] <= now)


def _in_write_transaction(conn: sqlite3.Connection, body: Callable[[], object]):
    conn.execute("BEGIN IMMEDIATE")
    try:
        result = body()
        conn.execute("COMMIT")
    except BaseException:
        if conn.in_transaction:
            conn.execute("ROLLBACK")
        raise
    return result


def claim(conn: sqlite3.Connection, owner: str, now: int, lease_ms: int) -> Claim | None:
    def body():
        rows = _rows(conn)
        for row in rows:
            if _lease_not_valid(row, now) and (row["attempts"] >= row["max_attempts"]
                                               or row["deadline"] <= now):
                conn.execute(_PUT, {**row, "status": "quarantined"})
        job = next((r for r in rows if _lease_not_valid(r, now)
                    and r["attempts"] < r["max_attempts"] and r["deadline"] > now), None)
        if job is None:
            return None
        new = {**job, "status": "leased", "owner": owner, "token": job["token"] + 1,
               "attempts": job["attempts"] + 1,
               "lease_until": min(now + lease_ms, job["deadline"])}
        conn.execute(_PUT, new)
        return Claim(new["id"], new["qty"], owner, new["token"], new["attempts"],
                     new["lease_until"])

    return _in_write_transaction(conn, body)


def finish(conn: sqlite3.Connection, claim: Claim, now: int) -> bool:
    def body():
        row = next((r for r in _rows(conn) if r["id"] == claim.id), None)
        if row is None or row["status"] != "leased":
            return False
        if (row["owner"], row["token"], row["attempts"], row["lease_until"]) != (
                claim.owner, claim.token, claim.attempt, claim.lease_until):
            return False
        if not (now < row["lease_until"] and now < row["deadline"]):
            return False
        conn.execute(_PUT, {**row, "status": "done", "finished_at": now})
        return True

    return _in_write_transaction(conn, body)


def work_once(conn: sqlite3.Connection, owner: str, send: Callable[[Claim], object],
              clock: Callable[[], int], lease_ms: int) -> bool | None:
    c = claim(conn, owner, clock(), lease_ms)
    if c is None:
        return None
    send(c)
    return finish(conn, c, clock())
