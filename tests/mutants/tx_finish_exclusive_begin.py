"""finish reads the row inside BEGIN EXCLUSIVE, compares it in Python, then updates by id and
commits.

Atomic (no other worker can come between the read and the update), but with the rollback
journal EXCLUSIVE also locks out every reader while it runs; the contract pins BEGIN IMMEDIATE.
The report must say that, not the read-then-update race, which cannot happen here. Found by an
instructor-style hunt: it was told the race."""

from _claim_parts import transaction
from _finish_steps import is_current, mark_done, read
from _kit import reference_claim as claim
from _kit import work_once_with

EXPECT_FAIL = {"finish-leaves-no-transaction"}
EXPECT_TEXT = {"finish-leaves-no-transaction": "EXCLUSIVE locks out readers"}
EXPECT_NO_TEXT = {"finish-leaves-no-transaction": "another worker can re-claim the job"}


def finish(conn, claim, now):
    def body():
        current = is_current(read(conn, claim.id), claim, now)
        if current:
            mark_done(conn, claim.id, now)
        return current

    return transaction(conn, "BEGIN EXCLUSIVE", body)


work_once = work_once_with(claim, finish)
