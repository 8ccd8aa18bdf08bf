"""work_once re-reads only the job's token after send and finishes with it.

The worker keeps its stamp but "refreshes" the token from the row before finishing, as if the
token were a version number to catch up with. A worker restarted under the same name that
claimed the job again during the send, after the operator took it back (attempt 1 again, its
lease cut to the same deadline), holds a stamp that differs from the old run's in the token
only: the old run's finish, with the token read back, lands on the new run's lease."""

import dataclasses

from _kit import reference_claim as claim
from _kit import reference_finish as finish

EXPECT_FAIL = {"late-finish-same-name"}
MAY_FAIL = {"random-timelines"}  # the same bug, met again inside a random timeline's send
EXPECT_TEXT = {"late-finish-same-name": "only the token tells the two runs apart"}


def work_once(conn, owner, send, clock, lease_ms):
    c = claim(conn, owner, clock(), lease_ms)
    if c is None:
        return None
    send(c)
    (token,) = conn.execute("SELECT token FROM jobs WHERE id = ?", (c.id,)).fetchone()
    return finish(conn, dataclasses.replace(c, token=token), clock())
