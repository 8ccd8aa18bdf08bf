"""work_once rebuilds its Claim from get_job after send and finishes with that.

After send returns, the worker reads the job's row with lab.store.get_job and builds the stamp
it finishes with from it (owner, token, attempts, lease_until as the row holds them now). When
another worker re-claimed the job during the send, that is the new holder's stamp, and the late
finish marks the new holder's lease done: the overwrite the lesson exists to prevent."""

from lab.store import Claim, get_job

from _kit import reference_claim as claim
from _kit import reference_finish as finish

EXPECT_FAIL = {"late-finish-lease-taken", "late-finish-same-name"}
MAY_FAIL = {"random-timelines"}  # the same bug, met again inside a random timeline's send
EXPECT_TEXT = {"late-finish-lease-taken": "the late worker's finish must not land",
               "late-finish-same-name": "only the token tells the two runs apart"}


def work_once(conn, owner, send, clock, lease_ms):
    c = claim(conn, owner, clock(), lease_ms)
    if c is None:
        return None
    send(c)
    row = get_job(conn, c.id)
    now = Claim(id=row["id"], qty=row["qty"], owner=row["owner"], token=row["token"],
                attempt=row["attempts"], lease_until=row["lease_until"])
    return finish(conn, now, clock())
