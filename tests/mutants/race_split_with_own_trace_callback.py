"""claim is split in two transactions (crash_token_then_lease) and sets its own trace callback.

The bug is crash_token_then_lease's: the token is committed first, the lease written by a second,
autocommit statement. On top of it, claim calls `conn.set_trace_callback(...)` (a debugging aid,
or an attempt to hide): sqlite3 allows one callback per connection, so a grader that installs its
own with plain `set_trace_callback` would no longer see the statements, and the race barrier and
the crash points, which run on that callback, would go blind. The grader keeps its own callback
and calls the student's after it: this mutant fails exactly what crash_token_then_lease fails."""

import logging

from crash_token_then_lease import claim as split_claim
from _kit import reference_finish as finish
from _kit import work_once_with

EXPECT_FAIL = {"claim-in-one-immediate-transaction", "crash-mid-claim-atomic", "race-one-winner"}
MAY_FAIL = {"claim-rolls-back-on-error"}
EXPECT_TEXT = {"claim-in-one-immediate-transaction": "wrote to jobs outside its transaction",
               "crash-mid-claim-atomic": "half", "race-one-winner": "Both processes got a Claim"}

_LOG = logging.getLogger(__name__)


def claim(conn, owner, now, lease_ms):
    conn.set_trace_callback(lambda sql: _LOG.debug("SQL %s", sql))
    return split_claim(conn, owner, now, lease_ms)


work_once = work_once_with(claim, finish)
