"""claim writes the worker's name into its SQL with an f-string instead of a parameter.

A name with a quote ("o'brien") breaks the statement, and a name can inject SQL: every value from
outside goes in as a bound parameter."""

from _claim_parts import UPDATE, in_write_transaction, quarantine, select
from _kit import reference_finish as finish
from _kit import work_once_with

from lab.store import Claim

EXPECT_FAIL = {"random-timelines"}
EXPECT_OUTCOME = {"random-timelines": "errored"}  # the target raised
EXPECT_TEXT = {"random-timelines": "o'brien claims (lease_ms={lease_ms}) → raised OperationalError"}


def claim(conn, owner, now, lease_ms):
    def body():
        quarantine(conn, now)
        job = select(conn, now)
        if job is None:
            return None
        sql = UPDATE.replace(":owner", f"'{owner}'")
        return Claim(*conn.execute(sql, {"now": now, "lease_ms": lease_ms, "id": job}).fetchone())

    return in_write_transaction(conn, body)


work_once = work_once_with(claim, finish)
