"""claim writes the owner into its SQL as a quoted literal (quotes doubled) instead of binding it.

A blind instructor's bug: the quotes are escaped right, so every name with quotes, `%` or
non-ASCII is stored as it is; but a str may hold a NUL character, and SQL text cannot ("the
query contains a null character"): the worker named with one cannot claim. The random
timelines' names include one (it scored 100 before)."""

from _claim_parts import UPDATE, in_write_transaction, quarantine, select
from _kit import reference_finish as finish
from _kit import work_once_with
from lab.store import Claim

EXPECT_FAIL = {"random-timelines"}
EXPECT_OUTCOME = {"random-timelines": "errored"}


def claim(conn, owner, now, lease_ms):
    quoted = "'" + owner.replace("'", "''") + "'"

    def body():
        quarantine(conn, now)
        job = select(conn, now)
        if job is None:
            return None
        stamp = conn.execute(UPDATE.replace(":owner", quoted),
                             {"now": now, "lease_ms": lease_ms, "id": job}).fetchone()
        return Claim(*stamp)

    return in_write_transaction(conn, body)


work_once = work_once_with(claim, finish)
