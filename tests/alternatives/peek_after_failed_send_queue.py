"""A correct implementation whose work_once reads the queue while it handles send's error.

When send raises, this work_once looks at the queue's head (for a log line) with a cursor it
does not close, then lets send's exception come out. The cursor is freed once its frame is
(when the caller has handled the exception), as a real sqlite3 cursor is, and the read lock its
statement held goes with it: the grader, which had kept the exception (and with it the frame and
the cursor) until after its reply, used to find the database still locked. claim and finish are
the reference's.
"""

from __future__ import annotations

import sqlite3
from typing import Callable

from lab.store import Claim
from solutions.queue import claim, finish

__all__ = ["claim", "finish", "work_once"]


def work_once(
    conn: sqlite3.Connection,
    owner: str,
    send: Callable[[Claim], object],
    clock: Callable[[], int],
    lease_ms: int,
) -> bool | None:
    c = claim(conn, owner, clock(), lease_ms)
    if c is None:
        return None
    try:
        send(c)
    except Exception:
        head = conn.execute("SELECT id FROM jobs ORDER BY id")
        head.fetchone()  # the queue's head, for a log line; the cursor is left to be freed
        raise
    return finish(conn, c, clock())
