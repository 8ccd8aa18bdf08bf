"""claim opens its transaction with BEGIN EXCLUSIVE instead of BEGIN IMMEDIATE.

Safe against double claims, but with the rollback journal it also locks out every reader
(dashboards, the receiver's status page) while it runs; the contract pins BEGIN IMMEDIATE."""

from _claim_parts import all_steps, transaction
from _kit import reference_finish as finish
from _kit import work_once_with

EXPECT_FAIL = {"claim-in-one-immediate-transaction"}
EXPECT_TEXT = {"claim-in-one-immediate-transaction": "EXCLUSIVE locks out readers"}


def claim(conn, owner, now, lease_ms):
    return transaction(conn, "BEGIN EXCLUSIVE", lambda: all_steps(conn, owner, now, lease_ms))


work_once = work_once_with(claim, finish)
