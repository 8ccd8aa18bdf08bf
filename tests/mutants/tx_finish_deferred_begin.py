"""finish reads the row inside a plain BEGIN (deferred), compares it in Python, then updates by
id and commits.

The read takes only a read lock; with the rollback journal it cannot become the write lock while
another worker's claim is writing, so SQLite answers the UPDATE with 'database is locked' at
once (no busy wait: waiting would deadlock) and a current stamp's finish fails. The report must
say that, not the read-then-update race of a finish with no transaction (the read lock it holds
keeps the other worker from committing, so no re-claim slips in). Found by an instructor-style
hunt: it was told the race."""

from _claim_parts import transaction
from _finish_steps import is_current, mark_done, read
from _kit import reference_claim as claim
from _kit import work_once_with

EXPECT_FAIL = {"finish-leaves-no-transaction"}
EXPECT_TEXT = {"finish-leaves-no-transaction": "a deferred transaction: its first read takes only"
                                               " a read lock"}
EXPECT_NO_TEXT = {"finish-leaves-no-transaction": "another worker can re-claim the job"}


def finish(conn, claim, now):
    def body():
        current = is_current(read(conn, claim.id), claim, now)
        if current:
            mark_done(conn, claim.id, now)
        return current

    return transaction(conn, "BEGIN", body)


work_once = work_once_with(claim, finish)
