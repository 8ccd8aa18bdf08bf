"""finish returns cur.rowcount (the int 1 or 0) instead of a bool.

1 and 0 look like True and False, but the contract says finish returns a bool: a caller that
compares with `is True`, stores the value as JSON or prints it sees something else."""

from _kit import reference_claim as claim
from _finish_parts import update_where
from _kit import work_once_with

EXPECT_FAIL = {"double-finish-rejected", "empty-queue-returns-none", "finish-after-expiry",
               "finish-at-deadline", "finish-at-expiry", "finish-at-moved-deadline",
               "finish-before-expiry", "finish-leaves-no-transaction",
               "finish-on-quarantined-rejected", "forged-stamp-attempt", "forged-stamp-id",
               "forged-stamp-lease-until", "forged-stamp-owner", "forged-stamp-token",
               "journal-mode-stays-delete", "lesson-timeline", "quarantine-spares-valid-lease",
               "same-name-restart", "skips-done-and-quarantined", "valid-lease-never-handed-over",
               "work-once-fresh-clock"}
MAY_FAIL = {"integration-run", "lock-free-during-send", "random-timelines",
            "late-finish-in-time", "late-finish-job-done", "late-finish-lease-taken",
            "late-finish-past-deadline", "late-finish-same-name"}  # work_once returns finish's int
EXPECT_TEXT = {"finish-at-expiry": "it must return bool",
               # the hint is about the type, not the rule's logic
               "finish-before-expiry": "finish answers yes or no: return True when"}
EXPECT_NO_TEXT = {"finish-at-expiry": "Compare with now < lease_until"}
# issue 38: every call is also held to the contract's rules after it (no transaction or
# statement left open, every row as the model makes it), at the domain's sizes
MAY_FAIL |= {'lowest-id-first'}


def finish(conn, claim, now):
    return update_where(conn, claim, now).rowcount


work_once = work_once_with(claim, finish)
