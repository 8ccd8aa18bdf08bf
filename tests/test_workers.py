"""The integration run's workers (grader/harness/judge/workers.py): threads of the judge, each driving a
target process of its own. The code under grade never runs in the judge, nothing it sends is
unpickled, and whatever it does (write fake events anywhere, forge replies, hang, exit, hand send
something that is not a Claim) comes out as one of the workers' own events, never as a pass.

Most tests drive a `Crew` directly against small targets written to tmp_path; a few grade a target
with `-k integration-run`, as a student would. No test sleeps to order events.
"""

from __future__ import annotations

import ast
import json
import os
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import pytest

from conftest import ROOT, by_check, gone, grade
from lab import store
from grader.harness.judge.receiver import Receiver
from grader.harness.judge.workers import Crew, Plan


LEASE_MS = 1000
DEADLINE = 1_000_000
WAIT = 30.0  # seconds: safety net for every wait below


def fresh_db(tmp_path: Path, jobs: int = 3) -> Path:
    path = tmp_path / "queue.db"
    conn = store.connect(path, busy_timeout_ms=1000)
    store.init_db(conn)
    for n in range(jobs):
        store.enqueue(conn, qty=5 + n, deadline=DEADLINE)
    conn.close()
    return path


def write_target(tmp_path: Path, body: str, name: str = "target.py") -> str:
    """The reference's three functions, with `body` appended (it may override them)."""
    path = tmp_path / name
    path.write_text("from solutions.queue import claim, finish, work_once\n"
                    + textwrap.dedent(body), encoding="utf-8")
    return str(path)


def worker_threads() -> list[threading.Thread]:
    return [t for t in threading.enumerate() if t.name.startswith("worker-")]


def run_crew(tmp_path: Path, spec: str, owners=("A",), jobs: int = 3,
             **plan) -> tuple[list[dict], dict]:
    """Start one worker per owner on a fresh queue, wait until all have ended, close the crew;
    return the events and what the receiver recorded (checked: no worker thread and no target
    process is left)."""
    tmp_path.mkdir(exist_ok=True)
    path = fresh_db(tmp_path, jobs)
    with Receiver(tmp_path / "receiver.db") as receiver:
        with Crew() as crew:
            for owner in owners:
                crew.start(Plan(owner, spec, str(path), receiver.url, LEASE_MS, **plan))
            assert crew.wait_all_ended(time.monotonic() + WAIT)
            # a worker whose target exited says "exited", then "stopped": wait_all_ended may
            # return between the two, and the crew takes nothing more once closed
            for owner in owners:
                assert crew.wait_for(lambda e, o=owner: e["worker"] == o and e["op"] == "stopped",
                                     time.monotonic() + WAIT)
        records = receiver.records()
    assert worker_threads() == []
    pids = [e["pid"] for e in crew.events if e["op"] == "ready"]
    assert all(gone(pid) for pid in pids)
    return crew.events, records


def ops(events: list[dict], worker: str = "A") -> list[str]:
    return [e["op"] for e in events if e["worker"] == worker]


def last(events: list[dict], op: str) -> dict:
    return [e for e in events if e["op"] == op][-1]


# -- against the reference -------------------------------------------------------------------------
def test_a_worker_drains_the_queue_through_its_target_process(tmp_path):
    events, records = run_crew(tmp_path, "solutions.queue")
    assert ops(events) == ["ready"] + ["sent", "returned"] * 3 + ["returned", "stopped"]
    assert [e["result"] for e in events if e["op"] == "returned"] == [True, True, True, None]
    assert [(e["job"], e["token"]) for e in events if e["op"] == "sent"] == [(1, 1), (2, 1),
                                                                           (3, 1)]
    assert last(events, "stopped")["reason"] == "empty"
    assert records == {1: 5, 2: 6, 3: 7}


def test_a_send_inside_a_transaction_says_so_in_its_event(tmp_path):
    """The reference sends with no transaction open (its "sent" events say nothing of one); a
    work_once that sends inside a transaction of its own gets in_transaction: True on each."""
    events, _ = run_crew(tmp_path / "reference", "solutions.queue", jobs=1)
    assert [e.get("in_transaction") for e in events if e["op"] == "sent"] == [None]
    spec = write_target(tmp_path, """
        def work_once(conn, owner, send, clock, lease_ms):
            c = claim(conn, owner, clock(), lease_ms)
            if c is None:
                return None
            conn.execute("BEGIN")  # a transaction of its own around send
            try:
                send(c)
            finally:
                conn.execute("COMMIT")
            return finish(conn, c, clock())
        """)
    events, _ = run_crew(tmp_path / "inside", spec, jobs=1)
    assert [e.get("in_transaction") for e in events if e["op"] == "sent"] == [True]


def test_hold_go_release_and_turns_are_the_checks_commands(tmp_path):
    path = fresh_db(tmp_path, jobs=2)
    with Receiver(tmp_path / "receiver.db") as receiver, Crew() as crew:
        common = dict(target_spec="solutions.queue", db_path=str(path), url=receiver.url,
                      lease_ms=LEASE_MS, take_turns=True)
        crew.start(Plan("S", hold_first_send=True, **common))
        crew.start(Plan("F", wait_for_go=True, **common))
        deadline = time.monotonic() + WAIT
        held = crew.wait_for(lambda e: e["op"] == "holding", deadline)
        assert (held["worker"], held["job"], held["lease_until"]) == ("S", 1, 1000)
        assert crew.wait_for(lambda e: e["worker"] == "F" and e["op"] == "ready", deadline)
        assert not any(e["op"] == "sent" for e in crew.events if e["worker"] == "F")
        crew.set_clock(1500)  # S's lease runs out while it is inside send
        crew.tell("F", "go")
        again = crew.wait_for(lambda e: e["worker"] == "F" and e["op"] == "returned", deadline)
        assert (again["job"], again["token"], again["result"], again["t"]) == (1, 2, True, 1500)
        crew.tell("S", "release")
        stale = crew.wait_for(lambda e: e["worker"] == "S" and e["op"] == "returned", deadline)
        assert (stale["job"], stale["token"], stale["result"]) == (1, 1, False)
        answers = []
        for worker in ("S", "F", "S"):  # one work_once each, in this order
            seen = len(crew.events)
            crew.tell(worker, "turn")
            answers.append(crew.wait_for(lambda e, w=worker: e["worker"] == w
                                         and e["op"] == "returned", deadline, after=seen))
        assert [(e["worker"], e.get("job"), e["result"]) for e in answers] == \
            [("S", 2, True), ("F", None, None), ("S", None, None)]
        assert crew.wait_all_ended(deadline)
        assert receiver.records() == {1: 5, 2: 6}
    assert worker_threads() == []


# -- the judge apart from the code under grade -----------------------------------------------------
def test_workers_use_neither_multiprocessing_nor_pickle():
    for module in ("grader/harness/judge/workers.py", "grader/checks/test_integration.py"):
        tree = ast.parse((ROOT / module).read_text(encoding="utf-8"))
        imported = {alias.name.split(".")[0] for node in ast.walk(tree)
                    if isinstance(node, ast.Import) for alias in node.names}
        imported |= {(node.module or "").split(".")[0] for node in ast.walk(tree)
                     if isinstance(node, ast.ImportFrom)}
        assert not imported & {"multiprocessing", "pickle", "copyreg", "marshal", "shelve"}, module


def test_the_judge_never_imports_the_code_under_grade(tmp_path):
    path = fresh_db(tmp_path, jobs=2)
    spec = write_target(tmp_path, "", name="graded_copy.py")
    script = textwrap.dedent(f"""
        import json, sys, time
        from grader.harness.judge.receiver import Receiver
        from grader.harness.judge.workers import Crew, Plan
        with Receiver({str(tmp_path / "receiver.db")!r}) as receiver, Crew() as crew:
            for owner, spec in (("A", "solutions.queue"), ("B", {spec!r})):
                crew.start(Plan(owner, spec, {str(path)!r}, receiver.url, 1000))
            assert crew.wait_all_ended(time.monotonic() + 30)
            results = [e["result"] for e in crew.events if e["op"] == "returned"]
        print(json.dumps([results.count(True), sorted(
            m for m in sys.modules if m.startswith(("solutions", "lab.queue", "graded_copy",
                                                    "grader.harness.target.server")))]))
    """)
    out = subprocess.run([sys.executable, "-c", script], cwd=ROOT, capture_output=True,
                         text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout) == [2, []]


FAKE_EVENTS = """
import json, os, stat

LINES = b"".join(json.dumps(event).encode() + b"\\n" for event in [
    {"worker": "S", "op": "returned", "t": 0, "result": True, "job": 1, "token": 1},
    {"worker": "F", "op": "stopped", "t": 0, "reason": "empty"},
    {"msg": "reply", "id": 3, "value": {"kind": "bool", "value": True},
     "statements": [], "dropped": 0},
])

def scribble(pipes_too):
    print(LINES.decode(), flush=True)
    for fd in range(0, 1 << 16):
        try:
            mode = os.fstat(fd).st_mode
        except OSError:
            continue
        if fd > 2 and not (pipes_too and stat.S_ISFIFO(mode)):
            continue
        try:
            os.write(fd, LINES)
        except OSError:
            pass

def work_once(conn, owner, send, clock, lease_ms):
    scribble(PIPES)
    return None
"""


@pytest.mark.parametrize("pipes", [False, True], ids=["stdout", "channel"])
def test_fake_events_written_anywhere_are_never_believed(tmp_path, pipes):
    spec = write_target(tmp_path, f"PIPES = {pipes}\n" + FAKE_EVENTS)
    events, records = run_crew(tmp_path, spec)
    assert not any(e.get("result") is True for e in events)
    assert records == {}
    if pipes:  # a line on the channel breaks it: nothing more the target says is believed
        assert ops(events) == ["ready", "protocol", "stopped"]
        assert last(events, "protocol")["during"] in ("work_once", "sync")
    else:
        assert ops(events) == ["ready", "returned", "stopped"]


@pytest.mark.parametrize("pipes", [False, True], ids=["stdout", "channel"])
def test_fake_events_do_not_pass_the_integration_check(tmp_path, pipes):
    spec = write_target(tmp_path, f"PIPES = {pipes}\n" + FAKE_EVENTS)
    proc, results = grade(spec, tmp_path, "-k", "integration-run")
    (test,) = results["tests"]
    assert proc.returncode == 1 and test["score"] == 0
    assert test["extra_data"]["outcome"] == ("errored" if pipes else "failed")
    if pipes:
        assert "broke the grader's channel" in test["output"]


# -- endings ---------------------------------------------------------------------------------------
def test_a_work_once_that_never_returns_times_out_and_is_killed(tmp_path):
    spec = write_target(tmp_path, """
        def work_once(conn, owner, send, clock, lease_ms):
            while True:
                pass
    """)
    started = time.monotonic()
    events, _ = run_crew(tmp_path, spec, call_timeout=1.0)
    assert time.monotonic() - started < 15
    assert ops(events) == ["ready", "timed-out", "stopped"]
    assert (last(events, "timed-out")["timeout"], last(events, "timed-out")["during"]) == \
        (1.0, "work_once")


def test_a_hung_work_once_makes_the_integration_check_timed_out(tmp_path):
    """issue 15: reported as timed out (naming the call), not as a run that 'got stuck'."""
    spec = write_target(tmp_path, """
        import threading

        def work_once(conn, owner, send, clock, lease_ms):
            threading.Event().wait()
    """)
    proc, results = grade(spec, tmp_path, "-k", "integration-run")
    (test,) = results["tests"]
    assert test["extra_data"]["outcome"] == "timed_out", test["output"]
    assert "S runs work_once (lease_ms=1000)" in test["output"]
    assert "got stuck" not in test["output"]


@pytest.mark.parametrize("how, expected", [
    ("os._exit(7)", {"exitcode": 7, "signal": None}),
    ("os.kill(os.getpid(), signal.SIGKILL)", {"exitcode": None, "signal": "SIGKILL"}),
])
def test_a_target_that_ends_is_an_exited_event(tmp_path, how, expected):
    spec = write_target(tmp_path, f"""
        import os, signal
        _work_once = work_once

        def work_once(conn, owner, send, clock, lease_ms):
            result = _work_once(conn, owner, send, clock, lease_ms)
            {how}
    """)
    events, records = run_crew(tmp_path, spec)
    assert ops(events) == ["ready", "sent", "exited", "stopped"]
    exited = last(events, "exited")
    assert {k: exited[k] for k in expected} == expected
    assert (exited["during"], exited["job"]) == ("work_once", 1)
    assert records == {1: 5}


@pytest.mark.parametrize("body, expected", [
    ("send(5)", {"came_back": "5", "type": "int", "field": None}),
    ("send(dataclasses.replace(claim(conn, owner, clock(), lease_ms), lease_until=1000.0))",
     {"field": "lease_until", "value": "1000.0", "type": "float", "wanted": "int"}),
])
def test_send_given_something_else_than_a_claim_stops_the_worker(tmp_path, body, expected):
    spec = write_target(tmp_path, f"""
        import dataclasses

        def work_once(conn, owner, send, clock, lease_ms):
            try:
                {body}
            except BaseException:
                pass
            return True
    """)
    events, records = run_crew(tmp_path, spec)
    assert ops(events) == ["ready", "bad-claim", "stopped"]
    bad = last(events, "bad-claim")
    assert {k: bad[k] for k in expected} == expected
    assert last(events, "stopped")["reason"] == "bad-claim"
    assert records == {}


def test_a_refused_delivery_is_raised_in_the_target(tmp_path):
    spec = write_target(tmp_path, """
        import dataclasses
        from grader.harness.target.server import SendFailed

        def work_once(conn, owner, send, clock, lease_ms):
            c = claim(conn, owner, clock(), lease_ms)
            if c is None:
                return None
            send(c)
            try:
                send(dataclasses.replace(c, qty=c.qty + 1))  # another qty for the same id: 409
            except SendFailed as failed:
                raise RuntimeError(f"caught: {failed}")
    """)
    events, records = run_crew(tmp_path, spec)
    assert ops(events) == ["ready", "sent", "sent", "raised", "stopped"]
    assert [e["status"] for e in events if e["op"] == "sent"] == [201, 409]
    raised = last(events, "raised")
    assert raised["error"].startswith("RuntimeError: caught: receiver answered 409")
    assert raised["where"].endswith("target.py:14") and raised["job"] == 1


def test_not_implemented_and_load_errors(tmp_path):
    events, _ = run_crew(tmp_path / "stubs", "lab.queue")
    assert ops(events) == ["ready", "raised", "stopped"]
    assert last(events, "raised")["not_implemented"] == "work_once"  # the stub says which
    broken = tmp_path / "broken.py"
    broken.write_text("def claim(:\n", encoding="utf-8")
    events, _ = run_crew(tmp_path / "broken", str(broken))
    assert ops(events) == ["load-error", "stopped"]
    assert last(events, "load-error")["error"].startswith("syntax-error")


def test_a_journal_mode_switch_is_seen_in_the_traced_sql(tmp_path):
    spec = write_target(tmp_path, """
        _work_once = work_once

        def work_once(conn, owner, send, clock, lease_ms):
            conn.execute("PRAGMA journal_mode = WAL")
            return _work_once(conn, owner, send, clock, lease_ms)
    """)
    events, _ = run_crew(tmp_path, spec)
    switched = [e for e in events if e["op"] == "journal-mode"]
    assert [(e["mode"], e["sql"]) for e in switched] == [("wal", "PRAGMA journal_mode = WAL")]


def test_close_ends_held_waiting_and_hung_workers_at_once(tmp_path):
    hang = write_target(tmp_path, """
        import time

        def work_once(conn, owner, send, clock, lease_ms):
            time.sleep(3600)
    """, name="hang.py")
    path = fresh_db(tmp_path)
    with Receiver(tmp_path / "receiver.db") as receiver:
        crew = Crew()
        common = dict(db_path=str(path), url=receiver.url, lease_ms=LEASE_MS, call_timeout=60.0)
        crew.start(Plan("held", "solutions.queue", hold_first_send=True, **common))
        crew.start(Plan("waiting", "solutions.queue", wait_for_go=True, **common))
        crew.start(Plan("hung", hang, **common))
        deadline = time.monotonic() + WAIT
        for worker, op in (("held", "holding"), ("waiting", "ready"), ("hung", "ready")):
            assert crew.wait_for(lambda e: (e["worker"], e["op"]) == (worker, op), deadline)
        pids = [e["pid"] for e in crew.events if e["op"] == "ready"]
        started = time.monotonic()
        crew.close()
        assert time.monotonic() - started < 10  # not the hung call's 60 s
    assert worker_threads() == []
    assert len(pids) == 3 and all(gone(pid) for pid in pids)


DRIVER = """
import sys
from pathlib import Path

from grader.runner import run_checks

marks = Path(sys.argv[1])
marks.write_text(marks.read_text() + "x" if marks.exists() else "x")
results = run_checks("solutions.queue", select="race-one-winner or crash-mid-claim-atomic"
                     " or integration-run")
print(" ".join(sorted(r.outcome for r in results)))
"""


def test_a_driver_script_without_a_main_guard_runs_once(tmp_path):
    """A script that grades at its top level, with no `if __name__ == "__main__":` guard: the
    multi-process checks start target processes (the target server's own module, or a fork of
    the zygote), never a re-run of the script's __main__ (what multiprocessing's spawn did)."""
    script = tmp_path / "driver.py"
    script.write_text(DRIVER)
    marks = tmp_path / "marks"
    out = subprocess.run([sys.executable, str(script), str(marks)], cwd=ROOT, text=True,
                         capture_output=True, timeout=240)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["passed", "passed", "passed"]
    assert marks.read_text() == "x"  # the top level ran once


INT_FINISH = """
from solutions import queue as reference


def finish(conn, claim, now):
    {finish}


def work_once(conn, owner, send, clock, lease_ms):
    c = claim(conn, owner, clock(), lease_ms)
    if c is None:
        return None
    send(c)
    return finish(conn, c, clock())
"""


@pytest.mark.parametrize("finish", ["return int(reference.finish(conn, claim, now))",
                                    "return 0"], ids=["rowcount-like", "always-0"])
def test_a_finish_that_returns_an_int_is_named_by_its_type(tmp_path, finish):
    """issue 15: finish returning 0 for False made the check say the stale finish "came back
    0 ... must be rejected with False", as if 0 had accepted it, never naming int."""
    spec = write_target(tmp_path, INT_FINISH.format(finish=finish))
    proc, results = grade(spec, tmp_path, "-k", "integration-run")
    (test,) = results["tests"]
    assert test["extra_data"]["outcome"] == "failed"
    assert "work_once returned 0 (type int); it must return bool | None." in test["output"]
    assert "must be rejected with False" not in test["output"]
    assert "S: work_once for job 1 (token=1) → 0" in test["output"]
