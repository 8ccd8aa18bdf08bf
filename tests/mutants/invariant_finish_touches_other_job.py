"""finish, once its own job is done, also stamps finished_at on the other jobs the same owner
holds ("close out the worker's batch").

Its own job is right, so every check that reads only that row passes; the rows of jobs it was
not allowed to touch change."""

from _kit import reference_claim as claim
from _kit import work_once_with
from solutions.queue import finish as reference_finish

EXPECT_FAIL = {"random-timelines"}
MAY_FAIL = {"late-finish-in-time", "late-finish-lease-taken", "late-finish-same-name",
            "late-finish-job-done", "finish-valid-lease", "finish-wrong-token"}


def finish(conn, claim, now):
    ok = reference_finish(conn, claim, now)
    if ok:
        conn.execute("UPDATE jobs SET finished_at = ? WHERE owner = ? AND id != ?"
                     " AND status = 'leased'", (now, claim.owner, claim.id))
    return ok


work_once = work_once_with(claim, finish)
