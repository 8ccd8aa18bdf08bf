"""finish reads the row, compares it in Python, then updates by id: two autocommit statements.

Between the read and the update another worker can re-claim the job (A's lease ran out): A's
update by id then marks B's job done, the very overwrite the token exists to prevent."""

from _finish_steps import is_current, mark_done, read
from _kit import reference_claim as claim
from _kit import work_once_with

EXPECT_FAIL = {"finish-leaves-no-transaction"}
EXPECT_TEXT = {"finish-leaves-no-transaction": "not all inside one BEGIN IMMEDIATE"}


def finish(conn, claim, now):
    if not is_current(read(conn, claim.id), claim, now):
        return False
    mark_done(conn, claim.id, now)
    return True


work_once = work_once_with(claim, finish)
