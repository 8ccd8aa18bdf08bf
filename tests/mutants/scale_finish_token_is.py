"""finish compares the stamp's token and attempt with the row's by identity (`is`), not by
value.

Python keeps one object for each small integer (up to 256) only: past that, equal numbers read
from the database and from the Claim are different objects, and the holder's own finish is
rejected."""

from _claim_parts import transaction
from _kit import reference_claim as claim
from _kit import work_once_with

EXPECT_FAIL = {"lowest-id-first", "random-timelines"}
EXPECT_TEXT = {"lowest-id-first": "never with is"}


def finish(conn, claim, now):
    def body():
        row = conn.execute("SELECT status, owner, token, attempts, lease_until, deadline"
                           " FROM jobs WHERE id = ?", (claim.id,)).fetchone()
        ok = (row is not None and row[0] == "leased" and row[1] == claim.owner
              and row[2] is claim.token and row[3] is claim.attempt
              and row[4] == claim.lease_until and now < row[4] and now < row[5])
        if ok:
            conn.execute("UPDATE jobs SET status = 'done', finished_at = ? WHERE id = ?",
                         (now, claim.id))
        return ok

    return transaction(conn, "BEGIN IMMEDIATE", body)


work_once = work_once_with(claim, finish)
