"""work_once re-reads only the job's token after send and finishes with it.

The worker keeps its stamp but "refreshes" the token from the row before finishing, as if the
token were a version number to catch up with. A worker restarted under the same name that
claimed the job again during the send, after the operator took it back (attempt 1 again, a
lease to the same instant), holds a stamp that differs from the old run's in the token
only: the old run's finish, with the token read back, lands on the new run's lease."""

import dataclasses

from _kit import reference_claim as claim  # noqa: F401  (claim and finish are the reference's)
from _kit import reference_finish as finish  # noqa: F401
from _kit import restamped

EXPECT_FAIL = {"late-finish-same-name", "random-timelines"}
EXPECT_TEXT = {"random-timelines": "step(s) happen inside that send",
               "late-finish-same-name": "only the token tells the two runs apart"}


def token_read_back(conn, c):
    (token,) = conn.execute("SELECT token FROM jobs WHERE id = ?", (c.id,)).fetchone()
    return dataclasses.replace(c, token=token)


work_once = restamped(token_read_back)
