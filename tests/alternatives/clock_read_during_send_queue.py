"""A correct implementation whose work_once reads its clock while send runs on another thread.

The contract lets send and clock be called from any thread while work_once runs. This one hands
the delivery to a thread pool and, while it waits, reads the clock it was given (to know how
long the delivery takes); finish then uses a fresh reading taken after send returned. While
send runs, the grader may make calls of its own in the same process (the lock probe claims for
another worker then): a clock read meanwhile waits for them and is answered, never refused (it
used to be refused as "called outside the work_once call", in most runs). claim and finish are
the reference's.
"""

from __future__ import annotations

import sqlite3
import time
from concurrent.futures import ThreadPoolExecutor
from typing import Callable

from lab.store import Claim
from solutions.queue import claim, finish

__all__ = ["claim", "finish", "work_once"]

_POOL = ThreadPoolExecutor(max_workers=1)


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
    delivery = _POOL.submit(send, c)
    readings = []
    while not delivery.done():
        readings.append(clock())  # how long the delivery has taken so far
        time.sleep(0.001)
    delivery.result()  # send's own exception, if it raised
    return finish(conn, c, clock())
