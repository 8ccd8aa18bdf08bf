"""claim stores the worker's name with surrounding spaces stripped: the Claim and the row hold
"A" for worker "A ".

The stamp must hold the values the caller's claim really stored under its own name; "cleaning"
it merges workers " A", "A " and "A" into one."""

from _claim_parts import all_steps, in_write_transaction
from _kit import reference_finish as finish
from _kit import work_once_with

EXPECT_FAIL = {"random-timelines"}
EXPECT_TEXT = {"random-timelines": "Expected: Claim(id={id:1}, qty={qty:1}, owner='A ', token=1"}


def claim(conn, owner, now, lease_ms):
    owner = owner.strip()
    return in_write_transaction(conn, lambda: all_steps(conn, owner, now, lease_ms))


work_once = work_once_with(claim, finish)
