"""claim switches the database to WAL ("faster for concurrent workers") before its transaction.

The lab's queue uses the rollback journal; WAL changes who waits for whom and keeps read
snapshots this queue has no use for."""

from _kit import reference_claim, reference_finish as finish
from _kit import work_once_with

EXPECT_FAIL = {"integration-run", "journal-mode-stays-delete", "lock-free-during-send",
               "race-one-winner"}
EXPECT_TEXT = {"journal-mode-stays-delete": "journal_mode=wal"}


def claim(conn, owner, now, lease_ms):
    conn.execute("PRAGMA journal_mode = WAL")
    return reference_claim(conn, owner, now, lease_ms)


work_once = work_once_with(claim, finish)
