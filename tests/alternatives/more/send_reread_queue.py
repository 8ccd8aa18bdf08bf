"""work_once takes the contract at its word, "send the Claim the committed row holds": after claim
commits it re-reads the row with lab.store.get_job (autocommit) and sends a Claim built from that
row (equal to claim's, a different object); finish gets the same one."""

from __future__ import annotations

import sqlite3
from typing import Callable

from lab.store import Claim, get_job
from solutions.queue import claim, finish


def work_once(conn: sqlite3.Connection, owner: str, send: Callable[[Claim], object],
              clock: Callable[[], int], lease_ms: int) -> bool | None:
    c = claim(conn, owner, clock(), lease_ms)
    if c is None:
        return None
    row = get_job(conn, c.id)
    committed = Claim(id=row["id"], qty=row["qty"], owner=row["owner"], token=row["token"],
                      attempt=row["attempts"], lease_until=row["lease_until"])
    send(committed)
    return finish(conn, committed, clock())
