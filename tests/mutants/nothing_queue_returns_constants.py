"""A queue that returns constants and runs no SQL: claim hands out a made-up Claim, finish True.

It raises no NotImplementedError and returns values of the right types, so every check runs it:
none may pass. The rollback checks once passed it, because the fault they inject into claim's
and finish's writes never fired ("nothing to inject into"); where the job is claimable and the
stamp is current, a fault that never fires now means the function wrote nothing where it had
to. It scored 4."""

from lab.store import Claim

EXPECT_FAIL = {
    "finish-before-expiry", "finish-at-expiry", "finish-after-expiry", "reclaim-before-expiry",
    "reclaim-at-expiry", "reclaim-after-expiry", "lesson-timeline", "same-name-restart",
    "valid-lease-never-handed-over", "requeue-token-increases", "forged-stamp-id",
    "forged-stamp-owner", "forged-stamp-token", "forged-stamp-attempt",
    "forged-stamp-lease-until", "double-finish-rejected", "finish-on-quarantined-rejected",
    "claim-result-matches-row", "lowest-id-first", "skips-done-and-quarantined",
    "empty-queue-returns-none", "deadline-clamp", "finish-at-deadline",
    "finish-at-moved-deadline", "quarantine-before-new-token", "quarantine-spares-valid-lease",
    "quarantine-past-deadline", "claim-in-one-immediate-transaction",
    "claim-rolls-back-on-error", "finish-leaves-no-transaction", "locked-database-raises",
    "journal-mode-stays-delete", "work-once-fresh-clock", "work-once-send-raises",
    "work-once-empty-queue", "lock-free-during-send", "race-one-winner",
    "crash-mid-claim-atomic", "integration-run", "random-timelines",
    "late-finish-in-time", "late-finish-job-done", "late-finish-lease-taken",
    "late-finish-past-deadline", "late-finish-same-name",
}
EXPECT_TEXT = {
    "claim-rolls-back-on-error": "claim wrote nothing where it had to",
    "finish-leaves-no-transaction": "claim did not hand out job",
}


def claim(conn, owner, now, lease_ms):
    return Claim(id=1, qty=1, owner=owner, token=1, attempt=1, lease_until=now + lease_ms)


def finish(conn, claim, now):
    return True


def work_once(conn, owner, send, clock, lease_ms):
    c = claim(conn, owner, clock(), lease_ms)
    send(c)
    return finish(conn, c, clock())
