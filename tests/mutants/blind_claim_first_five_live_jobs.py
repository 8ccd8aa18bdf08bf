"""claim looks only at the first five live jobs (LIMIT 5), then picks a claimable one in Python.

"Only the front of the queue matters": but when the first five are all held on valid leases,
the sixth is claimable and claim returns None."""

from _claim_parts import in_write_transaction, lease, quarantine
from _kit import reference_finish as finish
from _kit import work_once_with

EXPECT_FAIL = {"random-timelines"}
EXPECT_TEXT = {"random-timelines": "Came back: None"}
# issue 38: every call is also held to the contract's rules after it (no transaction or
# statement left open, every row as the model makes it), at the domain's sizes
MAY_FAIL = {'lowest-id-first'}


def claim(conn, owner, now, lease_ms):
    def body():
        quarantine(conn, now)
        live = conn.execute("SELECT id, status, lease_until, attempts, max_attempts, deadline"
                            " FROM jobs WHERE status IN ('pending', 'leased')"
                            " ORDER BY id LIMIT 5").fetchall()
        for job, status, until, attempts, most, deadline in live:
            free = status == "pending" or until <= now
            if free and attempts < most and deadline > now:
                return lease(conn, job, owner, now, lease_ms)
        return None

    return in_write_transaction(conn, body)


work_once = work_once_with(claim, finish)
