"""claim keeps a cursor in a global that read one row of `SELECT * FROM jobs` and was never read
to the end: an unfinished statement, which holds a read lock on the database for good.

The grader's own writes (an enqueue, a row set by hand) then find the database locked: each check
that writes after a claim says the student's code still held a lock when its call returned, in
the student's words, never "the grader itself failed". A commit of another connection waits on
the same lock (the lock probe, the integration run's second worker)."""

from _kit import reference_claim, reference_finish, work_once_with

EXPECT_FAIL = {
    "skips-done-and-quarantined", "finish-at-moved-deadline", "claim-rolls-back-on-error",
    "random-timelines",  # the grader's own writes found the database locked
    "claim-in-one-immediate-transaction",  # the SELECT ran before BEGIN IMMEDIATE
    "lock-free-during-send", "integration-run",  # another connection's write is blocked
}
MAY_FAIL = {"quarantine-past-deadline",  # the kept cursor's lock, met by its hundreds of jobs
            "late-finish-in-time"}  # the same lock, met by the other worker's claim inside send
EXPECT_TEXT = {
    "skips-done-and-quarantined": "still held a lock on the database after its call returned",
    "finish-at-moved-deadline": "still held a lock on the database after its call returned",
    "claim-rolls-back-on-error": "still held a lock on the database after its call returned",
    "random-timelines": "still held a lock on the database after its call returned",
    # what held the lock, told as what it was: the kept cursor's statement, no transaction
    "lock-free-during-send": "No transaction was open: a statement of its connection",
}
EXPECT_NO_TEXT = {
    "lock-free-during-send": "A transaction held across a network call",
    "skips-done-and-quarantined": "The grader itself failed",
    "finish-at-moved-deadline": "The grader itself failed",
    "claim-rolls-back-on-error": "The grader itself failed",
    "random-timelines": "The grader itself failed",
}
# issue 38: every call is also held to the contract's rules after it (no transaction or
# statement left open, every row as the model makes it), at the domain's sizes
MAY_FAIL |= {'finish-at-deadline', 'lowest-id-first'}

_kept = {}


def claim(conn, owner, now, lease_ms):
    if "cursor" not in _kept:
        cursor = conn.execute("SELECT * FROM jobs")
        cursor.fetchone()  # one row read, the statement left running
        _kept["cursor"] = cursor
    return reference_claim(conn, owner, now, lease_ms)


finish = reference_finish
work_once = work_once_with(claim, finish)
