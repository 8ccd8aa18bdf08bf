"""work_once finishes only when send returns something true: `if not send(c): return False`.

send is not said to return anything (the grader's returns None): this work_once then never calls
finish, returns False and leaves a delivered job leased, to be handed out again once its lease
runs out. The report says finish was never called; locked-database-raises, which used to say
that finish inside work_once met "database is locked" (a finish that never ran), passes it."""

from _kit import reference_claim as claim
from _kit import reference_finish as finish

EXPECT_FAIL = {"work-once-fresh-clock", "integration-run"}
MAY_FAIL = {"random-timelines", "lock-free-during-send",
            "late-finish-in-time"}  # finish never called: met again in time
EXPECT_TEXT = {"work-once-fresh-clock": "work_once ran no statement at all and returned False"}
# issue 38: every call is also held to the contract's rules after it (no transaction or
# statement left open, every row as the model makes it), at the domain's sizes
MAY_FAIL |= {
    'late-finish-job-done', 'late-finish-lease-taken', 'late-finish-past-deadline',
    'late-finish-same-name', 'locked-database-raises', 'work-once-empty-queue'}


def work_once(conn, owner, send, clock, lease_ms):
    c = claim(conn, owner, clock(), lease_ms)
    if c is None:
        return None
    if not send(c):
        return False  # send returned nothing true: taken for a failed delivery
    return finish(conn, c, clock())
