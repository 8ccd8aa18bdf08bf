"""work_once reads the job's token and lease_until back after send and finishes with them.

The worker "refreshes" its stamp before finishing: after send returns it reads token and
lease_until from the row and puts them into its Claim (owner and attempt are its own). If the
job was taken back, requeued (attempts counted again from 1) and claimed anew under the same
name while the send ran, the refreshed stamp is the new run's: the late finish marks the new
run's lease done."""

import dataclasses

from _kit import reference_claim as claim  # noqa: F401  (claim and finish are the reference's)
from _kit import reference_finish as finish  # noqa: F401
from _kit import restamped

EXPECT_FAIL = {"late-finish-same-name", "random-timelines"}
EXPECT_TEXT = {"random-timelines": "step(s) happen inside that send",
               "late-finish-same-name": "they differ only in token 1 / 2"}


def token_and_lease_read_back(conn, c):
    token, lease_until = conn.execute("SELECT token, lease_until FROM jobs WHERE id = ?",
                                      (c.id,)).fetchone()
    return dataclasses.replace(c, token=token, lease_until=lease_until)


work_once = restamped(token_and_lease_read_back)
