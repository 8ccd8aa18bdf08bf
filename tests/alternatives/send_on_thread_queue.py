"""A correct implementation whose work_once calls send on a helper thread.

The contract says nothing about threads: send may be called from any thread while work_once
runs. This work_once hands the delivery to a `concurrent.futures.ThreadPoolExecutor` and waits
for it with `.result()`, which returns send's value or re-raises send's own exception, so a
failed delivery still comes out of work_once with the job leased. claim and finish are the
reference's (imported from solutions.queue); only work_once differs.
"""

from __future__ import annotations

import sqlite3
from concurrent.futures import ThreadPoolExecutor
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
    with ThreadPoolExecutor(max_workers=1) as pool:
        pool.submit(send, c).result()  # send's exception, if any, is raised here
    return finish(conn, c, clock())
