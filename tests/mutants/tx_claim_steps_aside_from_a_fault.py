"""claim writes nothing while the connection holds a TEMP trigger (the grader's injected fault).

Otherwise the reference claim: it reads sqlite_temp_master and, when a trigger is there, returns
None without a transaction. The rollback check's faults waited on writes that never came and
passed it ("nothing to inject into"); the job was claimable, so claim had to lease it: the fault
that never fired is a failure."""

from _kit import reference_claim, reference_finish as finish
from _kit import work_once_with

EXPECT_FAIL = {"claim-rolls-back-on-error"}
EXPECT_TEXT = {"claim-rolls-back-on-error": "claim wrote nothing where it had to"}


def claim(conn, owner, now, lease_ms):
    if conn.execute("SELECT count(*) FROM sqlite_temp_master WHERE type = 'trigger'"
                    ).fetchone()[0]:
        return None
    return reference_claim(conn, owner, now, lease_ms)


work_once = work_once_with(claim, finish)
