"""claim refuses an empty owner name (`raise ValueError`) instead of leasing the job to it.

The contract grades every str owner: "" is a name like any other (only owners that are not
strings are left open). Found by a blind set written from the contract alone: no timeline
claimed with an empty name; the random timelines' names now include it."""

from _kit import reference_claim, reference_finish as finish
from _kit import work_once_with

EXPECT_FAIL = {"random-timelines"}
EXPECT_OUTCOME = {"random-timelines": "errored"}
EXPECT_TEXT = {"random-timelines": "owner must be a worker's name"}


def claim(conn, owner, now, lease_ms):
    if not owner:
        raise ValueError("owner must be a worker's name")
    return reference_claim(conn, owner, now, lease_ms)


work_once = work_once_with(claim, finish)
