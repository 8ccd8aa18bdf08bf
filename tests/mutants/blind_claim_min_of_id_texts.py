"""claim picks the claimable job whose id is least as text (`min()` of the ids' strings).

A blind instructor's bug: the selection gathers the claimable ids with `group_concat` and takes
`min()` of the strings, so "10" comes before "9" and "1000" before "999". Right while every id
has as many digits as the others: the lesson's world has that for its first nine jobs, and a
drawn world's ids did for all of a check's jobs until its first id was drawn a little below a
power of ten (caught then in every world)."""

from _claim_parts import NOT_VALID, in_write_transaction, lease, quarantine
from _kit import reference_finish as finish
from _kit import work_once_with

# the random timelines number their jobs across digits (9, 10...) in every world; in a drawn
# world, so does lowest-id-first (its first id a little below a power of ten: not the lesson's)
EXPECT_FAIL = {"random-timelines"}
MAY_FAIL = {"lowest-id-first", "finish-at-deadline", "finish-at-moved-deadline",
            "late-finish-in-time", "lock-free-during-send", "quarantine-past-deadline",
            "skips-done-and-quarantined", "claim-rolls-back-on-error", "claim-result-matches-row",
            "deadline-clamp", "quarantine-before-new-token", "quarantine-spares-valid-lease",
            "late-finish-lease-taken", "late-finish-job-done", "late-finish-same-name",
            "late-finish-past-deadline", "work-once-fresh-clock", "same-name-restart",
            "valid-lease-never-handed-over", "requeue-token-increases", "lesson-timeline"}


def claim(conn, owner, now, lease_ms):
    def body():
        quarantine(conn, now)
        ids = conn.execute(f"SELECT group_concat(id) FROM jobs WHERE {NOT_VALID} AND attempts"
                           " < max_attempts AND deadline > :now", {"now": now}).fetchone()[0]
        if not ids:
            return None
        return lease(conn, int(min(ids.split(","))), owner, now, lease_ms)

    return in_write_transaction(conn, body)


work_once = work_once_with(claim, finish)
