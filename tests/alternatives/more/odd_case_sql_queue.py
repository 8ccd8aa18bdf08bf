"""SQL in odd spellings: lower and mixed case keywords, tabs and blank lines, trailing semicolons,
`Begin Immediate Transaction;` opened and `end transaction;` closing it, `rollback transaction`;
`<>` and NOT instead of the usual comparisons; BETWEEN-free, IN-list status test."""

from __future__ import annotations

import sqlite3
from typing import Callable

from lab.store import Claim


def claim(conn: sqlite3.Connection, owner: str, now: int, lease_ms: int) -> Claim | None:
    conn.execute("Begin   Immediate\tTransaction;")
    try:
        conn.execute("""

            update jobs
            set    status = 'quarantined'
            where  status in ('pending', 'leased')
            and    not (status = 'leased' and lease_until > ?1)
            and    (attempts >= max_attempts or deadline <= ?1);
        """, (now,))
        hit = conn.execute("""
            select id
            from   jobs
            where  status not in ('done', 'quarantined')
            and    not (status = 'leased' and ?1 < lease_until)
            and    attempts < max_attempts
            and    ?1 < deadline
            order  by id
            limit  1;
        """, (now,)).fetchone()
        stamp = None
        if hit is not None:
            stamp = conn.execute("""
                UpDaTe jobs
                   SeT status='leased',owner=?2,token=token+1,attempts=attempts+1,
                       lease_until=min(?3+?4,deadline)
                 WhErE id=?1
                ReTuRnInG id,qty,owner,token,attempts,lease_until;
            """, (hit[0], owner, now, lease_ms)).fetchone()
        conn.execute("end transaction;")
    except BaseException:
        if conn.in_transaction:
            conn.execute("rollback transaction;")
        raise
    return None if stamp is None else Claim(*stamp)


def finish(conn: sqlite3.Connection, claim: Claim, now: int) -> bool:
    cur = conn.execute("""
        update jobs set status = 'done', finished_at = ?1
        where id = ?2 and status = 'leased' and owner = ?3 and token = ?4
          and attempts = ?5 and lease_until = ?6
          and not (?1 >= lease_until) and not (?1 >= deadline);
    """, (now, claim.id, claim.owner, claim.token, claim.attempt, claim.lease_until))
    return cur.rowcount == 1


def work_once(conn: sqlite3.Connection, owner: str, send: Callable[[Claim], object],
              clock: Callable[[], int], lease_ms: int) -> bool | None:
    c = claim(conn, owner, clock(), lease_ms)
    if c is None:
        return None
    send(c)
    return finish(conn, c, clock())
