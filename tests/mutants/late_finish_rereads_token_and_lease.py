"""work_once reads the job's token and lease_until back after send and finishes with them.

The worker "refreshes" its stamp before finishing: after send returns it reads token and
lease_until from the row and puts them into its Claim (owner and attempt are its own). If the
job was taken back, requeued (attempts counted again from 1) and claimed anew under the same
name while the send ran, the refreshed stamp is the new run's: the late finish marks the new
run's lease done."""

import dataclasses

from _kit import reference_claim as claim
from _kit import reference_finish as finish

EXPECT_FAIL = {"late-finish-same-name"}
MAY_FAIL = {"random-timelines"}  # the same bug, met again inside a random timeline's send
EXPECT_TEXT = {"late-finish-same-name": "they differ only in token 1 / 2"}


def work_once(conn, owner, send, clock, lease_ms):
    c = claim(conn, owner, clock(), lease_ms)
    if c is None:
        return None
    send(c)
    token, lease_until = conn.execute("SELECT token, lease_until FROM jobs WHERE id = ?",
                                      (c.id,)).fetchone()
    return finish(conn, dataclasses.replace(c, token=token, lease_until=lease_until), clock())
