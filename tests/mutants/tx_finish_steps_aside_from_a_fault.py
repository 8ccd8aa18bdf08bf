"""finish writes nothing while the connection holds a TEMP trigger (the grader's injected fault).

Otherwise the reference finish: it reads sqlite_temp_master and, when a trigger is there,
answers as the reference would (True: the stamp is current) without the UPDATE. The rollback
check's fault waited on a write that never came and passed it ("nothing to inject into"); the
stamp was current, so finish had to write: the fault that never fired is a failure."""

from _kit import reference_claim as claim
from _kit import reference_finish, work_once_with

EXPECT_FAIL = {"finish-leaves-no-transaction"}
EXPECT_TEXT = {"finish-leaves-no-transaction": "finish wrote nothing where it had to"}


def finish(conn, claim, now):
    if conn.execute("SELECT count(*) FROM sqlite_temp_master WHERE type = 'trigger'"
                    ).fetchone()[0]:
        return now < claim.lease_until
    return reference_finish(conn, claim, now)


work_once = work_once_with(claim, finish)
