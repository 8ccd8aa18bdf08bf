"""The injected fault (grader/checks/faults.py) hits a job moved to a status however it is
written: an UPDATE, or a row rewritten whole with INSERT OR REPLACE; nothing else, and only
while injected."""

from __future__ import annotations

import sqlite3

import pytest

from lab import store

from grader.checks.faults import FAULT_MESSAGE, injected_fault


class FakeLab:
    def __init__(self, conn):
        self.conn, self.notes = conn, []

    def note(self, key, **params):
        self.notes.append(key)


@pytest.fixture
def lab(tmp_path):
    conn = store.connect(tmp_path / "q.db")
    store.init_db(conn)
    store.enqueue(conn, 5, 1_000)
    yield FakeLab(conn)
    conn.close()


REPLACE = ("INSERT OR REPLACE INTO jobs (id, qty, status, token, attempts, max_attempts, deadline)"
           " VALUES (1, 5, ?, 1, 1, 3, 1000)")


@pytest.mark.parametrize("sql, params", [
    ("UPDATE jobs SET status = ? WHERE id = 1", ("leased",)),
    (REPLACE, ("leased",)),
])
def test_the_fault_hits_the_write_that_moves_the_job(lab, sql, params):
    with injected_fault(lab, "leased") as fault:
        with pytest.raises(sqlite3.DatabaseError, match=FAULT_MESSAGE):
            lab.conn.execute(sql, params)
    assert fault.fired == 1
    assert store.get_job(lab.conn, 1)["status"] == "pending"


def test_other_writes_pass_and_the_fault_is_gone_afterwards(lab):
    with injected_fault(lab, "done") as fault:
        lab.conn.execute("UPDATE jobs SET status = 'leased' WHERE id = 1")
        lab.conn.execute(REPLACE, ("leased",))
    assert fault.fired == 0
    lab.conn.execute(REPLACE, ("done",))
    assert store.get_job(lab.conn, 1)["status"] == "done"
    assert lab.notes == ["note.fault-injected", "note.fault-removed"]
