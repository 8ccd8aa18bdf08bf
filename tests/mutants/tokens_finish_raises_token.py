"""finish raises the token as it marks the job done ("done is a new generation").

The token counts claims and changes only with one; a successful finish sets status and
finished_at and nothing else, so the done row keeps the stamp of the claim that completed it."""

from _finish_parts import CONDITIONS
from _kit import reference_claim as claim
from _kit import work_once_with

LIGHT = True  # a variant: graded here and in drawn worlds, not by the parity and the sweep
EXPECT_FAIL = {"double-finish-rejected", "empty-queue-returns-none", "finish-at-deadline",
               "finish-at-moved-deadline", "finish-before-expiry", "forged-stamp-attempt",
               "forged-stamp-id", "forged-stamp-lease-until", "forged-stamp-owner",
               "forged-stamp-token", "lesson-timeline", "lock-free-during-send",
               "quarantine-spares-valid-lease", "same-name-restart", "skips-done-and-quarantined",
               "valid-lease-never-handed-over", "work-once-fresh-clock"}
MAY_FAIL = {"random-timelines",  # the same bug, met again on a random timeline
            # a finish that lands, inside send or after it
            "late-finish-in-time", "late-finish-job-done"}
EXPECT_TEXT = {"finish-before-expiry": "≠ token"}
# issue 38: every call is also held to the contract's rules after it (no transaction or
# statement left open, every row as the model makes it), at the domain's sizes
MAY_FAIL |= {
    'finish-leaves-no-transaction', 'journal-mode-stays-delete', 'lowest-id-first',
    'work-once-empty-queue'}


def finish(conn, claim, now):
    cur = conn.execute(
        "UPDATE jobs SET status = 'done', finished_at = :now, token = token + 1"
        " WHERE " + " AND ".join(CONDITIONS),
        {"now": now, "id": claim.id, "owner": claim.owner, "token": claim.token,
         "attempt": claim.attempt, "lease_until": claim.lease_until})
    return cur.rowcount == 1


work_once = work_once_with(claim, finish)
