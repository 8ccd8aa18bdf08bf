"""finish also requires the row's qty to equal the stamp's (`qty` is not part of the match).

A blind instructor's bug: "matches the stamp in every field" read as every field of the Claim,
when the contract lists them: id, owner, token, attempts == claim.attempt, lease_until. A stamp
that differs in qty alone is the genuine stamp of the current lease and must be accepted;
forged-stamp-id finishes with one last (it scored 100 while no check changed a stamp's qty)."""

from _finish_parts import CONDITIONS
from _kit import reference_claim as claim
from _kit import work_once_with

EXPECT_FAIL = {"forged-stamp-id"}
EXPECT_TEXT = {"forged-stamp-id": "qty is not part of the match"}


def finish(conn, stamp, now):
    sql = ("UPDATE jobs SET status = 'done', finished_at = :now WHERE "
           + " AND ".join((*CONDITIONS, "qty = :qty")))
    return conn.execute(sql, {"now": now, "id": stamp.id, "owner": stamp.owner,
                              "token": stamp.token, "attempt": stamp.attempt,
                              "lease_until": stamp.lease_until, "qty": stamp.qty}).rowcount == 1


work_once = work_once_with(claim, finish)
