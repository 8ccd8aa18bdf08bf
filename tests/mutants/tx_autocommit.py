"""claim runs its statements with no transaction at all (each one commits on its own).

Between the SELECT and the UPDATE by id nothing is locked: two workers can both pick the same
pending row and both lease it, the second overwriting the first's token."""

from _claim_parts import all_steps
from _kit import reference_finish as finish
from _kit import work_once_with

EXPECT_FAIL = {"claim-in-one-immediate-transaction", "race-one-winner"}
MAY_FAIL = {"claim-rolls-back-on-error"}  # no transaction: the quarantine before a fault stays
EXPECT_TEXT = {"claim-in-one-immediate-transaction": "no transaction at all"}


def claim(conn, owner, now, lease_ms):
    return all_steps(conn, owner, now, lease_ms)


work_once = work_once_with(claim, finish)
