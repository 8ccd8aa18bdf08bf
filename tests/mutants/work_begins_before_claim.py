"""work_once opens a transaction of its own (BEGIN) and calls claim inside it.

"The claim and the send belong together": but claim opens its own BEGIN IMMEDIATE, and SQLite
has no nested transactions, so every claim work_once makes raises "cannot start a transaction
within a transaction" before anything is sent. Every check that runs work_once fails over that
one error (work-once-send-raises included: send is never reached, so the report must say that
claim raised, not that send was called 0 times)."""

from _kit import reference_claim as claim
from _kit import reference_finish as finish

EXPECT_FAIL = {"work-once-fresh-clock", "work-once-send-raises", "work-once-empty-queue",
               "lock-free-during-send", "locked-database-raises", "integration-run",
               "random-timelines"}
# claim-rolls-back-on-error's work_once step: the failed nested BEGIN leaves work_once's open
MAY_FAIL = {"claim-rolls-back-on-error",
            # the same error, in every work_once
            "late-finish-in-time", "late-finish-job-done", "late-finish-lease-taken",
            "late-finish-past-deadline", "late-finish-same-name"}
EXPECT_OUTCOME = {"work-once-fresh-clock": "errored", "work-once-send-raises": "errored",
                  "work-once-empty-queue": "errored", "lock-free-during-send": "errored",
                  "random-timelines": "errored"}  # work_once raised: the check could not go on
EXPECT_TEXT = {"work-once-send-raises": "cannot start a transaction within a transaction"}
EXPECT_NO_TEXT = {"work-once-send-raises": "send was called 0 time(s)"}
EXPECT_CAUSE = {"work-once-fresh-clock": "raised", "work-once-send-raises": "raised",
                "work-once-empty-queue": "raised", "lock-free-during-send": "raised",
                "random-timelines": "raised"}


def work_once(conn, owner, send, clock, lease_ms):
    conn.execute("BEGIN")  # the bug: claim's own BEGIN IMMEDIATE cannot nest in it
    c = claim(conn, owner, clock(), lease_ms)
    conn.execute("COMMIT")
    if c is None:
        return None
    send(c)
    return finish(conn, c, clock())
