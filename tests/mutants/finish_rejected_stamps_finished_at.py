"""finish returns the right bool, but a rejected finish still writes finished_at.

"Remember when the worker came back" sounds harmless, but a rejected finish must leave the row
unchanged, byte for byte: finished_at is set by a successful finish only. The value is right and
the row is wrong, and the report must say that (not "Came back: False / Expected: False")."""

from _kit import reference_claim as claim
from _kit import reference_finish, work_once_with

EXPECT_FAIL = {"finish-at-expiry", "finish-after-expiry", "lesson-timeline", "same-name-restart",
               "forged-stamp-id", "forged-stamp-owner", "forged-stamp-token",
               "forged-stamp-attempt", "forged-stamp-lease-until", "finish-on-quarantined-rejected",
               "finish-at-deadline", "finish-at-moved-deadline", "finish-leaves-no-transaction",
               "work-once-fresh-clock", "random-timelines",
               "late-finish-lease-taken", "late-finish-past-deadline", "late-finish-same-name"}
EXPECT_TEXT = {"finish-at-expiry": "finish returned False, as the contract says, but the row of"
                                   " job {id:1} is not what the contract leaves",
               "lesson-timeline": "finish returned False, as the contract says"}
EXPECT_NO_TEXT = {"finish-at-expiry": "Expected: False", "lesson-timeline": "Expected: False"}


def finish(conn, claim, now):
    done = reference_finish(conn, claim, now)
    if not done:  # the bug: a rejected finish changes the row
        conn.execute("UPDATE jobs SET finished_at = :now WHERE id = :id AND status != 'done'",
                     {"now": now, "id": claim.id})
    return done


work_once = work_once_with(claim, finish)
