"""claim runs with no transaction at all, its SELECT and UPDATE naming the table as 'jobs'.

`FROM 'jobs'` and `UPDATE 'jobs'`: SQLite takes a string literal where a table's name stands as
that name, so these are the reference's statements, each committing on its own (the bug of
tx_autocommit). Read from the text, the quoted name is no name: only the quarantine was on jobs,
and a lone statement is atomic, so the shape check passed it (+3); the grader must ask SQLite
which table a statement touches."""

from _claim_parts import SELECT, UPDATE, quarantine
from _kit import reference_finish as finish
from _kit import work_once_with

from lab.store import Claim

EXPECT_FAIL = {"claim-in-one-immediate-transaction", "race-one-winner"}
MAY_FAIL = {"claim-rolls-back-on-error"}  # no transaction: the quarantine before a fault stays
EXPECT_TEXT = {"claim-in-one-immediate-transaction": "no transaction at all"}

QUOTED_SELECT = SELECT.replace("FROM jobs", "FROM 'jobs'", 1)
QUOTED_UPDATE = UPDATE.replace("UPDATE jobs", "UPDATE 'jobs'", 1)


def claim(conn, owner, now, lease_ms):
    quarantine(conn, now)
    row = conn.execute(QUOTED_SELECT, {"now": now}).fetchone()
    if row is None:
        return None
    return Claim(*conn.execute(QUOTED_UPDATE, {"owner": owner, "now": now, "lease_ms": lease_ms,
                                               "id": row[0]}).fetchone())


work_once = work_once_with(claim, finish)
