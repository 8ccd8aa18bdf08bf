"""claim quarantines only when it finds nothing to claim ("clean up when the worker is idle").

Quarantine runs in every claim, before the selection: while there is work, spent and overdue
jobs stay pending or leased, and a busy queue never tells the operator about them."""

from _claim_parts import in_write_transaction, lease, quarantine, select
from _kit import reference_finish as finish
from _kit import work_once_with

LIGHT = True  # a variant: graded here and in drawn worlds, not by the parity and the sweep
EXPECT_FAIL = {"quarantine-past-deadline"}
MAY_FAIL = {"random-timelines"}  # the same bug, met again on a random timeline
EXPECT_TEXT = {"quarantine-past-deadline": "is past its deadline at"}
# issue 38: every call is also held to the contract's rules after it (no transaction or
# statement left open, every row as the model makes it), at the domain's sizes
MAY_FAIL |= {'claim-rolls-back-on-error'}


def claim(conn, owner, now, lease_ms):
    def body():
        job = select(conn, now)
        if job is None:
            quarantine(conn, now)
            return None
        return lease(conn, job, owner, now, lease_ms)

    return in_write_transaction(conn, body)


work_once = work_once_with(claim, finish)
