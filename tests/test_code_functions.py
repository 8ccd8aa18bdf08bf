"""The code's own SQL functions (conn.create_function and its siblings): compute-only callbacks
that run in the target process, called from the judge's SQLite through a stand-in
(grader/harness/judge/callbacks.py, grader/harness/target/functions.py).

In a real target process: every kind computes there (its pid is the target's), a function that
hangs is the call's timeout, one that ends the process is an ended process, and either way the
judge's connection is closed once SQLite gave control back (its lock gone); a function may not
use the connection, a statement of the judge's own never calls one, SQLite's own names and the
grader's cannot be replaced; the judge reads a function's answer strictly. What matches a real
sqlite3 connection call by call is tests/test_proxy_conformance.py's.
"""

from __future__ import annotations

import sqlite3
import time

import pytest

from grader.harness import wire
from grader.harness.judge import callbacks
from grader.harness.judge.target_errors import TargetEnded, TargetTimeout
from grader.harness.wire.values import RaisedInTarget

from conftest import gone
from test_target_process import LEASE_MS, fresh_db, start, write_target

FUNCTIONS = """
import os, threading


class Total:
    def __init__(self):
        self.total = 0

    def step(self, value):
        self.total += value

    def finalize(self):
        return [self.total, os.getpid()][0]


def claim(conn, owner, now, lease_ms):
    conn.create_function("pid", 0, os.getpid)
    conn.create_function("twice", 1, lambda x: x * 2, deterministic=True)
    conn.create_aggregate("summed", 1, Total)
    conn.create_collation("backwards", lambda a, b: (a < b) - (a > b))
    if owner == "compute":
        return repr(conn.execute(
            "SELECT pid(), twice(21), twice('ab'), (SELECT summed(qty) FROM jobs),"
            " (SELECT group_concat(v, '') FROM (SELECT v FROM (SELECT 'a' v UNION ALL"
            " SELECT 'c' UNION ALL SELECT 'b') ORDER BY v COLLATE backwards))").fetchall())
    if owner == "hang":
        conn.create_function("hang", 0, lambda: threading.Event().wait())
        conn.execute("BEGIN IMMEDIATE")
        conn.execute("UPDATE jobs SET qty = qty + 1 WHERE id = 1")
        return conn.execute("SELECT hang()").fetchall()
    if owner == "exit":
        conn.create_function("leave", 0, lambda: os._exit(9))
        conn.execute("BEGIN IMMEDIATE")
        return conn.execute("SELECT leave()").fetchall()
    if owner == "uses conn":
        conn.create_function("reads", 0, lambda: conn.execute("SELECT 1").fetchone()[0])
        try:
            conn.execute("SELECT reads()").fetchall()
        except Exception as exc:
            return f"{type(exc).__name__}: {exc}"
    if owner == "many":
        rows = conn.execute("WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n"
                            " WHERE i < 2000) SELECT sum(twice(i)) FROM n").fetchone()
        return rows[0]
    if owner in ("max", "harness_count", "NOCASE"):
        try:
            if owner == "NOCASE":
                conn.create_collation(owner, lambda a, b: 0)
            else:
                conn.create_function(owner, 1, lambda x: x)
        except Exception as exc:
            return f"{type(exc).__name__}: {exc}"
    return None
"""


@pytest.fixture
def functions(tmp_path):
    path, judge = fresh_db(tmp_path)
    target = start(write_target(tmp_path, FUNCTIONS), path)
    yield target, path, judge
    target.close()
    judge.close()


def test_every_kind_computes_in_the_target_process(functions):
    target, _, _ = functions
    got = target.claim("A", "compute", 0, LEASE_MS)
    assert got == repr([(target.server_pid, 42, "abab", 18, "cba")])


def test_many_calls_in_one_statement(functions):
    target, _, _ = functions
    started = time.monotonic()
    assert target.claim("A", "many", 0, LEASE_MS) == 2000 * 2001
    assert time.monotonic() - started < 8  # 2,000 round trips, well within a call's timeout


def test_a_function_that_hangs_is_the_calls_timeout_and_its_lock_goes(functions):
    target, path, judge = functions
    target.timeout = 1.0
    started = time.monotonic()
    with pytest.raises(TargetTimeout) as timed_out:
        target.claim("A", "hang", 0, LEASE_MS)
    assert timed_out.value.during == "claim"
    assert time.monotonic() - started < 8
    assert gone(target.pid)
    assert not target.db.conns  # closed once SQLite gave control back: no lock is left
    judge.execute("UPDATE jobs SET qty = 1 WHERE id = 2")  # the write lock is free
    assert judge.execute("SELECT qty FROM jobs WHERE id = 1").fetchone() == (5,)  # rolled back


def test_a_function_that_ends_the_process_is_an_ended_process(functions):
    target, _, judge = functions
    with pytest.raises(TargetEnded) as ended:
        target.claim("A", "exit", 0, LEASE_MS)
    assert ended.value.code == 9 and ended.value.during == "claim"
    assert not target.db.conns
    judge.execute("BEGIN IMMEDIATE")
    judge.rollback()


def test_a_function_may_not_use_the_connection(functions):
    target, _, _ = functions
    assert target.claim("A", "uses conn", 0, LEASE_MS) == (
        "OperationalError: user-defined function raised exception")
    target.sync()


def test_a_statement_of_the_judges_own_never_calls_the_code(functions):
    target, _, _ = functions
    target.claim("A", "compute", 0, LEASE_MS)
    with pytest.raises(RaisedInTarget, match="user-defined function raised exception"):
        target.execute("A", "SELECT twice(1)")
    target.sync()


@pytest.mark.parametrize("name", ["max", "harness_count", "NOCASE"])
def test_sqlites_own_names_and_the_graders_cannot_be_replaced(functions, name):
    target, _, _ = functions
    said = target.claim("A", name, 0, LEASE_MS)
    assert said.startswith("NotSupportedError: ") and "not let code replace it" in said
    target.sync()


@pytest.mark.parametrize("call,message", [
    ("call", {"msg": "reply", "id": 1, "result": True}),
    ("call", {"msg": "reply", "id": 1, "result": {"x": 1}}),
    ("call", {"msg": "reply", "id": 1, "result": 2**63}),
    ("call", {"msg": "reply", "id": 1}),
    ("call", {"msg": "reply", "id": 1, "result": 1, "raised": {}}),
    ("call", {"msg": "reply", "id": 1, "result": 1, "drop": []}),
    ("step", {"msg": "reply", "id": 1, "result": 1}),
    ("compare", {"msg": "reply", "id": 1, "result": 2}),
    ("new", {"msg": "reply", "id": 1, "result": {"obj": 1, "has": ["__init__"]}}),
    ("new", {"msg": "reply", "id": 1, "result": {"obj": "1", "has": []}}),
])
def test_an_answer_is_read_strictly(call, message):
    with pytest.raises(wire.WireError):
        callbacks.answer({"call": call}, message)


def test_an_answer_gives_sqlite_values_only():
    read = callbacks.answer
    assert read({"call": "call"}, {"msg": "reply", "id": 1, "result": {"b": "AA=="}}) == b"\0"
    assert read({"call": "call"}, {"msg": "reply", "id": 1, "result": {"i": "+"}}) == 2**63
    assert read({"call": "compare"}, {"msg": "reply", "id": 1, "result": -1}) == -1
    with pytest.raises(callbacks.CollationRaised):
        read({"call": "compare"}, {"msg": "reply", "id": 1, "raised": {}})
    with pytest.raises(callbacks.FunctionRaised):
        read({"call": "call"}, {"msg": "reply", "id": 1, "refused": "no"})
    assert issubclass(callbacks.FunctionRaised, Exception)
    assert not issubclass(callbacks.FunctionRaised, sqlite3.Error)


def test_values_too_long_for_the_channel_fail_the_statement_not_the_target(tmp_path):
    """An argument or a result longer than one message on the channel fails the function (its
    statement: "user-defined function raised exception"), and the target goes on."""
    path, judge = fresh_db(tmp_path)
    target = start(write_target(tmp_path, '''
def claim(conn, owner, now, lease_ms):
    conn.create_function("big", 1, lambda n: "x" * n)
    conn.create_function("size", 1, len)
    said = []
    for sql in ("SELECT size(zeroblob(4000000))", "SELECT big(4194000)", "SELECT size('a')"):
        try:
            said.append(conn.execute(sql).fetchone()[0])
        except Exception as exc:
            said.append(str(exc))
    return repr(said)
'''), path)
    assert target.claim("A", "A", 0, LEASE_MS) == repr(
        ["user-defined function raised exception", "user-defined function raised exception", 1])
    target.sync()
    target.close()
    judge.close()


def test_registrations_are_bounded_per_connection(tmp_path):
    """At most wire.DB_MAX_FUNCTIONS functions a connection (the same name and narg again
    replaces, removing frees one): past it, an OperationalError, and nothing kept."""
    from test_proxy_conformance import proxy_side

    proxy, host = proxy_side(tmp_path)
    try:
        for n in range(wire.DB_MAX_FUNCTIONS):
            proxy.create_function(f"f{n}", 0, lambda n=n: n)
        proxy.create_function("f0", 0, lambda: "again")  # a replacement takes no room
        with pytest.raises(sqlite3.OperationalError, match="too many functions"):
            proxy.create_function("one_more", 0, lambda: 1)
        with pytest.raises(sqlite3.OperationalError, match="no such function"):
            proxy.execute("SELECT one_more()")
        proxy.create_function("f1", 0, None)  # removed: room for one
        proxy.create_function("one_more", 0, lambda: 1)
        assert proxy.execute("SELECT f0(), f255(), one_more()").fetchall() == [("again", 255, 1)]
        assert len(proxy._functions.callables) == wire.DB_MAX_FUNCTIONS
    finally:
        host.close_all()
