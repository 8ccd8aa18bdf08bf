"""claim "reserves" the job by writing its owner, reads the owner back, and leases only if the
owner is still its own: a check-then-act in three autocommit statements.

Two claimers that reserve one after the other, each then reading back, are safe: the second
reservation overwrote the first, both read the second owner, and only one goes on. That is the
order in which a lockstep of the two claims runs them (statement 1 together, statement 2
together, ...), so a lockstep passes it on every run. But the reservation does not look at what
it overwrites: when A has reserved, read itself back and is about to lease, B (which read the job
as pending before A's lease committed) reserves it too, reads itself back and leases it as
well: two Claims. Only a schedule in which A runs three statements before B runs its second
shows it. Alone it behaves like the reference."""

from _claim_parts import QUARANTINE, SELECT, in_write_transaction, lease
from _kit import reference_finish as finish
from _kit import work_once_with

EXPECT_FAIL = {"claim-in-one-immediate-transaction", "race-one-winner", "crash-mid-claim-atomic"}
MAY_FAIL = {"random-timelines", "claim-rolls-back-on-error"}
EXPECT_TEXT = {"race-one-winner": "Both processes got a Claim", "crash-mid-claim-atomic": "half"}


def claim(conn, owner, now, lease_ms):
    conn.execute(QUARANTINE, {"now": now})
    row = conn.execute(SELECT, {"now": now}).fetchone()
    if row is None:
        return None
    conn.execute("UPDATE jobs SET owner = :owner WHERE id = :id", {"owner": owner, "id": row[0]})
    mine = conn.execute("SELECT owner FROM jobs WHERE id = :id", {"id": row[0]}).fetchone()
    if mine is None or mine[0] != owner:
        return None  # someone reserved it after us
    return in_write_transaction(conn, lambda: lease(conn, row[0], owner, now, lease_ms))


work_once = work_once_with(claim, finish)
