"""work_once rebuilds its Claim from get_job after send and finishes with that.

After send returns, the worker reads the job's row with lab.store.get_job and builds the stamp
it finishes with from it (owner, token, attempts, lease_until as the row holds them now). When
another worker re-claimed the job during the send, that is the new holder's stamp, and the late
finish marks the new holder's lease done: the overwrite the lesson exists to prevent."""

from lab.store import Claim, get_job

from _kit import reference_claim as claim  # noqa: F401  (claim and finish are the reference's)
from _kit import reference_finish as finish  # noqa: F401
from _kit import restamped

EXPECT_FAIL = {"late-finish-lease-taken", "late-finish-same-name", "random-timelines"}
EXPECT_TEXT = {"random-timelines": "step(s) happen inside that send",
               "late-finish-lease-taken": "the late worker's finish must not land",
               "late-finish-same-name": "only the token tells the two runs apart"}


def claim_from_row(conn, c):
    row = get_job(conn, c.id)
    return Claim(id=row["id"], qty=row["qty"], owner=row["owner"], token=row["token"],
                 attempt=row["attempts"], lease_until=row["lease_until"])


work_once = restamped(claim_from_row)
