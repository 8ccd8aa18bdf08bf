"""claim takes a pending job first and re-claims expired leases only when no pending job is left.

A plausible "fresh work first" policy, but it breaks the lowest-id order: an expired job with a
low id waits behind every pending one."""

from _claim_parts import SELECT, UPDATE, QUARANTINE, in_write_transaction
from _kit import reference_finish as finish
from _kit import work_once_with

from lab.store import Claim

EXPECT_FAIL = {"lowest-id-first"}
# The same bug, met again on a random timeline. (integration-run it passes: F takes the pending
# jobs first and S's expired one last, and every job is still done once. It used to fail there,
# "stuck": the check waited for F to re-claim S's job while F waited for its next turn.)
MAY_FAIL = {"random-timelines"}

CONDITIONS = "attempts < max_attempts AND deadline > :now ORDER BY id LIMIT 1"


def claim(conn, owner, now, lease_ms):
    params = {"owner": owner, "now": now, "lease_ms": lease_ms}

    def body():
        conn.execute(QUARANTINE, params)
        row = (conn.execute(f"SELECT id FROM jobs WHERE status = 'pending' AND {CONDITIONS}",
                            params).fetchone()
               or conn.execute("SELECT id FROM jobs WHERE status = 'leased'"
                               f" AND lease_until <= :now AND {CONDITIONS}", params).fetchone())
        if row is None:
            return None
        return Claim(*conn.execute(UPDATE, {**params, "id": row[0]}).fetchone())

    return in_write_transaction(conn, body)


work_once = work_once_with(claim, finish)
