"""A correct implementation that logs its own SQL with `conn.set_trace_callback` (a debugging aid).

sqlite3 allows one trace callback per connection, and the grader watches the connection it hands
in through one of its own. A student's callback must not blind the grader, nor be lost itself:
- claim installs a callback that keeps the statements of the current call, and removes it with
  `set_trace_callback(None)` before returning;
- finish and work_once leave theirs installed (a log kept for the life of the connection);
- so that this file also proves its callback is called, claim refuses to return a Claim when its
  log does not show the statements it has just run.
Otherwise it is the reference: one BEGIN IMMEDIATE transaction in claim, one UPDATE in finish.
"""

from __future__ import annotations

import logging
import sqlite3
from typing import Callable

from solutions.queue import claim as _reference_claim
from solutions.queue import finish as _reference_finish

from lab.store import Claim

_LOG = logging.getLogger(__name__)


def claim(conn: sqlite3.Connection, owner: str, now: int, lease_ms: int) -> Claim | None:
    seen: list[str] = []
    conn.set_trace_callback(seen.append)
    try:
        stamp = _reference_claim(conn, owner, now, lease_ms)
    finally:
        conn.set_trace_callback(None)
    ran = [sql.split(None, 1)[0].upper() for sql in seen]
    if ran[:1] != ["BEGIN"] or ran[-1:] != ["COMMIT"]:
        raise AssertionError(f"my own trace callback missed my statements: {ran}")
    return stamp


def finish(conn: sqlite3.Connection, claim: Claim, now: int) -> bool:
    conn.set_trace_callback(lambda sql: _LOG.debug("SQL %s", sql))
    return _reference_finish(conn, claim, now)


def work_once(conn: sqlite3.Connection, owner: str, send: Callable[[Claim], object],
              clock: Callable[[], int], lease_ms: int) -> bool | None:
    conn.set_trace_callback(lambda sql: _LOG.debug("SQL %s", sql))
    c = claim(conn, owner, clock(), lease_ms)
    if c is None:
        return None
    send(c)
    return finish(conn, c, clock())
