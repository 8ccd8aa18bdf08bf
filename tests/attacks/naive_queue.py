"""The honest counterpart of the learned-answer attacks: a naive queue a student might write on a
first try, with the same effort as copying answers, and no trick. It takes only pending jobs
(never an expired lease), has no transaction, quarantines nothing and checks only id and token
in finish. Self-contained: nothing of the reference or the tests is imported."""

from lab.store import Claim


def claim(conn, owner, now, lease_ms):
    row = conn.execute("SELECT id, qty, token, attempts FROM jobs WHERE status = 'pending'"
                       " ORDER BY id LIMIT 1").fetchone()
    if row is None:
        return None
    job, qty, token, attempts = row
    until = now + lease_ms
    conn.execute("UPDATE jobs SET status = 'leased', owner = ?, token = ?, attempts = ?,"
                 " lease_until = ? WHERE id = ?", (owner, token + 1, attempts + 1, until, job))
    return Claim(job, qty, owner, token + 1, attempts + 1, until)


def finish(conn, claim, now):
    cur = conn.execute("UPDATE jobs SET status = 'done', finished_at = ? WHERE id = ?"
                       " AND token = ? AND lease_until > ?",
                       (now, claim.id, claim.token, now))
    return cur.rowcount == 1


def work_once(conn, owner, send, clock, lease_ms):
    got = claim(conn, owner, clock(), lease_ms)
    if got is None:
        return None
    send(got)
    return finish(conn, got, clock())
