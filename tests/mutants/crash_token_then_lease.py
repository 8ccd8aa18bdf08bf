"""claim commits the new token and attempt first, and writes the lease in a second statement.

The token bump (token+1, attempts+1) is committed in one transaction, then status, owner and
lease_until are set by a separate autocommit UPDATE. A worker that dies between the two leaves a
half-claimed row: a token and an attempt used up, yet the job still 'pending' with no owner.
Alone and uninterrupted, it returns the same Claim as the reference."""

from _claim_parts import QUARANTINE, select, transaction
from _kit import reference_finish as finish
from _kit import work_once_with

from lab.store import Claim

# Two workers at once: the race's barrier runs the other claim between the two steps, where it
# still sees the job pending, so both get a Claim (on every run).
EXPECT_FAIL = {"claim-in-one-immediate-transaction", "crash-mid-claim-atomic", "race-one-winner"}
MAY_FAIL = {"claim-rolls-back-on-error"}
EXPECT_TEXT = {"crash-mid-claim-atomic": "half", "race-one-winner": "Both processes got a Claim",
               "claim-in-one-immediate-transaction": "wrote to jobs outside its transaction"}


def claim(conn, owner, now, lease_ms):
    def bump():
        conn.execute(QUARANTINE, {"now": now})
        job = select(conn, now)
        if job is not None:
            conn.execute("UPDATE jobs SET token = token + 1, attempts = attempts + 1"
                         " WHERE id = ?", (job,))
        return job

    job = transaction(conn, "BEGIN IMMEDIATE", bump)
    if job is None:
        return None
    stamp = conn.execute(
        "UPDATE jobs SET status = 'leased', owner = ?, lease_until = MIN(? + ?, deadline)"
        " WHERE id = ? RETURNING id, qty, owner, token, attempts, lease_until",
        (owner, now, lease_ms, job)).fetchone()
    return Claim(*stamp)


work_once = work_once_with(claim, finish)
