"""A chatty student: every call prints a debug line to stdout, appends a line to an anonymous log file in the
temporary folder (tempfile.TemporaryFile: nothing is left behind), and records the claim/finish in an in-memory SQLite audit database of its own
(a scratch database, never the queue's); errors are printed with traceback.print_exc() before
they are re-raised. A module-level threading.Lock serialises this module's own calls. The file
also has an `if __name__ == "__main__":` demo that is never run on import."""

from __future__ import annotations

import os
import sqlite3
import sys
import tempfile
import threading
import traceback
from typing import Callable

from lab.store import Claim

_LOCK = threading.Lock()
_AUDIT = sqlite3.connect(":memory:", check_same_thread=False)
_AUDIT.execute("CREATE TABLE audit(event TEXT, job INTEGER, token INTEGER, at INTEGER)")
_LOGFILE = tempfile.TemporaryFile("w+", encoding="utf-8")

_FREE = "(status = 'pending' OR (status = 'leased' AND lease_until <= :now))"


def _note(event: str, job: int | None, token: int | None, at: int) -> None:
    print(f"[queue] {event} job={job} token={token} at={at}")
    _LOGFILE.write(f"{event}\t{job}\t{token}\t{at}\n")
    _LOGFILE.flush()
    _AUDIT.execute("INSERT INTO audit VALUES (?, ?, ?, ?)", (event, job, token, at))


def claim(conn: sqlite3.Connection, owner: str, now: int, lease_ms: int) -> Claim | None:
    with _LOCK:
        conn.execute("BEGIN IMMEDIATE")
        try:
            conn.execute(f"UPDATE jobs SET status = 'quarantined' WHERE {_FREE}"
                         " AND (attempts >= max_attempts OR deadline <= :now)", {"now": now})
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
            traceback.print_exc(file=sys.stderr)
            if conn.in_transaction:
                conn.execute("ROLLBACK")
            raise
    result = None if stamp is None else Claim(*stamp)
    _note("claim", result and result.id, result and result.token, now)
    return result


def finish(conn: sqlite3.Connection, claim: Claim, now: int) -> bool:
    with _LOCK:
        try:
            cur = conn.execute(
                "UPDATE jobs SET status = 'done', finished_at = :now"
                " WHERE id = :id AND status = 'leased' AND owner = :owner AND token = :token"
                " AND attempts = :attempt AND lease_until = :lease_until"
                " AND :now < lease_until AND :now < deadline",
                {"now": now, "id": claim.id, "owner": claim.owner, "token": claim.token,
                 "attempt": claim.attempt, "lease_until": claim.lease_until})
        except sqlite3.Error:
            traceback.print_exc()
            raise
        ok = cur.rowcount == 1
    _note("finish" if ok else "finish-rejected", claim.id, claim.token, now)
    return ok


def work_once(conn: sqlite3.Connection, owner: str, send: Callable[[Claim], object],
              clock: Callable[[], int], lease_ms: int) -> bool | None:
    c = claim(conn, owner, clock(), lease_ms)
    if c is None:
        print("[queue] nothing to do")
        return None
    try:
        send(c)
    except BaseException:
        traceback.print_exc()
        raise
    return finish(conn, c, clock())


if __name__ == "__main__":
    from lab import store

    demo = store.connect(os.path.join(tempfile.mkdtemp(), "demo.db"))
    store.init_db(demo)
    store.enqueue(demo, qty=5, deadline=10_000)
    print(work_once(demo, "A", print, lambda: 0, 1000))
