"""The rules after every call hold the rows to the contract's one model: grader.checks.model's
QueueModel, which the runner hands to each check's Lab (grader.harness.judge.invariants keeps
only the generic rules and writes no model of its own). The model reads rows as SQLite's WHERE
does (a NULL compares as unknown: never true), which these tests hold it to on rows with NULLs
against SQLite itself; and without a model (a copy exported --without-model) the Lab still
holds every call to the connection rules."""

from __future__ import annotations

import random
import sqlite3

import pytest

from grader.checks import contract_model
from grader.checks.model import QueueModel
from grader.harness.judge import invariants
from lab.store import COLUMNS, Claim

#: The contract's conditions as SQL: what a claim quarantines, what it may lease (docs/contract.md).
FREE = "(status = 'pending' OR (status = 'leased' AND lease_until <= :now))"
DUE = f"{FREE} AND (attempts >= max_attempts OR deadline <= :now)"
CLAIMABLE = f"{FREE} AND attempts < max_attempts AND :now < deadline"
FINISHES = ("id = :id AND status = 'leased' AND owner = :owner AND token = :token"
            " AND attempts = :attempt AND lease_until = :lease_until AND :now < lease_until"
            " AND :now < deadline")


def sqlite_table(rows: list[dict]) -> sqlite3.Connection:
    """The rows in a table without constraints: any column may be NULL, as SQLite keeps it."""
    db = sqlite3.connect(":memory:")
    db.execute(f"CREATE TABLE jobs({', '.join(COLUMNS)})")
    db.executemany(f"INSERT INTO jobs VALUES ({', '.join('?' * len(COLUMNS))})",
                   [tuple(row[c] for c in COLUMNS) for row in rows])
    return db


def table(db: sqlite3.Connection) -> dict[int, dict]:
    return {row[0]: dict(zip(COLUMNS, row))
            for row in db.execute(f"SELECT {', '.join(COLUMNS)} FROM jobs ORDER BY id")}


def sqlite_claim(db: sqlite3.Connection, owner: str, now: int, lease_ms: int) -> None:
    db.execute(f"UPDATE jobs SET status = 'quarantined' WHERE {DUE}", {"now": now})
    found = db.execute(f"SELECT id FROM jobs WHERE {CLAIMABLE} ORDER BY id LIMIT 1",
                       {"now": now}).fetchone()
    if found:
        db.execute("UPDATE jobs SET status = 'leased', owner = :owner, token = token + 1,"
                   " attempts = attempts + 1, lease_until = MIN(:now + :lease_ms, deadline)"
                   " WHERE id = :id", {"owner": owner, "now": now, "lease_ms": lease_ms,
                                       "id": found[0]})


def sqlite_finish(db: sqlite3.Connection, claim: Claim, now: int) -> bool:
    return db.execute(f"UPDATE jobs SET status = 'done', finished_at = :now WHERE {FINISHES}",
                      {**vars(claim), "now": now}).rowcount == 1


def random_rows(rng: random.Random) -> list[dict]:
    """A few jobs near the instant 10, each column NULL now and then (those the schema allows to
    be NULL, and the ones it does not: the code under grade may have changed the table)."""
    def maybe(value):
        return None if rng.random() < 0.2 else value

    return [{"id": job, "qty": 1, "status": rng.choice(["pending", "leased", "done",
                                                       "quarantined", None]),
             "owner": maybe(rng.choice("AB")), "lease_until": maybe(rng.randint(8, 12)),
             "token": maybe(rng.randint(0, 2)), "attempts": maybe(rng.randint(0, 3)),
             "max_attempts": maybe(rng.randint(1, 3)), "deadline": maybe(rng.randint(8, 14)),
             "finished_at": None} for job in range(1, rng.randint(1, 5) + 1)]


@pytest.mark.parametrize("seed", range(4))
def test_the_model_compares_as_sqlite_does_on_rows_with_nulls(seed):
    rng = random.Random(seed)
    for _ in range(500):
        rows = random_rows(rng)
        now, owner = rng.randint(8, 12), rng.choice("AB")
        db = sqlite_table(rows)
        sqlite_claim(db, owner, now, 3)
        model = QueueModel.holding({row["id"]: row for row in rows})
        model.claim(owner, now, 3)
        assert model.rows == table(db), (rows, owner, now)

        job = rng.choice(rows)
        claim = Claim(id=job["id"], qty=1, owner=rng.choice("AB"), token=rng.randint(0, 2),
                      attempt=rng.randint(0, 3), lease_until=rng.randint(8, 12))
        db = sqlite_table(rows)
        finished = sqlite_finish(db, claim, now)
        model = QueueModel.holding({row["id"]: row for row in rows})
        assert model.finish(claim, now) is finished, (rows, claim, now)
        assert model.rows == table(db), (rows, claim, now)


def test_null_never_compares_true():
    leased_without_lease = {"id": 1, "qty": 1, "status": "leased", "owner": "A",
                            "lease_until": None, "token": 1, "attempts": 3, "max_attempts": 3,
                            "deadline": 5, "finished_at": None}
    model = QueueModel.holding({1: leased_without_lease})
    assert model.claim("B", 10, 3) is None  # not free: neither quarantined nor claimed
    assert model.rows[1] == leased_without_lease
    assert not model.finish(Claim(1, 1, "A", 1, 3, None), 1)  # NULL = NULL is not true
    pending_null_token = {**leased_without_lease, "status": "pending", "token": None,
                          "attempts": 0, "deadline": 20}
    model = QueueModel.holding({1: pending_null_token})
    claimed = model.claim("B", 10, 3)
    assert claimed.token is None and model.rows[1]["token"] is None  # NULL + 1 is NULL
    assert model.rows[1]["lease_until"] == 13 and model.rows[1]["attempts"] == 1


def test_holding_copies_the_rows():
    rows = {1: {"id": 1, "qty": 1, "status": "pending", "owner": None, "lease_until": None,
                "token": 0, "attempts": 0, "max_attempts": 3, "deadline": 20,
                "finished_at": None}}
    model = QueueModel.holding(rows)
    model.claim("A", 10, 3)
    assert rows[1]["status"] == "pending" and model.rows[1]["status"] == "leased"


def observer_with(rows: list[dict]) -> sqlite3.Connection:
    db = sqlite_table(rows)
    db.isolation_level = None
    return db


ROW = {"id": 1, "qty": 1, "status": "pending", "owner": None, "lease_until": None, "token": 0,
       "attempts": 0, "max_attempts": 3, "deadline": 20, "finished_at": None}


def test_the_rules_hold_each_call_to_the_model_they_are_handed():
    observer = observer_with([ROW, {**ROW, "id": 2}])
    rules = invariants.Rules(observer, model=contract_model())
    assert contract_model() is QueueModel
    before = rules.snapshot()
    # the code leased job 2 where the contract leases job 1 (the lowest id)
    observer.execute("UPDATE jobs SET status = 'leased', owner = 'A', token = 1, attempts = 1,"
                     " lease_until = 13 WHERE id = 2")
    event = {"op": "claim"}
    rules.after_claim(event, before, "A", 10, 3, raised=False)
    broken = rules.broken
    assert broken is not None and (broken.rule, broken.job, broken.event) == ("rows", 1, event)
    assert broken.expected["status"] == "leased" and broken.current["status"] == "pending"


def test_a_call_that_raised_changes_nothing_and_a_right_call_breaks_nothing():
    observer = observer_with([ROW])
    rules = invariants.Rules(observer, model=QueueModel)
    before = rules.snapshot()
    observer.execute("UPDATE jobs SET status = 'leased', owner = 'A', token = 1, attempts = 1,"
                     " lease_until = 13 WHERE id = 1")
    rules.after_claim({}, before, "A", 10, 3, raised=False)
    assert rules.broken is None
    rules.after_claim({}, before, "A", 10, 3, raised=True)
    assert rules.broken is not None and rules.broken.rule == "rows"


def test_without_a_model_the_rules_read_no_rows_and_keep_the_connection_rules():
    observer = observer_with([ROW])
    rules = invariants.Rules(observer, model=None)
    assert rules.snapshot() is None
    observer.execute("UPDATE jobs SET status = 'done' WHERE id = 1")  # no model: not judged
    rules.after_claim({}, None, "A", 10, 3, raised=False)
    assert rules.broken is None
    assert not rules.connection("finish", {}, in_transaction=True, unfinished=None)
    assert rules.broken.rule == "transaction-open"


def test_the_copy_without_the_model_has_no_model_to_hand(monkeypatch):
    """grader.checks.contract_model is None where model.py is left out (export-student
    --without-model: tests/test_export_student.py grades such a copy)."""
    import sys

    import grader.checks

    monkeypatch.setitem(sys.modules, "grader.checks.model", None)  # its import fails: absent
    assert grader.checks.contract_model() is None


@pytest.mark.parametrize("in_transaction, running, rule", [
    ([False], [(0, 0)], None),
    ([False], [None], None),  # not known on this Python: nothing said
    ([], [], None),  # send never called
    ([True], [(0, 0)], "send-in-transaction"),
    ([False], [(1, 0)], "send-statement-running"),  # a cursor read in part, kept across send
    ([False, True], [(0, 0), (0, 1)], "send-in-transaction"),  # the first send that held one
    ([False, False], [(0, 0), (0, 1)], "send-statement-running"),
])
def test_work_once_sends_with_no_lock_held(in_transaction, running, rule):
    """The contract's work_once calls send with no transaction open and no lock held: each
    send's connection state, as the judge read it on the real connection, is held to that;
    the first send that held either breaks the rule, and says which and how many."""
    rules = invariants.Rules(sqlite3.connect(":memory:"), model=None)
    event = {"op": "work_once"}
    rules.sends(event, list(zip(in_transaction, running)))
    broken = rules.broken
    assert (broken and broken.rule) == rule
    if rule == "send-statement-running":
        reads, writes = next(r for r in running if r and any(r))
        assert broken.params == {"function": "work_once", "reads": reads, "writes": writes}
        assert broken.event is event


@pytest.mark.parametrize("sql, lowered", [
    (None, None),  # nothing run
    ("PRAGMA busy_timeout", None),  # read only
    ("PRAGMA busy_timeout = 1000", None),  # as handed
    ("PRAGMA busy_timeout = 30000", None),  # raised: the caller's setting is not cut
    ("PRAGMA busy_timeout = 0", (0, 1000)),
    ("PRAGMA main.busy_timeout(999)", (999, 1000)),
    ("PRAGMA busy_timeout = -5", (0, 1000)),  # SQLite keeps a negative one as 0
])
def test_a_call_leaves_the_busy_timeout_it_was_handed(tmp_path, sql, lowered):
    """The busy timeout is the caller's setting (docs/contract.md): read on the real
    connection once the code ran a PRAGMA that sets, a call that left it below the one the
    connection was handed with breaks the rule, and says both."""
    from tests.test_proxy_conformance import proxy_side
    proxy, host = proxy_side(tmp_path)  # handed with a busy timeout of 1000 ms
    try:
        if sql is not None:
            proxy.execute(sql).fetchall()
        assert host.busy_lowered("main") == lowered
        rules = invariants.Rules(sqlite3.connect(":memory:"), model=None)
        event = {"op": "finish"}
        rules.settings("finish", event, host.busy_lowered("main"))
        if lowered is None:
            assert rules.broken is None
        else:
            assert rules.broken.rule == "busy-timeout-lowered"
            assert rules.broken.params == {"function": "finish", "ms": lowered[0],
                                           "default": 1000}
            assert rules.broken.event is event
    finally:
        host.close_all()


def test_the_busy_timeout_is_not_read_while_no_setting_pragma_ran(tmp_path):
    """No PRAGMA that sets, nothing read: the rule costs the calls of a program that never
    touches the setting no statement."""
    from tests.test_proxy_conformance import proxy_side
    proxy, host = proxy_side(tmp_path)
    try:
        proxy.execute("SELECT count(*) FROM jobs").fetchall()
        ran = []
        host.conns["main"].real.set_trace_callback(ran.append)
        assert host.busy_lowered("main") is None
        assert ran == []
    finally:
        host.close_all()
