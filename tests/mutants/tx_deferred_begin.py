"""claim opens its transaction with a plain BEGIN (deferred), not BEGIN IMMEDIATE.

A deferred transaction takes the write lock only at its first write: two workers can both run
the SELECT, see the same pending row, and then race for the update."""

from _claim_parts import all_steps, transaction
from _kit import reference_finish as finish
from _kit import work_once_with

EXPECT_FAIL = {"claim-in-one-immediate-transaction"}
EXPECT_TEXT = {"claim-in-one-immediate-transaction": "a deferred transaction"}


def claim(conn, owner, now, lease_ms):
    return transaction(conn, "BEGIN", lambda: all_steps(conn, owner, now, lease_ms))


work_once = work_once_with(claim, finish)
