"""claim switches the database to WAL with the PRAGMA's call syntax and a quoted name:
`PRAGMA "journal_mode"(wal)`.

The same bug as tx_switches_to_wal; the grader read only `PRAGMA journal_mode = ...` from the
SQL text, so this spelling passed race-one-winner and integration-run (94 where the other scores
83). The PRAGMA is now read as SQLite reads it (grader/harness/judge/journal.py)."""

from _kit import reference_claim, reference_finish as finish
from _kit import work_once_with

EXPECT_FAIL = {"integration-run", "journal-mode-stays-delete", "lock-free-during-send",
               "race-one-winner"}
EXPECT_TEXT = {"journal-mode-stays-delete": "journal_mode=wal"}
LIGHT = True  # a spelling of tx_switches_to_wal's bug


def claim(conn, owner, now, lease_ms):
    conn.execute('PRAGMA "journal_mode"(wal)')
    return reference_claim(conn, owner, now, lease_ms)


work_once = work_once_with(claim, finish)
