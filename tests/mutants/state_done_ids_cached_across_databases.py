"""claim skips the jobs this process saw finished, from a module-level set of ids kept across
calls and across databases: a job of another database with the same id is never claimed.

Within one database the set is right (a done job is never claimable again), so every check
that plays on one database passes; the random timelines play many databases in one process,
and a later timeline's job 1 is skipped because an earlier timeline's job 1 was done. The
shrunk timeline fails only after the earlier ones: the report must say that state carried
over from them (played alone, in a fresh process, it passes), not show it as if it failed
alone."""

from _claim_parts import QUARANTINE, SELECT, UPDATE, in_write_transaction
from _kit import reference_finish
from _kit import work_once_with
from lab.store import Claim

EXPECT_FAIL = {"random-timelines"}
EXPECT_TEXT = {"random-timelines": "played alone, in a fresh process of your code, this "
                                   "timeline passes"}

_done: set[int] = set()  # the ids this process saw finished, whichever database they were in


def claim(conn, owner, now, lease_ms):
    params = {"owner": owner, "now": now, "lease_ms": lease_ms}
    skip = "".join(f" AND id <> {int(job)}" for job in sorted(_done))
    select = SELECT.replace(" ORDER BY id", skip + " ORDER BY id")

    def body():
        conn.execute(QUARANTINE, params)
        row = conn.execute(select, params).fetchone()
        if row is None:
            return None
        return Claim(*conn.execute(UPDATE, {**params, "id": row[0]}).fetchone())

    return in_write_transaction(conn, body)


def finish(conn, claim, now):
    accepted = reference_finish(conn, claim, now)
    if accepted is True:
        _done.add(claim.id)
    return accepted


work_once = work_once_with(claim, finish)
