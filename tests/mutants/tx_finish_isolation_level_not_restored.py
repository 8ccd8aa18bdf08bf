"""finish lets Python's sqlite3 open its transaction (isolation_level = 'IMMEDIATE') and never
sets it back to None.

finish itself is right, and so is every claim after it (an explicit BEGIN IMMEDIATE is never
doubled); but the connection is left in the module's implicit-transaction mode, so the next
plain INSERT/UPDATE on it (the store's enqueue, say) opens a transaction nobody commits."""

from _finish_parts import update_where
from _kit import reference_claim as claim
from _kit import work_once_with

EXPECT_FAIL = {"finish-leaves-no-transaction"}
EXPECT_TEXT = {"finish-leaves-no-transaction": "isolation_level"}


def finish(conn, claim, now):
    conn.isolation_level = "IMMEDIATE"  # the module issues BEGIN IMMEDIATE before the UPDATE
    with conn:  # commits, or rolls back on error
        changed = update_where(conn, claim, now).rowcount == 1
    return changed


work_once = work_once_with(claim, finish)
