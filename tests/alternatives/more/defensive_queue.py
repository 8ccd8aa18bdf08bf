"""A defensive student: claim reads `PRAGMA journal_mode` and refuses to run on WAL; the
quarantine uses RETURNING id and logs the ids it moved; work_once re-reads the claimed row with
lab.store.get_job (a SELECT in autocommit, after the commit) to check the stamp before sending,
and reads the clock an extra time for its log (finish gets the latest reading, taken after send)."""

from __future__ import annotations

import logging
import sqlite3
from typing import Callable

from lab.store import Claim, get_job

log = logging.getLogger("leaselab.worker")

_FREE = "(status = 'pending' OR (status = 'leased' AND lease_until <= :now))"


def claim(conn: sqlite3.Connection, owner: str, now: int, lease_ms: int) -> Claim | None:
    (mode,) = conn.execute("PRAGMA journal_mode").fetchone()
    if str(mode).lower() == "wal":
        raise RuntimeError("this queue needs the rollback journal, not WAL")
    conn.execute("BEGIN IMMEDIATE")
    try:
        moved = conn.execute(f"UPDATE jobs SET status = 'quarantined' WHERE {_FREE}"
                             " AND (attempts >= max_attempts OR deadline <= :now) RETURNING id",
                             {"now": now}).fetchall()
        if moved:
            log.info("quarantined %s at %s", [r[0] for r in moved], now)
        row = conn.execute(f"SELECT id FROM jobs WHERE {_FREE} AND attempts < max_attempts"
                           " AND deadline > :now ORDER BY id LIMIT 1", {"now": now}).fetchone()
        stamp = None
        if row is not None:
            stamp = conn.execute(
                "UPDATE jobs SET status = 'leased', owner = :owner, token = token + 1,"
                " attempts = attempts + 1, lease_until = MIN(:now + :ms, deadline)"
                " WHERE id = :id RETURNING id, qty, owner, token, attempts, lease_until",
                {"owner": owner, "now": now, "ms": lease_ms, "id": row[0]}).fetchone()
        conn.execute("COMMIT")
    except BaseException:
        if conn.in_transaction:
            conn.execute("ROLLBACK")
        raise
    return None if stamp is None else Claim(*stamp)


def finish(conn: sqlite3.Connection, claim: Claim, now: int) -> bool:
    cur = conn.execute(
        "UPDATE jobs SET status = 'done', finished_at = :now"
        " WHERE id = :id AND status = 'leased' AND owner = :owner AND token = :token"
        " AND attempts = :attempt AND lease_until = :lease_until"
        " AND :now < lease_until AND :now < deadline",
        {"now": now, "id": claim.id, "owner": claim.owner, "token": claim.token,
         "attempt": claim.attempt, "lease_until": claim.lease_until})
    return cur.rowcount == 1


def work_once(conn: sqlite3.Connection, owner: str, send: Callable[[Claim], object],
              clock: Callable[[], int], lease_ms: int) -> bool | None:
    c = claim(conn, owner, clock(), lease_ms)
    if c is None:
        return None
    row = get_job(conn, c.id)
    if row is None or (row["token"], row["owner"]) != (c.token, c.owner):
        log.warning("job %s changed right after the claim: %r", c.id, row)
    log.info("sending job %s at %s", c.id, clock())
    send(c)
    log.info("sent job %s at %s", c.id, clock())
    return finish(conn, c, clock())
