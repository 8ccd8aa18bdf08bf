"""claim returns the RETURNING row, a plain tuple, instead of building a Claim from it.

The values are the right ones in the right order, but the contract's claim returns a
lab.store.Claim: the caller's c.id, c.token and finish's stamp need its fields."""

from _claim_parts import QUARANTINE, SELECT, UPDATE, in_write_transaction
from _kit import reference_finish as finish
from _kit import work_once_with

LIGHT = True  # a variant: graded here and in drawn worlds, not by the parity and the sweep
EXPECT_FAIL = {"claim-in-one-immediate-transaction", "claim-result-matches-row",
               "claim-rolls-back-on-error", "crash-mid-claim-atomic", "deadline-clamp",
               "double-finish-rejected", "empty-queue-returns-none", "finish-after-expiry",
               "finish-at-deadline", "finish-at-expiry", "finish-at-moved-deadline",
               "finish-before-expiry", "finish-leaves-no-transaction",
               "finish-on-quarantined-rejected", "forged-stamp-attempt", "forged-stamp-id",
               "forged-stamp-lease-until", "forged-stamp-owner", "forged-stamp-token",
               "integration-run", "journal-mode-stays-delete", "lesson-timeline",
               "lock-free-during-send", "locked-database-raises", "lowest-id-first",
               "quarantine-before-new-token", "quarantine-past-deadline",
               "quarantine-spares-valid-lease", "race-one-winner", "random-timelines",
               "reclaim-after-expiry", "reclaim-at-expiry", "reclaim-before-expiry",
               "requeue-token-increases", "same-name-restart", "skips-done-and-quarantined",
               "valid-lease-never-handed-over", "work-once-empty-queue", "work-once-fresh-clock",
               "work-once-send-raises",
               "late-finish-in-time", "late-finish-job-done", "late-finish-lease-taken",
               "late-finish-past-deadline", "late-finish-same-name"}
# the reference work_once over this claim raises AttributeError reading the tuple's c.id
EXPECT_OUTCOME = {"lock-free-during-send": "errored", "work-once-empty-queue": "errored",
                  "work-once-fresh-clock": "errored"}
EXPECT_TEXT = {"finish-before-expiry":
               "claim returns a value of type tuple; it must return Claim | None"}


def claim(conn, owner, now, lease_ms):
    def body():
        conn.execute(QUARANTINE, {"now": now})
        row = conn.execute(SELECT, {"now": now}).fetchone()
        if row is None:
            return None
        return conn.execute(UPDATE, {"owner": owner, "now": now, "lease_ms": lease_ms,
                                     "id": row[0]}).fetchone()

    return in_write_transaction(conn, body)


work_once = work_once_with(claim, finish)
