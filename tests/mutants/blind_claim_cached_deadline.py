"""claim memoises each job's deadline in a module-level dict and clamps later leases to it.

"A job's deadline never changes", so claim reads it once per job (of each database file) and
keeps it across calls.
But the operator moves deadlines (earlier, on a job that must end sooner): the next claim of that
job clamps its lease to the old deadline, and the lease outlives the job's real deadline."""

from _claim_parts import SELECT, in_write_transaction, quarantine
from _kit import reference_finish as finish
from _kit import work_once_with

from lab.store import Claim

EXPECT_FAIL = {"random-timelines"}
EXPECT_TEXT = {"random-timelines": "≠ lease_until"}

_DEADLINES: dict[tuple, int] = {}  # (database file, job id) -> its deadline, read once


def _deadline(conn, job):
    key = (conn.execute("PRAGMA database_list").fetchone()[2], job)
    if key not in _DEADLINES:
        _DEADLINES[key] = conn.execute("SELECT deadline FROM jobs WHERE id = ?",
                                       (job,)).fetchone()[0]
    return _DEADLINES[key]


def claim(conn, owner, now, lease_ms):
    def body():
        quarantine(conn, now)
        row = conn.execute(SELECT, {"now": now}).fetchone()
        if row is None:
            return None
        until = min(now + lease_ms, _deadline(conn, row[0]))
        return Claim(*conn.execute(
            "UPDATE jobs SET status = 'leased', owner = ?, token = token + 1,"
            " attempts = attempts + 1, lease_until = ? WHERE id = ?"
            " RETURNING id, qty, owner, token, attempts, lease_until",
            (owner, until, row[0])).fetchone())

    return in_write_transaction(conn, body)


work_once = work_once_with(claim, finish)
