"""claim reads the pending job before BEGIN IMMEDIATE, in a SELECT that opens with a comment.

The bug of race_read_before_begin (two workers can both read the job as pending, then both
update it), hidden behind a `-- comment` at the start of the SELECT's text: the grader must read
past the comment, as SQLite does. Alone, it behaves exactly like the reference."""

from _claim_parts import QUARANTINE, SELECT, lease, transaction
from _kit import reference_finish as finish
from _kit import work_once_with

EXPECT_FAIL = {"claim-in-one-immediate-transaction", "race-one-winner"}
EXPECT_TEXT = {"claim-in-one-immediate-transaction": "outside its transaction",
               "race-one-winner": "Both processes got a Claim"}

COMMENTED_SELECT = "-- pick the next job (nothing holds it yet)\n" + SELECT


def claim(conn, owner, now, lease_ms):
    row = conn.execute(COMMENTED_SELECT, {"now": now}).fetchone()  # autocommit

    def body():
        conn.execute(QUARANTINE, {"now": now})
        return None if row is None else lease(conn, row[0], owner, now, lease_ms)

    return transaction(conn, "BEGIN IMMEDIATE", body)


work_once = work_once_with(claim, finish)
