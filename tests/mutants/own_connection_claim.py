"""claim works on a connection of its own to the queue's database, not on the one it is given.

It reads the database's path with PRAGMA database_list on the connection it is given, opens a
second connection to that file, and there reads the job before BEGIN IMMEDIATE, then updates it
by id without looking again. The grader's trace, the race's lockstep and the crash's kill points
hang on the connection claim is given: they see only the PRAGMA, so the non-atomic read-then-write
escaped them all (it scored 100; two real workers double-claim). The contract is "uses the
connection it was given": every check that calls claim fails with that diagnosis."""

import sqlite3

from _claim_parts import QUARANTINE, lease, select, transaction
from _kit import reference_finish as finish
from _kit import work_once_with

from lab.store import BUSY_TIMEOUT_MS

#: Every check calls claim (work_once calls it too): each fails with that diagnosis, whatever the
#: SQL looked like, the race, the crash and the integration run included (their own processes).
EXPECT_FAIL = {
    "claim-in-one-immediate-transaction", "claim-result-matches-row", "claim-rolls-back-on-error",
    "crash-mid-claim-atomic", "deadline-clamp", "double-finish-rejected",
    "empty-queue-returns-none", "finish-after-expiry", "finish-at-deadline", "finish-at-expiry",
    "finish-at-moved-deadline", "finish-before-expiry", "finish-leaves-no-transaction",
    "finish-on-quarantined-rejected", "forged-stamp-attempt", "forged-stamp-id",
    "forged-stamp-lease-until", "forged-stamp-owner", "forged-stamp-token", "integration-run",
    "journal-mode-stays-delete", "lesson-timeline", "lock-free-during-send",
    "locked-database-raises", "lowest-id-first", "quarantine-before-new-token",
    "quarantine-past-deadline", "quarantine-spares-valid-lease", "race-one-winner",
    "random-timelines", "reclaim-after-expiry", "reclaim-at-expiry", "reclaim-before-expiry",
    "requeue-token-increases", "same-name-restart", "skips-done-and-quarantined",
    "valid-lease-never-handed-over", "work-once-empty-queue", "work-once-fresh-clock",
    "work-once-send-raises",
    "late-finish-in-time", "late-finish-job-done", "late-finish-lease-taken",
    "late-finish-past-deadline", "late-finish-same-name",
}
EXPECT_TEXT = {
    "race-one-winner": "claim opened a connection of its own to the check's database",
    "claim-in-one-immediate-transaction": "claim opened a connection of its own to the check's database",
    "crash-mid-claim-atomic": "claim opened a connection of its own to the check's database",
    "integration-run": "work_once opened a connection of its own to the check's database",
    "random-timelines": "opened a connection of its own to the check's database",
    "lock-free-during-send": "opened a connection of its own to the check's database",
}
EXPECT_NO_TEXT = {"race-one-winner": "Both processes got a Claim"}

def claim(conn, owner, now, lease_ms):
    path = conn.execute("PRAGMA database_list").fetchone()[2]
    own = sqlite3.connect(path, timeout=BUSY_TIMEOUT_MS / 1000, isolation_level=None)
    try:
        job = select(own, now)  # autocommit, on a connection nobody watches

        def body():
            own.execute(QUARANTINE, {"now": now})
            return None if job is None else lease(own, job, owner, now, lease_ms)

        return transaction(own, "BEGIN IMMEDIATE", body)
    finally:
        own.close()


work_once = work_once_with(claim, finish)
