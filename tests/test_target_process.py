"""The target process (grader/harness/target/server.py, target_client.py, wire.py): the code under
grade runs in a process of its own and the judge gets plain, validated data only.

Against the reference, every call through the proxy gives what a direct call gives (nested calls
from inside send included). Against small hostile targets written to tmp_path, nothing they do
(print, write to fds 0-20, find the channel and write on it, return lying objects, exit, hang)
is taken for an answer: it is a validated value, an ended process, a timeout or a ProtocolError.
No test sleeps to order events; the only wall-clock waits are the safety-net timeouts.
"""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from lab import store
from lab.store import Claim
from grader.harness import wire
from grader.harness.judge.target_client import TargetProcess
from grader.harness.judge.target_errors import (ProtocolError, RequestRefused, SendFailed,
                                                TargetClosed, TargetEnded, TargetLoadError,
                                                TargetTimeout)
from grader.harness.wire.values import Foreign, RaisedInTarget, decode_value, encode_value

from conftest import CHANNEL_FDS, gone

ROOT = Path(__file__).resolve().parent.parent
LEASE_MS = 1000
DEADLINE = 1_000_000


# -- helpers ---------------------------------------------------------------------------------------
class Clock:
    """A logical clock: every reading is recorded; `send` moves it."""

    def __init__(self, now: int = 0):
        self.now = now
        self.readings: list[int] = []

    def __call__(self) -> int:
        self.readings.append(self.now)
        return self.now


def fresh_db(tmp_path: Path, name: str = "queue.db",
             jobs: int = 3) -> tuple[Path, sqlite3.Connection]:
    """A database with `jobs` pending jobs (qty 5, 6, ...) and the judge's own connection to it."""
    path = tmp_path / name
    conn = store.connect(path, busy_timeout_ms=1000)
    store.init_db(conn)
    for n in range(jobs):
        store.enqueue(conn, qty=5 + n, deadline=DEADLINE)
    return path, conn


@pytest.fixture
def reference(tmp_path):
    """The reference in a target process, with connection "A" open on a fresh database."""
    path, judge = fresh_db(tmp_path)
    with TargetProcess("solutions.queue", timeout=10) as target:
        target.open("A", path)
        yield target, path, judge
    judge.close()


def write_target(tmp_path: Path, body: str, name: str = "hostile.py") -> str:
    """A target file: the reference's three functions, with `body` appended (it may override)."""
    source = "from solutions.queue import claim, finish, work_once\n" + textwrap.dedent(body)
    path = tmp_path / name
    path.write_text(source, encoding="utf-8")
    return str(path)


def start(spec: str, path: Path, timeout: float = 10, jail: bool = True) -> TargetProcess:
    target = TargetProcess(spec, timeout=timeout, jail=jail)
    target.open("A", path)
    return target


# -- against the reference -------------------------------------------------------------------------
def test_the_proxy_reads_the_state_the_judge_last_sent_also_when_a_message_leaves_it_out(
        tmp_path, monkeypatch):
    """A call's request and a db reply carry the connection's state only when it is not the
    one last sent for it (docs/protocol.md); what the code reads without asking is still the
    real connection's: after a statement of the judge's own between two calls (total_changes
    moved), after a call that changed nothing, and on a connection opened again."""
    spec = write_target(tmp_path, """
        def claim(conn, owner, now, lease_ms):
            if owner == "peek":
                return f"{conn.in_transaction} {conn.total_changes} {conn.isolation_level}"
            if owner == "open":
                conn.execute("BEGIN")
                return f"{conn.in_transaction} {conn.total_changes}"
            if owner == "close":
                conn.execute("COMMIT")
                return f"{conn.in_transaction} {conn.total_changes}"
            return "?"
        """)
    path, judge = fresh_db(tmp_path)
    sent = []
    with start(spec, path) as target:
        real_send = target._send
        monkeypatch.setattr(target, "_send", lambda message, during: (
            sent.append(message), real_send(message, during))[1])
        assert target.claim("A", "peek", 0, LEASE_MS) == "False 0 None"
        assert target.claim("A", "peek", 0, LEASE_MS) == "False 0 None"
        target.execute("A", "UPDATE jobs SET qty = qty + 1")  # the judge's own: 3 changes
        assert target.claim("A", "peek", 0, LEASE_MS) == "False 3 None"
        assert target.claim("A", "open", 0, LEASE_MS) == "True 3"
        assert target.claim("A", "peek", 0, LEASE_MS) == "True 3 None"
        assert target.claim("A", "close", 0, LEASE_MS) == "False 3"
        target.open("A", path)  # a new connection: a new proxy, its state sent again
        assert target.claim("A", "peek", 0, LEASE_MS) == "False 0 None"
    calls = [m for m in sent if m.get("op") == "claim"]
    assert ["state" in m for m in calls] == [True, False, True, False, False, False, True]
    assert ["path" in m for m in calls] == [True, False, False, False, False, False, True]
    replies = [m["res"] for m in sent if m.get("op") == "db"]  # BEGIN, COMMIT: state moved
    assert [r["state"]["in_transaction"] for r in replies] == [True, False]
    judge.close()


def test_claim_and_finish_give_what_direct_calls_give(tmp_path, reference):
    from solutions import queue as ref

    target, _, judge = reference
    direct_path, direct = fresh_db(tmp_path, "direct.db")
    steps = [("claim", "A", 0), ("claim", "B", 10), ("finish", 0, 999), ("finish", 1, 1010),
             ("claim", "C", 1000), ("finish", 0, 5), ("claim", "D", 2000), ("claim", "E", 2000),
             ("claim", "F", 2000)]
    got, expected = [], []
    for step in steps:
        if step[0] == "claim":
            got.append(target.claim("A", step[1], step[2], LEASE_MS))
            expected.append(ref.claim(direct, step[1], step[2], LEASE_MS))
        else:
            got.append(target.finish("A", got[step[1]], step[2]))
            expected.append(ref.finish(direct, expected[step[1]], step[2]))
    assert got == expected
    assert [type(x) for x in got] == [type(x) for x in expected]
    assert type(got[0]) is Claim and got[-1] is None and got[2] is True and got[5] is False
    for job in (1, 2, 3):
        assert store.get_job(judge, job) == store.get_job(direct, job)
    direct.close()


def test_statements_are_traced_per_call_on_named_connections(reference):
    target, _, _ = reference
    target.claim("A", "A", 0, LEASE_MS)
    sql = [s for conn, s, _ in target.statements]
    assert {conn for conn, _, _ in target.statements} == {"A"}
    assert sql[0] == "BEGIN IMMEDIATE" and sql[-1] == "COMMIT" and len(sql) == 5
    assert target.in_transaction("A") is False  # read by the judge: not a call, runs no SQL
    assert len(target.statements) == 5
    target.claim("A", "B", 0, LEASE_MS)
    target.sync()
    assert len(target.statements) == 5  # sync keeps the last call's statements


def test_work_once_with_a_nested_claim_inside_send(tmp_path, reference):
    """The lock probe's shape: inside A's send, ask in_transaction and claim as B on another
    connection (a short busy timeout: a held lock would fail it); all of it matches direct calls."""
    from solutions import queue as ref

    target, path, judge = reference
    target.open("B", path, busy_timeout_ms=150)

    def run(work_once, in_transaction, claim_b):
        clock, seen = Clock(0), {}

        def send(claim):
            seen["sent"] = claim
            seen["in_transaction"] = in_transaction()
            seen["b"] = claim_b(clock.now)
            clock.now += 999
        seen["result"] = work_once(send, clock)
        seen["readings"] = clock.readings
        return seen

    via_proxy = run(lambda send, clock: target.work_once("A", "A", send, clock, LEASE_MS),
                    lambda: target.in_transaction("A"),
                    lambda now: target.claim("B", "B", now, LEASE_MS))
    nested_statements = target.statements  # the last call to finish was work_once
    direct_path, direct = fresh_db(tmp_path, "direct.db")
    direct_b = store.connect(direct_path, busy_timeout_ms=150)
    directly = run(lambda send, clock: ref.work_once(direct, "A", send, clock, LEASE_MS),
                   lambda: direct.in_transaction,
                   lambda now: ref.claim(direct_b, "B", now, LEASE_MS))
    assert via_proxy == directly
    assert via_proxy["sent"] == Claim(id=1, qty=5, owner="A", token=1, attempt=1, lease_until=1000)
    assert via_proxy["b"] == Claim(id=2, qty=6, owner="B", token=1, attempt=1, lease_until=1000)
    assert via_proxy["result"] is True and via_proxy["readings"] == [0, 999]
    assert store.get_job(judge, 1)["finished_at"] == 999
    # work_once's own statements are A's; B's claim was a call of its own
    assert {conn for conn, _, _ in nested_statements} == {"A"}
    assert nested_statements[-1][1].startswith("UPDATE jobs SET status = 'done'")
    direct.close()
    direct_b.close()


def test_clock_reading_after_send_decides_finish(reference):
    target, _, judge = reference
    clock = Clock(0)

    def send(claim):
        clock.now += LEASE_MS + 1  # the lease runs out while sending
    assert target.work_once("A", "A", send, clock, LEASE_MS) is False
    assert clock.readings == [0, 1001]
    assert store.get_job(judge, 1)["status"] == "leased"


def test_a_cursor_freed_before_send_holds_no_lock_while_send_runs(tmp_path):
    """work_once's claim read one row of three and let its cursor go (it returned): a real
    cursor's statement is reset as it is freed, so while send runs no lock is left and another
    connection writes at once. The judge is told of the freed cursor with the callback."""
    path, judge = fresh_db(tmp_path)
    spec = write_target(tmp_path, """
        from solutions.queue import claim as _claim
        def claim(conn, owner, now, lease_ms):
            rows = conn.execute("SELECT id FROM jobs")
            rows.fetchone()
            return _claim(conn, owner, now, lease_ms)  # rows is freed as claim returns
        def work_once(conn, owner, send, clock, lease_ms):
            c = claim(conn, owner, clock(), lease_ms)
            send(c)
            return finish(conn, c, clock())
    """)
    seen = []
    judge.execute("PRAGMA busy_timeout = 0")
    with start(spec, path) as target:
        def send(claim):
            seen.append(target.unfinished("A"))
            judge.execute("UPDATE jobs SET qty = qty WHERE id = 3")  # locked: raises
        assert target.work_once("A", "A", send, Clock(0), LEASE_MS) is True
        target.sync()
    assert seen == [(0, 0)]
    judge.close()


def test_send_raising_comes_out_of_work_once_as_data(reference):
    target, _, judge = reference
    sent = []

    def send(claim):
        sent.append(claim)
        raise SendFailed("connection reset by the receiver")
    with pytest.raises(RaisedInTarget) as raised:
        target.work_once("A", "A", send, Clock(0), LEASE_MS)
    error = raised.value
    assert error.function == "work_once"
    assert error.type == "grader.harness.target.server.SendFailed"
    assert error.message == "SendFailed: connection reset by the receiver"
    assert error.send_failed == "same" and not error.not_implemented and error.sqlite_error is None
    assert error.where.endswith(("solutions/queue.py:" + str(_line_of_send()),))
    assert len(sent) == 1 and store.get_job(judge, 1)["status"] == "leased"
    assert target.in_transaction("A") is False


@pytest.mark.parametrize("builtin", [ConnectionError, TimeoutError])
def test_send_failing_as_a_network_error_is_that_error_in_the_target(tmp_path, builtin):
    """A judge's SendFailed that is also a ConnectionError (TimeoutError) is one in the target
    too: code that catches only network errors catches it; uncaught, it is the very one."""
    path, judge = fresh_db(tmp_path)
    spec = write_target(tmp_path, """
        def work_once(conn, owner, send, clock, lease_ms):
            c = claim(conn, owner, clock(), lease_ms)
            try:
                send(c)
            except (ConnectionError, TimeoutError) as exc:
                if owner == "catch":
                    return type(exc).__name__
                raise
            return finish(conn, c, clock())
        """)

    class Lost(SendFailed, builtin):
        pass

    def send(claim):
        raise Lost("the receiver did not answer")
    with start(spec, path) as target:
        assert target.work_once("A", "catch", send, Clock(0), LEASE_MS) == builtin.__name__
        with pytest.raises(RaisedInTarget) as raised:
            target.work_once("A", "A", send, Clock(0), LEASE_MS)
    error = raised.value
    assert error.type == f"grader.harness.target.server.{builtin.__name__}"
    assert error.message == f"{builtin.__name__}: the receiver did not answer"
    assert error.send_failed == "same"
    judge.close()


def test_send_interrupted_is_a_keyboard_interrupt_in_the_target_and_no_exception(tmp_path):
    """A judge's SendFailed that is also a KeyboardInterrupt is, in the target, a
    KeyboardInterrupt alone, as Ctrl-C's is: `except Exception` does not catch it, `except
    KeyboardInterrupt` does; uncaught, it comes out of work_once as the very one. And a send
    that returns wire.SEND_OBJECT returns a plain object there: no JSON, no str."""
    path, judge = fresh_db(tmp_path)
    spec = write_target(tmp_path, """
        import json

        def work_once(conn, owner, send, clock, lease_ms):
            c = claim(conn, owner, clock(), lease_ms)
            try:
                answer = send(c)
            except Exception:
                return "an Exception"
            except KeyboardInterrupt as exc:
                if owner == "catch":
                    return type(exc).__name__
                raise
            try:
                json.dumps(answer)
            except TypeError:
                return "an object: " + type(answer).__name__
            return "data"
        """)

    class Interrupted(SendFailed, KeyboardInterrupt):
        pass

    def send(claim):
        raise Interrupted("interrupted")
    with start(spec, path) as target:
        assert target.work_once("A", "catch", send, Clock(0), LEASE_MS) == "KeyboardInterrupt"
        with pytest.raises(RaisedInTarget) as raised:
            target.work_once("A", "A", send, Clock(0), LEASE_MS)
        assert target.work_once("A", "A", lambda claim: wire.SEND_OBJECT, Clock(0),
                                LEASE_MS) == "an object: SendReceipt"
    error = raised.value
    assert error.type == "grader.harness.target.server.KeyboardInterrupt"
    assert error.send_failed == "same"
    judge.close()


def test_a_clock_the_target_reads_itself_answers_as_the_judges_would(tmp_path):
    """clock_script (now, per_send): no clock callback crosses the channel, and every reading
    is what a judge's clock that each send moves on by per_send would answer: before the send,
    after it, after a send that raised, after two sends, from another thread while work_once
    runs (answered too)."""
    path, judge = fresh_db(tmp_path, jobs=4)
    spec = write_target(tmp_path, """
        import threading
        readings = []

        def work_once(conn, owner, send, clock, lease_ms):
            readings.append(clock())
            c = claim(conn, owner, clock(), lease_ms)
            for _ in range(2 if owner == "twice" else 1):
                try:
                    send(c)
                except Exception as exc:
                    readings.append(type(exc).__name__)
            readings.append(clock())
            if owner == "thread":
                caught = []
                t = threading.Thread(target=lambda: caught.append(_try(clock)))
                t.start()
                t.join()
                readings.append(caught[0])
            return str(readings)

        def _try(clock):
            try:
                return clock()
            except RuntimeError as exc:
                return str(exc)
        """)
    calls = []
    original = TargetProcess._callback

    def recording(self, frame, message):
        calls.append(message.get("name"))
        return original(self, frame, message)

    def failing(claim):
        raise SendFailed("no answer")
    with start(spec, path) as target:
        TargetProcess._callback = recording
        try:
            first = target.work_once("A", "A", lambda c: None, None, LEASE_MS,
                                     clock_script=(100, 30))
            assert first == str([100, 130])
            raised = target.work_once("A", "B", failing, None, LEASE_MS,
                                      clock_script=(200, 5))
            assert raised.endswith("130, 200, 'SendFailed', 205]")
            twice = target.work_once("A", "twice", lambda c: None, None, LEASE_MS,
                                     clock_script=(300, 7))
            assert twice.endswith("205, 300, 314]")
            threaded = target.work_once("A", "thread", lambda c: None, None, LEASE_MS,
                                        clock_script=(400, 1))
            assert threaded.endswith("314, 400, 401, 401]")
        finally:
            TargetProcess._callback = original
    assert calls == ["send"] * 5  # never a clock callback
    judge.close()


def test_a_clock_callback_during_a_work_once_whose_clock_the_target_reads_is_refused(tmp_path):
    """With clock_script the judge has no clock to call: a target that calls back for one
    anyway breaks the protocol (the proxy says so, and is closed)."""
    path, judge = fresh_db(tmp_path)
    with start("solutions.queue", path) as target:
        original = target._send

        def drop_script(message, *args, **kwargs):  # as a target that ignores the script would
            message.pop("clock", None)
            return original(message, *args, **kwargs)
        target._send = drop_script
        with pytest.raises(ProtocolError, match="clock callback during a work_once whose clock"):
            target.work_once("A", "A", lambda c: None, None, LEASE_MS, clock_script=(0, 0))
    judge.close()


def _line_of_send() -> int:
    lines = (ROOT / "solutions" / "queue.py").read_text(encoding="utf-8").splitlines()
    return next(n for n, line in enumerate(lines, 1) if line.strip().startswith("send(c)"))


def test_empty_queue_work_once_returns_none_and_never_sends(tmp_path):
    path, judge = fresh_db(tmp_path, jobs=0)
    with start("solutions.queue", path) as target:
        sent = []
        assert target.work_once("A", "A", sent.append, Clock(0), LEASE_MS) is None
        assert sent == []
    judge.close()


def test_setup_sql_temp_trigger_fault_and_rollback(reference):
    """faults.py's shape: a TEMP trigger on A aborts the claim's UPDATE; the reference rolls back
    and re-raises; B (no trigger: TEMP) and the judge are not blocked."""
    target, path, judge = reference
    target.execute("A", "CREATE TEMP TRIGGER fault BEFORE UPDATE ON jobs"
                        " WHEN NEW.status = 'leased' AND harness_count('fault')"
                        " BEGIN SELECT RAISE(ABORT, 'injected fault'); END")
    assert target.count("fault") == 0
    with pytest.raises(RaisedInTarget) as raised:
        target.claim("A", "A", 0, LEASE_MS)
    assert raised.value.sqlite_error == "IntegrityError"
    assert raised.value.message == "IntegrityError: injected fault"
    assert raised.value.where.startswith("solutions") and "queue.py:" in raised.value.where
    assert [sql for _, sql, _ in target.statements][-1] == "ROLLBACK"
    assert target.count("fault") == 1  # counted although the statement was aborted
    assert target.in_transaction("A") is False
    judge.execute("BEGIN IMMEDIATE")  # the write lock is free
    judge.execute("ROLLBACK")
    target.open("B", path)
    assert target.claim("B", "B", 0, LEASE_MS).id == 1
    target.execute("A", "DROP TRIGGER temp.fault")
    assert target.claim("A", "A", 0, LEASE_MS).id == 2


def test_setup_sql_with_parameters_and_its_errors(reference):
    target, _, judge = reference
    target.execute("A", "UPDATE jobs SET qty = ? WHERE id = ?", [42, 1])
    assert store.get_job(judge, 1)["qty"] == 42
    with pytest.raises(RaisedInTarget) as raised:
        target.execute("A", "SELECT * FROM no_such_table")
    assert raised.value.sqlite_error == "OperationalError"
    with pytest.raises(TypeError):
        target.execute("A", "SELECT ?", [object()])


def test_unknown_connection_is_refused_and_the_proxy_goes_on(reference):
    target, _, _ = reference
    with pytest.raises(RequestRefused):
        target.claim("nope", "A", 0, LEASE_MS)
    assert target.claim("A", "A", 0, LEASE_MS).id == 1


def test_judge_side_arguments_are_checked_before_sending(reference):
    target, _, _ = reference
    with pytest.raises(TypeError):
        target.claim("A", "A", True, LEASE_MS)  # a bool is not an int
    with pytest.raises(TypeError):
        target.finish("A", {"id": 1}, 0)
    assert target.claim("A", "A", 0, LEASE_MS).id == 1


def test_a_judge_callback_error_kills_the_target_and_propagates(reference):
    target, _, _ = reference

    def send(claim):
        raise KeyError("the judge's own bug")
    with pytest.raises(KeyError):
        target.work_once("A", "A", send, Clock(0), LEASE_MS)
    assert gone(target.pid)
    with pytest.raises(TargetClosed):
        target.in_transaction("A")


def test_the_judge_never_imports_the_code_under_grade(tmp_path):
    path, judge = fresh_db(tmp_path, jobs=4)  # two for each target
    judge.close()
    file_target = write_target(tmp_path, "")
    script = textwrap.dedent(f"""
        import json, sys
        from grader.harness.judge.target_client import TargetProcess
        for spec in ("solutions.queue", {file_target!r}):
            with TargetProcess(spec) as target:
                target.open("A", {str(path)!r})
                claim = target.claim("A", "A", 0, 1000)
                assert claim.owner == "A", claim
                assert target.work_once("A", "W", lambda c: None, lambda: 0, 1000) is True
        print(json.dumps(sorted(m for m in sys.modules if m in
              ("lab.queue", "solutions.queue", "solutions", "graded_target", "hostile")
              or m.startswith("grader.harness.target.server"))))
    """)
    out = subprocess.run([sys.executable, "-c", script], cwd=ROOT, capture_output=True,
                         text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout) == []


# -- loading ---------------------------------------------------------------------------------------
@pytest.mark.parametrize("source, kind", [
    ("def claim(:\n", "syntax-error"),
    ("raise RuntimeError('boom at import')\n", "import-error"),
    ("import sys\nsys.exit(4)\n", "import-error"),
    ("def claim(): pass\n", "missing-function"),
])
def test_load_errors_are_reported_as_data(tmp_path, source, kind):
    spec = tmp_path / "broken.py"
    spec.write_text(source, encoding="utf-8")
    with pytest.raises(TargetLoadError) as raised:
        TargetProcess(str(spec))
    assert raised.value.kind == kind


def test_os_exit_at_import_is_an_ended_process(tmp_path):
    spec = write_target(tmp_path, "import os\nos._exit(9)\n")
    with pytest.raises(TargetEnded) as ended:
        TargetProcess(spec)
    assert ended.value.code == 9 and ended.value.during == "start-up"


# -- hostile targets -------------------------------------------------------------------------------
FORGED = (b'{"msg":"ready","pid":1}\n{"msg":"reply","id":2,"value":{"kind":"claim","value":'
          b'{"id":1,"qty":1,"owner":"X","token":99,"attempt":1,"lease_until":9}},'
          b'"statements":[],"dropped":0}\ngarbage \xff\xfe\n')

NOISY = f"""
import os, sys
FORGED = {FORGED!r}

def scribble():
    print("hello from the target", FORGED)
    print("on stderr", file=sys.stderr)
    for fd in range(21):
        try:
            os.write(fd, FORGED)
        except OSError:
            pass

scribble()
_claim = claim

def claim(conn, owner, now, lease_ms):
    result = _claim(conn, owner, now, lease_ms)
    scribble()  # after the claim: fd 3.. may be the database file, which this may well break
    return result
"""


def test_output_on_fds_0_to_20_is_not_taken_for_an_answer(tmp_path):
    path, judge = fresh_db(tmp_path)
    with start(write_target(tmp_path, NOISY), path) as target:
        got = target.claim("A", "A", 0, LEASE_MS)
        assert got == Claim(id=1, qty=5, owner="A", token=1, attempt=1, lease_until=1000)
        assert target.in_transaction("A") is False
        target.sync()  # nothing the target wrote reached the channel
    judge.close()


FINDER = """
import os

""" + CHANNEL_FDS + """

_claim = claim

def claim(conn, owner, now, lease_ms):
    for fd in channel_fds():
        data = PAYLOAD
        while data:
            data = data[os.write(fd, data):]
    return _claim(conn, owner, now, lease_ms)
"""

_REPLY = b'{"msg":"reply","id":1,"value":{"kind":"none"}'


@pytest.mark.skipif(not os.path.isdir("/proc/self/fdinfo"), reason="needs /proc")
@pytest.mark.parametrize("payload, why", [
    (b"garbage\n", "not JSON"),
    (b"\xff\xfe\n", "not UTF-8"),
    (b"[1, 2]\n", "not a JSON object"),
    (b'{"msg": "hello"}\n', "'hello'"),
    (_REPLY + b',"extra":1}\n', "unknown extra"),
    (b'{"msg":"reply","id":2,"id":2}\n', "duplicate key"),
    (_REPLY.replace(b'"id":1', b'"id":999') + b"}\n", "out of turn"),
    (_REPLY.replace(b'"id":1', b'"id":true') + b"}\n", "not an int"),
    (_REPLY.replace(b'{"kind":"none"}', b'{"kind":"int","value":true}') + b"}\n", "not an int"),
    (_REPLY.replace(b'{"kind":"none"}', b'{"kind":"int","value":9223372036854775808}')
     + b"}\n", "64-bit"),
    (_REPLY.replace(b'{"kind":"none"}', b'{"kind":"int","value":1.0}') + b"}\n", "float"),
    (_REPLY.replace(b'{"kind":"none"}', b'{"kind":"int","value":NaN}') + b"}\n", "NaN"),
    (_REPLY.replace(b'{"kind":"none"}', b'{"kind":"str","value":"\\ud800"}') + b"}\n",
     "surrogate"),
    (_REPLY.replace(b'{"kind":"none"}', b'{"kind":"claim","value":{"id":1}}') + b"}\n",
     "missing qty"),
    (_REPLY + b',"own_connections":[[[[[[[1]]]]]]]}\n', "nested too deeply"),
    (b'{"a":' + b"[" * 200_000 + b"]" * 200_000 + b"}\n", "nested too deeply"),
    (b'{"a":"' + b"x" * (wire.MAX_LINE + 10), "over"),
    (_REPLY + b"}\n" + _REPLY + b"}\n", "output after a message"),
    (_REPLY + b"}\n", "out of turn|output after a message"),  # well-formed: see sync()
], ids=lambda value: value if isinstance(value, str) else "payload")
def test_writing_on_the_channel_itself_is_a_protocol_error(tmp_path, payload, why):
    path, judge = fresh_db(tmp_path)
    spec = write_target(tmp_path, f"PAYLOAD = {payload!r}\n" + FINDER)
    target = start(spec, path)
    with pytest.raises(ProtocolError, match=why):
        target.claim("A", "A", 0, LEASE_MS)  # call 1: the forged replies carry id 1
        target.sync()  # a well-formed forgery was taken; the real reply comes out of turn here
    assert gone(target.pid)
    with pytest.raises(TargetClosed):
        target.claim("A", "A", 0, LEASE_MS)
    judge.close()


LIARS = """
import os, sys
from lab.store import Claim

MARKER = os.path.join(os.path.dirname(os.path.abspath(__file__)), "unpickled-in-judge")


class Evil:
    def __reduce__(self):
        return (os.system, (f"touch {MARKER}",))

    def __eq__(self, other):
        return True

    def __hash__(self):
        return 1

    def __repr__(self):
        return "1"


class LyingInt(int):
    def __eq__(self, other):
        return True

    def __hash__(self):
        return 1

    def __repr__(self):
        return "True"


class bool(int):  # a real bool subclass cannot exist (bool is final): this one only has the name
    def __repr__(self):
        return "True"


class Loud:
    def __repr__(self):
        raise SystemExit("repr says goodbye")


def deep():
    value = []
    for _ in range(100_000):
        value = [value]
    return value


RESULTS = {
    "evil-field": lambda: Claim(id=Evil(), qty=5, owner="A", token=1, attempt=1, lease_until=1000),
    "lying-int-field": lambda: Claim(id=1, qty=5, owner="A", token=LyingInt(1), attempt=1,
                                     lease_until=1000),
    "lying-int": lambda: LyingInt(1),
    "named-bool": lambda: bool(1),
    "huge-int": lambda: 2 ** 64,
    "deep": deep,
    "huge-list": lambda: list(range(1_000_000)),
    "huge-str": lambda: "x" * 1_000_000,
    "surrogate": lambda: "\\udc80",
    "repr-exits": Loud,
}


def claim(conn, owner, now, lease_ms):
    if owner == "many-statements":
        conn.execute("SELECT '" + "x" * 100_000 + "'")
        for n in range(2_000):
            conn.execute("SELECT ?", (n,))
        return None
    if owner == "escaped-statements":  # each traced line is ~6x longer once JSON-escaped
        for _ in range(600):
            conn.execute("SELECT '" + "\x01" * 3_900 + "'")
        return None
    return RESULTS[owner]()


def finish(conn, claim, now):
    return RESULTS[claim.owner]()
"""


@pytest.fixture(scope="module")
def liars(tmp_path_factory):
    """One LIARS process for all its cases (its functions keep no state)."""
    folder = tmp_path_factory.mktemp("liars")
    path, judge = fresh_db(folder)
    with start(write_target(folder, LIARS), path) as target:
        yield target, folder
    judge.close()


@pytest.mark.parametrize("case, type_name, shown", [
    ("evil-field", "lab.store.Claim", "Claim(id=1, qty=5, owner='A', token=1, attempt=1, "
                                      "lease_until=1000)"),
    ("lying-int-field", "lab.store.Claim", "Claim(id=1, qty=5, owner='A', token=True, "
                                           "attempt=1, lease_until=1000)"),
    ("lying-int", "graded_target.LyingInt", "True"),
    ("named-bool", "graded_target.bool", "True"),
    ("huge-int", "int", None),
    ("deep", "list", "[[[[[...]]]]]"),
    ("huge-list", "list", None),
    ("huge-str", "str", None),
    ("surrogate", "str", "'\\udc80'"),
    ("repr-exits", "graded_target.Loud", "<graded_target.Loud whose repr raised SystemExit>"),
])
def test_values_that_are_not_plain_data_arrive_as_type_and_bounded_repr(liars, case,
                                                                        type_name, shown):
    target, folder = liars
    got = target.claim("A", case, 0, LEASE_MS)
    assert type(got) is Foreign and got.type == type_name
    assert len(got.repr) <= wire.MAX_REPR
    if shown is not None:
        assert got.repr == shown
    assert got != Claim(id=1, qty=5, owner="A", token=1, attempt=1, lease_until=1000)
    assert got != 1 and got is not True
    # finish too (its stamp is rebuilt as a real Claim in the target)
    again = target.finish("A", Claim(id=1, qty=5, owner=case, token=1, attempt=1,
                                     lease_until=1000), 0)
    assert again == got
    assert not (folder / "unpickled-in-judge").exists()
    assert target.in_transaction("A") is False  # and the target goes on answering


ENDERS = """
import os, signal, sys, threading


def claim(conn, owner, now, lease_ms):
    if owner == "sigterm":
        os.kill(os.getpid(), signal.SIGTERM)
    os._exit(7)


def finish(conn, claim, now):
    raise SystemExit(3)


def work_once(conn, owner, send, clock, lease_ms):
    if owner == "exit-in-send":
        try:
            send(clock())
        except BaseException:
            pass
        return True
    threading.Event().wait()  # hangs: only the safety-net timeout ends it
"""


def test_os_exit_in_a_call_is_an_ended_process(tmp_path):
    path, judge = fresh_db(tmp_path)
    target = start(write_target(tmp_path, ENDERS), path)
    with pytest.raises(TargetEnded) as ended:
        target.claim("A", "A", 0, LEASE_MS)
    assert ended.value.code == 7 and ended.value.during == "claim"
    assert gone(target.pid)
    judge.close()


def test_a_signal_in_a_call_is_an_ended_process(tmp_path):
    path, judge = fresh_db(tmp_path)
    target = start(write_target(tmp_path, ENDERS), path)
    with pytest.raises(TargetEnded) as ended:
        target.claim("A", "sigterm", 0, LEASE_MS)
    assert ended.value.signal == "SIGTERM" and ended.value.code is None
    assert "signal SIGTERM" in str(ended.value)
    judge.close()


def test_system_exit_in_a_call_is_raised_like_any_exception(tmp_path):
    """sys.exit inside claim is the function raising SystemExit (as it was when the target ran
    in the grader's own process): reported as raised, and the process goes on serving."""
    path, judge = fresh_db(tmp_path)
    target = start(write_target(tmp_path, ENDERS), path)
    with pytest.raises(RaisedInTarget) as raised:
        target.finish("A", Claim(1, 5, "A", 1, 1, 1000), 0)
    assert raised.value.type == "SystemExit" and raised.value.message == "SystemExit: 3"
    target.sync()
    judge.close()


def test_system_exit_in_a_nested_call_ends_the_process_even_if_the_outer_call_catches(tmp_path):
    path, judge = fresh_db(tmp_path)
    target = start(write_target(tmp_path, ENDERS), path)
    with pytest.raises(TargetEnded) as ended:
        target.work_once("A", "exit-in-send", lambda claim: target.claim("A", "B", 0, 1),
                         Clock(0), LEASE_MS)
    assert ended.value.code == 7 and ended.value.during == "claim"
    judge.close()


def test_a_hang_is_a_timeout_and_the_process_is_killed(tmp_path):
    path, judge = fresh_db(tmp_path)
    target = start(write_target(tmp_path, ENDERS), path)
    target.timeout = 1.0  # for the hanging call only
    started = time.monotonic()
    with pytest.raises(TargetTimeout) as timed_out:
        target.work_once("A", "hang", lambda claim: None, Clock(0), LEASE_MS)
    assert timed_out.value.during == "work_once"
    assert time.monotonic() - started < 8  # the safety net, not a hang of the test
    assert gone(target.pid)
    judge.close()


NOT_IMPLEMENTED = """
def claim(conn, owner, now, lease_ms):
    raise NotImplementedError("write claim")


class Odd(BaseException):
    def __str__(self):
        raise RuntimeError("no message for you")


def finish(conn, claim, now):
    try:
        raise ValueError("inner")
    except ValueError as err:
        raise Odd() from err
"""


def test_errors_are_described_as_data(tmp_path):
    path, judge = fresh_db(tmp_path)
    spec = write_target(tmp_path, NOT_IMPLEMENTED)
    with start(spec, path) as target:
        with pytest.raises(RaisedInTarget) as raised:
            target.claim("A", "A", 0, LEASE_MS)
        error = raised.value
        assert error.not_implemented and error.type == "NotImplementedError"
        assert error.message == "NotImplementedError: write claim"
        assert error.where == f"{os.path.relpath(spec)}:4"  # raise NotImplementedError
        with pytest.raises(RaisedInTarget) as raised:
            target.finish("A", Claim(1, 5, "A", 1, 1, 1000), 0)
        error = raised.value
        assert error.type == "graded_target.Odd" and error.message == "Odd: <message unreadable>"
        assert error.chain == ["ValueError: inner"] and not error.not_implemented
        with pytest.raises(RaisedInTarget):
            target.claim("A", "A", 0, LEASE_MS)
    judge.close()


def test_statements_are_bounded_and_the_rest_counted(liars):
    target, _ = liars
    assert target.claim("A", "many-statements", 0, LEASE_MS) is None
    assert len(target.statements) == wire.MAX_STATEMENTS and target.dropped == 2_001 - 500
    first = target.statements[0][1]
    assert len(first) == wire.MAX_SQL and first.startswith("SELECT 'xxx") and first[-1] == "…"
    assert target.statements[1] == ("A", "SELECT 0", frozenset())
    assert target.claim("A", "escaped-statements", 0, LEASE_MS) is None  # traced by the judge:
    assert len(target.statements) == wire.MAX_STATEMENTS and target.dropped == 100  # no line
    target.sync()


def test_one_bound_for_text_on_both_sides_of_the_wire():
    """wire.bounded is how the target server cuts what it tells (type names, reprs, messages) and
    how the judge cuts a traced statement: what it makes, `wire.string` takes back."""
    assert wire.bounded("abc", 3) == "abc" and wire.bounded("abcd", 3) == "ab…"
    assert wire.bounded("a\ud800b", 100) == "a\\ud800b"  # a lone surrogate, escaped
    cut = wire.bounded("é\udfff" * 50, 20)
    assert wire.string(cut, "cut", 20) == cut and len(cut) == 20 and cut[-1] == "…"
    from grader.harness.judge import target_client
    from grader.harness.target import server as target_server

    assert not hasattr(target_client, "_bounded") and not hasattr(target_server, "_clean")


def test_the_channel_goes_to_a_random_place_any_place_below_the_bound():
    """`hide` moves the channel's fds to a random number from 64 below HIDE_BELOW, drawn from
    the system's random source without importing `random` (`random_below`, each number as
    likely as with random.SystemRandom().randrange)."""
    from grader.harness.target import lifeline

    assert {lifeline.random_below(1) for _ in range(20)} == {0}
    for n in (2, 7, 64, 952, 1 << 20, (1 << 64) + 3):
        assert all(0 <= lifeline.random_below(n) < n for _ in range(200))
    assert {lifeline.random_below(3) for _ in range(300)} == {0, 1, 2}  # (2/3)^300 apart
    read, write = os.pipe()
    moved = [lifeline.hide(os.dup(read)) for _ in range(20)]
    try:
        assert all(64 <= fd < lifeline.HIDE_BELOW for fd in moved)
    finally:
        for fd in (read, write, *moved):
            os.close(fd)


CALLBACK_ABUSE = """
import os
import threading
import time

kept = []

def on_thread(call):
    \"\"\"call() on a thread of its own, joined: what it returned, or its RuntimeError's text.\"\"\"
    out = []
    def run():
        try:
            out.append(call())
        except RuntimeError as err:
            out.append(str(err))
    thread = threading.Thread(target=run)
    thread.start()
    thread.join()
    return out[0]

def work_once(conn, owner, send, clock, lease_ms):
    if owner == "thread":  # send and clock on a helper thread, while work_once runs
        sent = on_thread(lambda: send(None))
        return f"{sent} {on_thread(clock)}"
    if owner == "keep":
        kept.append(send)
        return None
    if owner == "late":  # the send kept by an earlier work_once, which has returned
        return on_thread(lambda: kept[0](None))
    if owner.startswith("under-way "):  # returns while its thread's send waits for the judge
        marker = owner.split(" ", 1)[1]
        threading.Thread(target=send, args=("under way",)).start()
        limit = time.monotonic() + 10  # a safety net: the judge's send makes the marker
        while not os.path.exists(marker) and time.monotonic() < limit:
            time.sleep(0.001)
        return "returned"
    if owner == "clock-args":
        return clock(1)
    send(object())
    return clock()
"""


def test_callbacks_only_from_their_call_and_with_any_argument_as_data(tmp_path):
    path, judge = fresh_db(tmp_path)
    with start(write_target(tmp_path, CALLBACK_ABUSE), path) as target:
        with pytest.raises(RaisedInTarget, match="TypeError"):
            target.work_once("A", "clock-args", lambda claim: None, Clock(0), LEASE_MS)
        sent = []
        assert target.work_once("A", "object", sent.append, Clock(42), LEASE_MS) == 42
        assert type(sent[0]) is Foreign and sent[0].type == "object"
        # a send kept for after work_once returned is refused, from any thread
        late = []
        assert target.work_once("A", "keep", late.append, Clock(0), LEASE_MS) is None
        assert "outside the work_once call" in target.work_once(
            "A", "late", late.append, Clock(0), LEASE_MS)
        assert late == []
    judge.close()


def test_send_and_clock_may_be_called_from_any_thread_while_work_once_runs(tmp_path):
    """A helper thread's send is the judge's callback, nested calls inside it included; the
    judge's clock answers it too."""
    path, judge = fresh_db(tmp_path)
    with start(write_target(tmp_path, CALLBACK_ABUSE), path) as target:
        target.open("B", path, busy_timeout_ms=150)
        seen = []

        def send(claim):
            seen.append(target.claim("B", "B", 0, LEASE_MS))  # nested, served on that thread
            return "delivered"
        assert target.work_once("A", "thread", send, Clock(7), LEASE_MS) == "delivered 7"
        assert seen == [Claim(id=1, qty=5, owner="B", token=1, attempt=1, lease_until=1000)]
        assert target.in_transaction("B") is False
    judge.close()


def test_a_send_under_way_when_work_once_returns_is_answered_before_its_reply(tmp_path):
    """work_once returns while its thread's send waits for the judge: the reply comes after
    that send's answer (the channel is never shared), and the send counts."""
    path, judge = fresh_db(tmp_path)
    marker = tmp_path / "send-started"
    with start(write_target(tmp_path, CALLBACK_ABUSE), path) as target:
        sent = []

        def send(claim):
            sent.append(claim)
            marker.touch()  # work_once may return now, with this send still under way
        assert target.work_once("A", f"under-way {marker}", send, Clock(0),
                                LEASE_MS) == "returned"
        assert sent == ["under way"]
        target.sync()
    judge.close()


HELPER_SEND = """
import os
import threading
import time

def work_once(conn, owner, send, clock, lease_ms):
    kind, marker = owner.split(" ", 1)
    returned, go = [], []

    def deliver():
        if kind == "after-clock":  # still on its way to send when work_once reads the clock
            while not go:
                pass
        send("parcel")
        returned.append(True)

    helper = threading.Thread(target=deliver)
    helper.start()
    if kind == "answered":  # reads the clock only once the judge has answered that send
        limit = time.monotonic() + 10  # a safety net: the judge's send makes the marker
        while not os.path.exists(marker) and time.monotonic() < limit:
            time.sleep(0.001)
        conn.execute("SELECT 1").fetchall()  # served after the send's answer, never before
    go.append(True)
    seen = bool(returned)
    now = clock()  # never waited for send: read while it runs, whatever the threads' luck
    helper.join()
    return f"{seen} {now}"
"""


@pytest.mark.parametrize("kind", ["answered", "after-clock"])
def test_a_clock_read_while_a_helper_thread_s_send_runs_is_told_so(tmp_path, kind):
    """work_once starts send on a helper thread and reads the clock without waiting for it.
    The interleavings that decided the verdict by luck are forced: "answered", the judge has
    answered that send before the clock is read (the call's thread waits for its own database
    request, served only after the send's answer: the reading used to count as after send);
    "after-clock", the helper thread calls send only once work_once has called clock (the
    reading used to reach the judge first, before any send). Either way send has not returned
    to the code when the clock is read (sending takes time: a helper thread's send returns
    once the call's thread has read the clock, waits, or ends), the judge is told so
    (clock_ended 0), and answers the reading after the send moved its clock."""
    path, judge = fresh_db(tmp_path)
    marker = tmp_path / "send-answered"
    with start(write_target(tmp_path, HELPER_SEND), path) as target:
        clock, told = Clock(0), []

        def reading():
            told.append(("clock", target.clock_ended))
            return clock()

        def send(parcel):
            told.append(("send", parcel))
            marker.touch()
            clock.now += 5
        for _ in range(3):  # the same every time
            told.clear()
            clock.now = 0
            assert target.work_once("A", f"{kind} {marker}", send, reading,
                                    LEASE_MS) == "False 5"
            assert told == [("send", "parcel"), ("clock", 0)]
    judge.close()


# -- the wire, unit by unit ------------------------------------------------------------------------
@pytest.mark.parametrize("value", [
    {"kind": "int", "value": True}, {"kind": "bool", "value": 1}, {"kind": "int", "value": 2**63},
    {"kind": "none", "value": None}, {"kind": "claim", "value": {"id": 1}}, {"kind": "float"},
    {"kind": "str", "value": "x" * (wire.MAX_STR + 1)}, {"kind": "other", "type": "t"}, [],
])
def test_decode_value_is_strict(value):
    with pytest.raises(wire.WireError):
        decode_value(value)


def test_encode_value_decides_by_exact_type():
    claim = Claim(1, 5, "A", 1, 1, 1000)
    for value in (None, True, False, 0, -(2**63), "x", claim):
        back = decode_value(wire.decode(wire.encode({"v": encode_value(value)})[:-1])["v"])
        assert back == value and type(back) is type(value)
    assert encode_value(2**63)["kind"] == "other"
    assert encode_value(1.5) == {"kind": "other", "type": "float", "repr": "1.5"}


def test_a_claim_with_a_wrong_field_type_names_the_field():
    """A lab.store.Claim holding 5.0 as qty is "other", and says which field, as what."""
    bad = Claim(1, 5.0, "A", 1, 1, 1000)
    back = decode_value(wire.decode(wire.encode({"v": encode_value(bad)})[:-1])["v"])
    assert type(back) is Foreign and back.type == "lab.store.Claim"
    assert back.wrong_field == {"field": "qty", "value": "5.0", "type": "float", "wanted": "int"}
    forged = {"kind": "other", "type": "t", "repr": "r",
              "wrong_field": {"field": "nope", "value": "1", "type": "int", "wanted": "int"}}
    with pytest.raises(wire.WireError):
        decode_value(forged)


def test_journal_mode_and_close_conn(tmp_path):
    """journal_mode answers the connection's mode; a closed connection's name is refused."""
    from grader.harness.judge.target_errors import RequestRefused
    from grader.harness.judge.target_client import TargetProcess
    from lab import store

    path = tmp_path / "q.db"
    store.init_db(store.connect(path))
    with TargetProcess("solutions.queue") as target:
        target.open("A", path)
        assert target.journal_mode("A") == "delete"
        target.close_conn("A")
        with pytest.raises(RequestRefused):
            target.in_transaction("A")


SYNCHRONOUS = """
def claim(conn, owner, now, lease_ms):
    return conn.execute("PRAGMA synchronous").fetchone()[0]
"""


def test_every_connection_is_opened_with_synchronous_off(tmp_path):
    """Every connection the judge opens for the code has PRAGMA synchronous = OFF (0): no check
    is about durability, and no commit waits for the disk (DbHost.open). One lab.store.connect
    opens elsewhere keeps SQLite's default (2, FULL). `gated` is a bool or a TypeError."""
    path, judge = fresh_db(tmp_path)
    with TargetProcess(write_target(tmp_path, SYNCHRONOUS), timeout=10) as target:
        target.open("A", path)
        target.open("B", path, busy_timeout_ms=0)
        assert target.claim("A", "A", 0, LEASE_MS) == 0
        assert target.claim("B", "B", 0, LEASE_MS) == 0
        assert judge.execute("PRAGMA synchronous").fetchone()[0] == 2
        with pytest.raises(TypeError):
            target.open("C", path, gated=1)
    judge.close()


ENVIRONMENT = """
import os


def claim(conn, owner, now, lease_ms):
    return " ".join(sorted(os.environ))


def finish(conn, claim, now):
    return False


def work_once(conn, owner, send, clock, lease_ms):
    return None
"""


def test_the_target_sees_a_scrubbed_environment(tmp_path, monkeypatch):
    """Nothing in the target's environment names the check (PYTEST_CURRENT_TEST) or anything
    else of the judge's; what an interpreter needs stays: on Windows SYSTEMROOT, without which
    a Python cannot start there (set here as Windows would have it)."""
    monkeypatch.setenv("PYTEST_CURRENT_TEST", "tests/x.py::test_finish_at_expiry (call)")
    monkeypatch.setenv("SOME_JUDGE_SECRET", "1")
    monkeypatch.setenv("SYSTEMROOT", "C:\\Windows")
    path, judge = fresh_db(tmp_path)
    target = start(write_target(tmp_path, ENVIRONMENT), path)
    names = set(target.claim("A", "A", 0, LEASE_MS).split())
    target.close()
    judge.close()
    assert "PYTEST_CURRENT_TEST" not in names and "SOME_JUDGE_SECRET" not in names
    assert "PATH" in names and "TMPDIR" in names and "SYSTEMROOT" in names


LEAVES_OPEN = """
def claim(conn, owner, now, lease_ms):
    conn.execute("BEGIN IMMEDIATE")
    return None
"""


def test_each_call_reports_whether_it_left_a_transaction_open(tmp_path):
    """The reply to claim / finish / work_once carries the connection's in_transaction after
    the call (what the random timelines compare after every step, without a round trip)."""
    path, judge = fresh_db(tmp_path)
    with start("solutions.queue", path) as target:
        assert target.in_transaction_after is None
        target.claim("A", "A", 0, LEASE_MS)
        assert target.in_transaction_after is False
        target.sync()  # not a call: leaves the last call's report as it was
        assert target.in_transaction_after is False
    with start(write_target(tmp_path, LEAVES_OPEN), path) as target:
        target.claim("A", "A", 0, LEASE_MS)
        assert target.in_transaction_after is True is target.in_transaction("A")
    judge.close()


# -- the file watched: a connection of the code's own to the database -------------------------------
OWN_WAYS = {
    # sqlite3.connect, closed before the call returns: the audit hook saw it
    "connect-closed": """
        c = sqlite3.connect(path)
        c.execute("SELECT count(*) FROM jobs").fetchone()
        c.close()
    """,
    # sqlite3.Connection(...) directly, kept open past the call: hook and fd scan
    "connection-class-kept": """
        KEPT.append(sqlite3.Connection(path))
        KEPT[-1].execute("SELECT count(*) FROM jobs").fetchone()
    """,
    # a file: URI, read-only
    "uri-read-only": """
        c = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
        c.execute("SELECT count(*) FROM jobs").fetchone()
        c.close()
    """,
    # a relative name, after a chdir to the database's folder
    "relative-after-chdir": """
        os.chdir(os.path.dirname(path))
        c = sqlite3.connect(os.path.basename(path))
        c.close()
    """,
    # no sqlite3 at all: the file itself, left open (only the fd scan sees this one)
    "raw-fd-kept": """
        KEPT.append(os.open(path, os.O_RDONLY))
    """,
}

OWN_TARGET = """
import os, sqlite3
from solutions.queue import claim as reference_claim

KEPT = []


def claim(conn, owner, now, lease_ms):
    path = conn.execute("PRAGMA database_list").fetchone()[2]
{way}
    return reference_claim(conn, owner, now, lease_ms)
"""


def test_rows_too_long_for_the_channel_are_an_error_in_the_target(tmp_path):
    """A value too long for one message on the channel (the judge's reply would break the
    wire's limit) is sqlite3.DataError in the target, as a request too long is: the judge never
    tries to send a message it cannot, and the grade goes on."""
    path, judge = fresh_db(tmp_path)
    body = """
    import sqlite3

    def claim(conn, owner, now, lease_ms):
        out = []
        try:  # over SQLite's length limit on the judge's connections: refused as it is made
            conn.execute("SELECT zeroblob(5000000)")
        except sqlite3.DataError as exc:
            out.append(f"execute {type(exc).__name__}: {exc}")
        cur = conn.execute("SELECT zeroblob(3500000)")  # made, but too long for one message
        try:
            cur.fetchone()
        except sqlite3.DataError as exc:
            out.append(f"fetch {type(exc).__name__}: {exc}")
        return "; ".join(out) + "; " + str(conn.execute("SELECT 1").fetchall())
    """
    with start(write_target(tmp_path, body), path) as target:
        assert target.claim("A", "A", 0, LEASE_MS) == (
            "execute DataError: string or blob too big; fetch DataError: string or blob too big;"
            " [(1,)]")
    judge.close()


@pytest.mark.parametrize("way", list(OWN_WAYS))
def test_a_connection_of_its_own_to_the_database_cannot_be_opened(tmp_path, way):
    """The code under grade holds no database handle and its jail denies it the database's
    folder: whatever way claim tries to open the check's database besides the connection it was
    given, the attempt fails in the target (claim raises), is named in the reply, and the
    database is untouched."""
    (tmp_path / "db").mkdir()  # not inside the target's own folder, which it may read
    (tmp_path / "code").mkdir()
    path, judge = fresh_db(tmp_path / "db")
    body = OWN_TARGET.format(way=textwrap.indent(textwrap.dedent(OWN_WAYS[way]), "    "))
    with start(write_target(tmp_path / "code", body), path) as target:
        if not target.contained:
            pytest.skip("no Landlock on this kernel: the file watch reports it (below)")
        with pytest.raises(RaisedInTarget) as raised:
            target.claim("A", "A", 0, LEASE_MS)
        assert raised.value.type in ("sqlite3.OperationalError", "PermissionError"), raised.value
        # the attempt is named (the file watch sees sqlite3's connect; a raw open, denied, is
        # no connection)
        named = [] if way == "raw-fd-kept" else [os.path.realpath(path)]
        assert target.own_connections == named
        assert target.in_transaction("A") is False
    assert store.get_job(judge, 1)["status"] == "pending"
    judge.close()


@pytest.mark.parametrize("way", list(OWN_WAYS))
def test_without_a_jail_a_connection_of_its_own_to_the_database_is_reported(tmp_path, way):
    """Where the kernel has no Landlock, the target process is told the database's file and
    watches it: whatever way claim opens it besides the connection it was given, the reply says
    so (the value still comes back as data); the next call that opens nothing is clean again
    unless the connection is still open."""
    path, judge = fresh_db(tmp_path)
    body = OWN_TARGET.format(way=textwrap.indent(textwrap.dedent(OWN_WAYS[way]), "    "))
    with start(write_target(tmp_path, body), path, jail=False) as target:
        assert type(target.claim("A", "A", 0, LEASE_MS)) is Claim
        assert target.own_connections == [os.path.realpath(path)]
        target.sync()  # not a call: the last call's report stays
        assert target.own_connections == [os.path.realpath(path)]
    judge.close()


ALLOWED_TARGET = """
import os, sqlite3, tempfile
from solutions.queue import claim as reference_claim, finish, work_once


def claim(conn, owner, now, lease_ms):
    path = conn.execute("PRAGMA database_list").fetchone()[2]
    scratch = sqlite3.connect(":memory:")
    scratch.execute("CREATE TABLE t (x)")
    other = sqlite3.connect(os.path.join(tempfile.gettempdir(), "scratch.db"))
    other.execute("CREATE TABLE IF NOT EXISTS t (x)")
    other.close()
    KEPT.append(scratch)
    return reference_claim(conn, owner, now, lease_ms)


KEPT = []
"""


def test_a_connection_to_another_file_is_allowed(tmp_path):
    """A scratch database of the code's own (:memory:, another file beside the queue's) is not
    the queue's database: nothing is reported."""
    for jail in (True, False):  # jailed, the folder it may write is its TMPDIR
        folder = tmp_path / f"jail-{jail}"
        folder.mkdir()
        path, judge = fresh_db(folder)
        with start(write_target(tmp_path, ALLOWED_TARGET), path, jail=jail) as target:
            assert type(target.claim("A", "A", 0, LEASE_MS)) is Claim
            assert target.own_connections == []
        judge.close()


def test_the_servers_own_connections_are_never_reported(tmp_path, reference):
    """The reference through every call, with connections the judge opens and closes from
    inside send (the server opens them during the call) and one reopened on another file."""
    target, path, _ = reference
    other, other_judge = fresh_db(tmp_path, "other.db")

    def send(claim):
        target.open("B", path, busy_timeout_ms=150)
        assert type(target.claim("B", "B", 0, LEASE_MS)) is Claim
        assert target.own_connections == []
        target.close_conn("B")

    assert target.work_once("A", "A", send, Clock(), LEASE_MS) is True
    assert target.own_connections == []
    target.open("A", other)  # reopened on another database: both are the server's
    stamp = target.claim("A", "C", 0, LEASE_MS)
    assert target.finish("A", stamp, 1) is True
    assert target.own_connections == []
    other_judge.close()


@pytest.mark.parametrize("value, op", [
    ([], "claim"), ("x", "claim"), ([1], "claim"), (["a", "a"], "claim"), ([""], "claim"),
    (["a"] * 9, "claim"), (["x" * (wire.MAX_MESSAGE + 1)], "claim"), (["a"], "sync"),
    (["a"], "open"),
])
def test_own_connections_on_the_wire_are_strict(value, op):
    from grader.harness.judge.target_fields import own_connections_field as _own_connections

    with pytest.raises(wire.WireError):
        _own_connections(value, op)
    assert _own_connections(["/a/queue.db", "/a/queue.db-journal"], "finish") == [
        "/a/queue.db", "/a/queue.db-journal"]


NESTED_OWN = """
import sqlite3
from solutions.queue import claim, finish

KEPT = []


def work_once(conn, owner, send, clock, lease_ms):
    path = conn.execute("PRAGMA database_list").fetchone()[2]
    KEPT.append(sqlite3.connect(path))
    c = claim(conn, owner, clock(), lease_ms)
    send(c)
    return finish(conn, c, clock())
"""


def test_a_connection_of_its_own_is_the_call_s_that_opened_it(tmp_path):
    """work_once opens one and keeps it open, then the judge claims from inside its send (a
    nested call): the nested claim opened nothing, the work_once did."""
    path, judge = fresh_db(tmp_path)
    with start(write_target(tmp_path, NESTED_OWN), path, jail=False) as target:
        target.open("B", path, busy_timeout_ms=150)
        nested = []

        def send(claim):
            nested.append((target.claim("B", "B", 0, LEASE_MS), target.own_connections))

        assert target.work_once("A", "A", send, Clock(), LEASE_MS) is True
        assert type(nested[0][0]) is Claim and nested[0][1] == []
        assert target.own_connections == [os.path.realpath(path)]
    judge.close()


def test_an_error_re_raised_from_a_thread_pool_is_placed_in_the_target_s_code(tmp_path):
    """send run by concurrent.futures, its error re-raised by `.result()`: `where` is the line of
    the target that called `.result()`, not a line of concurrent/futures."""
    path, judge = fresh_db(tmp_path)
    spec = write_target(tmp_path, """
        from concurrent.futures import ThreadPoolExecutor

        def work_once(conn, owner, send, clock, lease_ms):
            with ThreadPoolExecutor(max_workers=1) as pool:
                return pool.submit(send, None).result()
        """)

    def send(claim):
        raise SendFailed("refused")
    with start(spec, path) as target:
        with pytest.raises(RaisedInTarget) as raised:
            target.work_once("A", "A", send, Clock(0), LEASE_MS)
    assert raised.value.send_failed == "same"
    assert raised.value.where == f"{os.path.relpath(spec)}:7"  # .result()
    judge.close()


def test_each_send_says_whether_its_connection_had_a_transaction_open(tmp_path):
    """The contract sends with no transaction open: each send callback carries the connection's
    in_transaction at that moment, and the proxy keeps them for the last work_once."""
    path, judge = fresh_db(tmp_path)
    spec = write_target(tmp_path, """
        from solutions.queue import work_once as reference_work_once

        def work_once(conn, owner, send, clock, lease_ms):
            if owner == "inside":
                conn.execute("BEGIN IMMEDIATE")
                send(None)
                conn.execute("COMMIT")
                send(None)
                return None
            return reference_work_once(conn, owner, send, clock, lease_ms)
        """)
    with start(spec, path) as target:
        assert target.work_once("A", "A", lambda c: None, Clock(0), LEASE_MS) is True
        assert target.sends_in_transaction == [False]
        assert target.work_once("A", "inside", lambda c: None, Clock(0), LEASE_MS) is None
        assert target.sends_in_transaction == [True, False]
    judge.close()


@pytest.mark.skipif(not os.path.isdir("/proc/self/fdinfo"), reason="needs /proc")
@pytest.mark.parametrize("extra", [b',"in_transaction":false', b',"statements":[]'],
                         ids=["in_transaction", "statements"])
def test_what_the_judge_reads_itself_cannot_come_from_the_target(tmp_path, extra):
    """Whether a transaction was open as send was called, and the statements traced, are read
    on the judge's connection: a message of the target's that carries them is a protocol error."""
    path, judge = fresh_db(tmp_path)
    payload = b'{"msg":"callback","id":1,"cb":1,"name":"send","arg":{"kind":"none"}' + extra + b"}\n"
    spec = write_target(tmp_path, f"PAYLOAD = {payload!r}\n" + FINDER.replace(
        "def claim(conn, owner, now, lease_ms):", "def work_once(conn, owner, send, clock, lease_ms):"
    ).replace("return _claim(conn, owner, now, lease_ms)", "return None"))
    target = start(spec, path)
    with pytest.raises(ProtocolError, match="unknown"):
        target.work_once("A", "A", lambda claim: None, Clock(0), LEASE_MS)  # call 1
    judge.close()


def test_the_code_s_sql_is_bounded_in_the_judge_s_process(tmp_path):
    """The code's SQL runs on the judge's connections, so the judge bounds it as the target
    process was bounded: a statement still running at the call's timeout is interrupted and the
    call is timed out (the target killed, the judge free); the database cannot grow past
    MAX_PAGES; the bounds cannot be lifted from the code (max_page_count, page_size, a busy
    timeout over MAX_BUSY_TIMEOUT_MS: not authorized)."""
    from grader.harness.judge import lockdown

    path, judge = fresh_db(tmp_path)
    body = """
    import sqlite3

    def claim(conn, owner, now, lease_ms):
        if owner == "spin":
            conn.execute("WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c)"
                         " SELECT count(*) FROM c").fetchone()
        out = []
        for sql in ("PRAGMA max_page_count = 1000000000", "PRAGMA temp.max_page_count = 10",
                    "PRAGMA page_size = 65536", "PRAGMA busy_timeout = 3600000",
                    "PRAGMA busy_timeout = 2000"):
            try:
                conn.execute(sql).fetchall()
                out.append("ok")
            except sqlite3.DatabaseError as exc:
                out.append(str(exc))
        conn.execute("CREATE TABLE big (b BLOB)")
        try:
            for _ in range(100):
                conn.execute("INSERT INTO big VALUES (zeroblob(2000000))")
        except sqlite3.DatabaseError as exc:
            out.append(str(exc))
        return "|".join(out)
    """
    spec = write_target(tmp_path, body)
    with start(spec, path) as target:
        assert target.claim("A", "A", 0, LEASE_MS).split("|") == (
            ["not authorized"] * 4 + ["ok", "database or disk is full"])
    started = time.monotonic()
    with start(spec, path, timeout=2) as target:
        with pytest.raises(TargetTimeout):
            target.claim("A", "spin", 0, LEASE_MS)
        assert gone(target.pid)
    assert time.monotonic() - started < 15  # a safety net: it would spin for ever
    assert os.path.getsize(path) <= lockdown.MAX_PAGES * 4096 + 8192
    judge.close()
