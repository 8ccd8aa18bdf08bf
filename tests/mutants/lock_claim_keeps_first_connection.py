"""claim keeps the first connection it was given in a global and claims on it ever after,
whatever connection the caller hands it.

While a connection of the grader's holds the write lock, the connection the check hands claim
waits 1 ms and raises; the kept one waits its own 5 s busy timeout, and claim does not return
within the check's timeout: *timed out*, with the cause (it waited on another connection than
the one it was given), never "the grader itself failed" (the check's clean-up, which asks the
target process once more, used to turn the timeout into a grader bug). Where the first
connection was closed since, claim raises ProgrammingError."""

from _kit import reference_claim, reference_finish, work_once_with

EXPECT_FAIL = {"locked-database-raises", "crash-mid-claim-atomic", "random-timelines"}
EXPECT_OUTCOME = {"locked-database-raises": "timed_out", "crash-mid-claim-atomic": "errored",
                  "random-timelines": "errored"}
EXPECT_TEXT = {
    "locked-database-raises": "It did not return: it waited on another connection",
    "crash-mid-claim-atomic": "Cannot operate on a closed database",
}
EXPECT_NO_TEXT = {"locked-database-raises": "The grader itself failed"}

_kept = {}


def claim(conn, owner, now, lease_ms):
    conn = _kept.setdefault("conn", conn)  # the first connection it was given, kept for good
    return reference_claim(conn, owner, now, lease_ms)


finish = reference_finish
work_once = work_once_with(claim, finish)
