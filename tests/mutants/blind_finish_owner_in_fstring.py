"""finish writes the stamp's owner into its SQL with an f-string instead of a parameter.

A name with a quote ("o'brien") breaks the statement, and a name can inject SQL: every value from
outside goes in as a bound parameter."""

from _finish_parts import CONDITIONS, update_where
from _kit import reference_claim as claim
from _kit import work_once_with

EXPECT_FAIL = {"random-timelines"}
EXPECT_OUTCOME = {"random-timelines": "errored"}  # the target raised
EXPECT_TEXT = {"random-timelines": "o'brien finishes with token=1 → raised OperationalError"}


def finish(conn, claim, now):
    conditions = [c.replace(":owner", f"'{claim.owner}'") for c in CONDITIONS]
    return update_where(conn, claim, now, conditions).rowcount == 1


work_once = work_once_with(claim, finish)
