"""Typing-heavy: Final constants, a TypedDict of parameters, a Protocol for send, TypeAlias.
claim checks it was handed a connection with no transaction open, selects the job with
`SELECT MIN(id)` (an aggregate: always one row, NULL when nothing is claimable), and ends its
transaction in try/finally with a `committed` flag; work_once wraps send in try/except and re-raises
the same exception after noting it."""

from __future__ import annotations

import logging
import sqlite3
from typing import Callable, Final, Optional, Protocol, TypeAlias, TypedDict

from lab.store import Claim

log: Final = logging.getLogger(__name__)

Millis: TypeAlias = int


class Sender(Protocol):
    def __call__(self, claim: Claim, /) -> object: ...


class _LeaseParams(TypedDict):
    now: Millis
    owner: str
    ms: Millis
    id: int


_FREE: Final[str] = "(status = 'pending' OR (status = 'leased' AND lease_until <= :now))"
_QUARANTINE: Final[str] = (f"UPDATE jobs SET status = 'quarantined' WHERE {_FREE}"
                           " AND (attempts >= max_attempts OR deadline <= :now)")
_PICK: Final[str] = (f"SELECT MIN(id) FROM jobs WHERE {_FREE}"
                     " AND attempts < max_attempts AND deadline > :now")
_LEASE: Final[str] = ("UPDATE jobs SET status = 'leased', owner = :owner, token = token + 1,"
                      " attempts = attempts + 1, lease_until = MIN(:now + :ms, deadline)"
                      " WHERE id = :id RETURNING id, qty, owner, token, attempts, lease_until")


def claim(conn: sqlite3.Connection, owner: str, now: Millis, lease_ms: Millis) -> Optional[Claim]:
    if conn.in_transaction:
        raise RuntimeError("claim needs a connection in autocommit; a transaction is open")
    conn.execute("BEGIN IMMEDIATE")
    committed: bool = False
    stamp: Optional[Claim] = None
    try:
        conn.execute(_QUARANTINE, {"now": now})
        (job_id,) = conn.execute(_PICK, {"now": now}).fetchone()
        if job_id is not None:
            params: _LeaseParams = {"now": now, "owner": owner, "ms": lease_ms, "id": job_id}
            row: tuple[int, int, str, int, int, int] = conn.execute(_LEASE, params).fetchone()
            stamp = Claim(*row)
        conn.execute("COMMIT")
        committed = True
    finally:
        if not committed and conn.in_transaction:
            conn.execute("ROLLBACK")
    return stamp


def finish(conn: sqlite3.Connection, claim: Claim, now: Millis) -> bool:
    cur: sqlite3.Cursor = conn.execute(
        "UPDATE jobs SET status = 'done', finished_at = :now"
        " WHERE id = :id AND status = 'leased' AND owner = :owner AND token = :token"
        " AND attempts = :attempt AND lease_until = :lease_until"
        " AND :now < lease_until AND :now < deadline",
        {"now": now, "id": claim.id, "owner": claim.owner, "token": claim.token,
         "attempt": claim.attempt, "lease_until": claim.lease_until})
    changed: bool = cur.rowcount == 1
    return changed


def work_once(conn: sqlite3.Connection, owner: str, send: Sender | Callable[[Claim], object],
              clock: Callable[[], Millis], lease_ms: Millis) -> Optional[bool]:
    c: Optional[Claim] = claim(conn, owner, clock(), lease_ms)
    if c is None:
        return None
    try:
        send(c)
    except Exception as err:
        log.warning("delivery of job %s failed: %r; it stays leased until %s",
                    c.id, err, c.lease_until)
        raise
    return finish(conn, c, clock())
