"""finish reads the row, then updates 'jobs' (a quoted name) by id: two autocommit statements.

The bug of tx_finish_read_then_update (another worker can re-claim the job between the read and
the update, which then marks its job done), with the UPDATE naming the table by a string literal,
which SQLite takes as the table's name. Read from the text, only the read was on jobs, and a lone
statement is atomic, so the shape check passed it; the grader must ask SQLite which table a
statement touches."""

from _finish_steps import is_current, read
from _kit import reference_claim as claim
from _kit import work_once_with

EXPECT_FAIL = {"finish-leaves-no-transaction"}
EXPECT_TEXT = {"finish-leaves-no-transaction": "not all inside one BEGIN IMMEDIATE"}
LIGHT = True  # tx_finish_read_then_update carries the bug through every suite


def finish(conn, claim, now):
    if not is_current(read(conn, claim.id), claim, now):
        return False
    conn.execute("UPDATE 'jobs' SET status = 'done', finished_at = ? WHERE id = ?",
                 (now, claim.id))
    return True


work_once = work_once_with(claim, finish)
