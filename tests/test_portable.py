"""Issue 42: the portable path (grader.harness.processes.portable) gives the Linux path's verdicts.

Every process the grade launches starts with what a Windows Python lacks taken away
(tests/windowsish/sitecustomize.py, on PYTHONPATH: no os.fork, process groups, SIGALRM timers,
fd passing, fcntl, resource, termios; Popen without pass_fds or sessions; select on sockets
only). The reference and mutants chosen for what the portable path does differently (the
two-process race, the lock held during send, a function that hangs, a check that times out,
a kill at a statement, a process that exits) are graded that way and the normal way, and every
check's outcome, and the score, must be the same."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from conftest import ROOT, grade, run_grader, windowsish_env
from grader.harness.processes import portable

PROGRAMS = [
    "solutions/queue.py",
    "tests/mutants/race_read_before_begin.py",  # the two-process race
    "tests/mutants/lock_send_inside_claim_transaction.py",  # the lock held during send
    "tests/mutants/hang_claim_loops_forever.py",  # the preflight's hang
    "tests/mutants/outcome_finish_hangs_at_lease_end.py",  # a check's own timeout
    "tests/mutants/crash_token_then_lease.py",  # killed at a statement
    "tests/mutants/outcome_finish_exits_when_rejected.py",  # the target process exits
    "tests/mutants/stamps_finish_ignores_token.py",  # a plain wrong answer
]


#: Both paths at twice the checks' timeouts: verdicts are the same at any scale, and a loaded CI
#: machine must not turn a slow moment of either path into a difference.
OPTIONS = ("--no-history", "--timeout-scale", "2")


def verdicts(results: dict) -> tuple[dict[str, str], float]:
    return ({t["extra_data"]["check_id"]: t["extra_data"]["outcome"] for t in results["tests"]},
            results["score"])


def test_the_fixture_takes_the_surface_away_and_the_portable_path_is_chosen():
    probe = ("import os, signal, socket, importlib.util\n"
             "missing = [not hasattr(os, 'fork'), not hasattr(os, 'killpg'),"
             " not hasattr(os, 'setsid'), not hasattr(signal, 'setitimer'),"
             " not hasattr(socket, 'send_fds')]\n"
             "for name in ('fcntl', 'resource', 'termios'):\n"
             "    try:\n"
             "        __import__(name)\n"
             "    except ImportError:\n"
             "        missing.append(True)\n"
             "    else:\n"
             "        missing.append(False)\n"
             "from grader.harness.processes import portable\n"
             "print(all(missing), portable.forkless())\n")
    env = {**os.environ, **windowsish_env()}
    out = subprocess.run([sys.executable, "-c", probe], cwd=ROOT, env=env, capture_output=True,
                         text=True, timeout=60)
    assert out.stdout.split() == ["True", "True"], out.stderr


#: What the portable path loads, by the process that loads it: the grading process (the
#: preflight's judge runs on a thread of it), a spawned lane (started by the portable module's
#: main, which starts its first spare target before it imports the lane: LANE), a target
#: server, a watch and its spawned grades, and the checks every judge imports.
PORTABLE_PATH_MODULES = [
    "grader.cli", "grader.runner", "grader.runner.spawned", "grader.runner.lanes",
    "grader.harness.processes.portable", "grader.harness.processes.launch",
    "grader.harness.processes.sandbox", "grader.harness.processes.zygote",
    "grader.harness.judge.target_client", "grader.harness.judge.target_pipe",
    "grader.harness.target.server", "grader.harness.target.zygote_server", "grader.checks",
    "grader.watch", "grader.report.terminal", "grader.plugin.pytest_plugin"]

#: Imports each module named on the command line, then every other module of the grader (a
#: module added later is held to the rule without being listed), then the checks; prints the
#: modules that did not import.
IMPORT_ALL = """
import importlib, pkgutil, sys, traceback
import grader
from grader.checkdef import all_checks
names = sys.argv[1:] + [m.name for m in pkgutil.walk_packages(grader.__path__, "grader.")
                        if not m.name.endswith("__main__")]
failed = []
for name in names:
    try:
        importlib.import_module(name)
    except BaseException:
        failed.append(name + ": " + traceback.format_exc(limit=-1))
all_checks()
print(len(names), failed)
"""


def test_no_module_of_the_portable_path_imports_a_posix_only_module_at_its_top():
    """What a grade loads on the portable path, and every module of the grader, imports under
    the simulated Windows (a module that imported fcntl, resource or termios at its top would
    fail here); so does every check module."""
    from grader.runner import spawned

    assert spawned.LANE[0] in PORTABLE_PATH_MODULES and spawned.LANE[1] in PORTABLE_PATH_MODULES
    env = {**os.environ, **windowsish_env()}
    out = subprocess.run([sys.executable, "-c", IMPORT_ALL, *PORTABLE_PATH_MODULES], cwd=ROOT,
                         env=env, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    count, failed = out.stdout.split(" ", 1)
    assert failed.strip() == "[]", failed
    assert int(count) > len(PORTABLE_PATH_MODULES) + 50  # the grader's modules were found


def test_a_lane_starts_its_first_target_before_it_imports_the_lane(tmp_path):
    """The portable module's main (how a spawned lane starts: grader.runner.spawned.LANE)
    starts the spare target server before it imports the module it runs, then returns that
    module's main(args); without a module it says how it is used."""
    (tmp_path / "fake_lane.py").write_text(
        "def main(args):\n    print('main', args)\n    return 3\n", encoding="utf-8")
    probe = ("import sys\n"
             "from grader.harness.processes import portable\n"
             "portable.start_spare = lambda env: print('spare', 'fake_lane' in sys.modules)\n"
             "sys.exit(portable.main(['fake_lane', 'lane']))\n")
    env = {**os.environ, **windowsish_env()}
    env["PYTHONPATH"] += os.pathsep + str(tmp_path)
    out = subprocess.run([sys.executable, "-c", probe], cwd=ROOT, env=env, capture_output=True,
                         text=True, timeout=60)
    assert out.returncode == 3, out.stderr
    assert out.stdout.splitlines() == ["spare False", "main ['lane']"]
    usage = subprocess.run([sys.executable, "-m", "grader.harness.processes.portable"], cwd=ROOT,
                           env=env, capture_output=True, text=True, timeout=60)
    assert usage.returncode == 2 and "usage:" in usage.stderr


def test_told_its_unit_is_the_last_a_lane_starts_no_spare_after_it(monkeypatch):
    """A target process takes the spare that waits and starts the next (the next check's);
    once the lane is told its unit is the grade's last (grader.runner.spawned.LAST:
    `portable.spares_wanted(False)`), it takes the one that waits and starts no other, and a
    target process after that starts afresh, for itself alone."""
    started = []

    def popen(args, python, cwd, env, log):  # a stand-in server: reads its stdin to the end
        process = subprocess.Popen([sys.executable, "-c", "import sys; sys.stdin.buffer.read()"],
                                   stdin=subprocess.PIPE, stdout=subprocess.PIPE, bufsize=0)
        started.append(process)
        return process

    monkeypatch.setattr(portable, "_popen", popen)
    monkeypatch.delenv("LEASELAB_SPARES", raising=False)
    env, taken = {"PATH": os.environ.get("PATH", "")}, []
    portable.stop_spares()
    try:
        portable.start_spare(env=env)  # a lane's first, before its first unit
        assert len(started) == 1
        taken.append(portable.spawn_target("solutions.queue", env=env))
        assert taken[-1][0].pid == started[0].pid and len(started) == 2
        portable.spares_wanted(False)
        taken.append(portable.spawn_target("solutions.queue", env=env))
        assert taken[-1][0].pid == started[1].pid and len(started) == 2
        taken.append(portable.spawn_target("solutions.queue", env=env))
        assert taken[-1][0].pid == started[2].pid and len(started) == 3
    finally:
        portable.spares_wanted(True)
        portable.stop_spares()
        for process, fd, _ in taken:
            os.close(fd)
            process.kill()
            process.wait(10)
        for process in started:
            process.kill()
            process.wait(10)


@pytest.fixture(scope="module")
def both_paths(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("portable")

    def portable(program: str):
        out = tmp / f"portable-{Path(program).stem}.json"
        proc = run_grader("--impl", program, "--json", str(out), *OPTIONS, env=windowsish_env())
        assert out.exists(), f"no results.json (exit {proc.returncode}):\n{proc.stderr}"
        return proc, json.loads(out.read_text(encoding="utf-8"))

    with ThreadPoolExecutor(max_workers=2) as pool:
        linux = dict(zip(PROGRAMS, pool.map(lambda p: grade(p, tmp, *OPTIONS), PROGRAMS)))
        windowsish = dict(zip(PROGRAMS, pool.map(portable, PROGRAMS)))
    return linux, windowsish


@pytest.mark.parametrize("program", PROGRAMS, ids=[Path(p).stem for p in PROGRAMS])
def test_the_portable_path_gives_the_same_verdicts(program, both_paths):
    linux, windowsish = both_paths
    (linux_proc, linux_results), (win_proc, win_results) = linux[program], windowsish[program]
    assert "Traceback" not in win_proc.stderr, win_proc.stderr
    (win, win_score), (lin, lin_score) = verdicts(win_results), verdicts(linux_results)
    differ = {cid: (win.get(cid), lin.get(cid)) for cid in set(win) | set(lin)
              if win.get(cid) != lin.get(cid)}
    told = "\n".join(t["output"][:800] for t in win_results["tests"]
                     if t["extra_data"]["check_id"] in differ)
    assert differ == {}, f"(portable, linux) outcomes differ:\n{told}"
    assert win_score == lin_score
    assert win_proc.returncode == linux_proc.returncode
    bugs = [t["extra_data"]["check_id"] for t in win_results["tests"]
            if "The grader itself failed" in t["output"]]
    assert bugs == []


#: A target whose import never ends (far beyond any check's limit, and any safety net's).
BLOCKED_IMPORT = "import threading\n\nthreading.Event().wait()  # the import never ends\n"

#: One check's run, as a lane runs it (grader.runner.run_unit), printed as results JSON: on the
#: Linux path its judge is forked and timed by its parent; on the portable path it is watched
#: here (grader.harness.processes.sandbox.run_watched).
ONE_UNIT = """
import json, sys
from grader.checkdef import all_checks
from grader.results import result_to_json
from grader.runner import Unit, run_unit, settings_for
settings = settings_for(sys.argv[1], timeout_scale=float(sys.argv[3]))
runs, _ = run_unit(Unit(all_checks()[sys.argv[2]], None), settings)
print(json.dumps([None if run is None else result_to_json(run) for run in runs]))
"""


def one_unit(target: Path, check: str, scale: float, env: dict | None) -> list:
    out = subprocess.run([sys.executable, "-c", ONE_UNIT, str(target), check, str(scale)],
                         cwd=ROOT, env={**os.environ, **(env or {})}, capture_output=True,
                         text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout)


def test_a_check_counts_the_import_of_the_code_on_both_paths(tmp_path):
    """Issue 42: the portable path credits a fresh interpreter's start-up to the check (the
    Linux path forks it from the zygote in milliseconds), but not the import of the code under
    grade, which the Linux path's check counts. A check whose target's import never ends times
    out at the check's own limit on both paths, with the same verdict, long before the start's
    safety net (target_client.START_TIMEOUT)."""
    from grader.harness.judge.target_client import START_TIMEOUT

    target = tmp_path / "blocked_import.py"
    target.write_text(BLOCKED_IMPORT, encoding="utf-8")
    scale = 0.5
    linux = one_unit(target, "finish-at-expiry", scale, None)
    windowsish = one_unit(target, "finish-at-expiry", scale, windowsish_env())
    assert windowsish == linux
    assert [run["outcome"] for run in linux] == ["timed_out"]
    assert linux[0]["timeout"] < START_TIMEOUT


def test_an_import_that_never_ends_is_told_alike_on_both_paths(tmp_path):
    """The preflight's probe gives the import its limit (PREFLIGHT_TIMEOUT, scaled) on both
    paths: every check gets the same verdict, and no check waits for its own timeout."""
    target = tmp_path / "blocked_import.py"
    target.write_text(BLOCKED_IMPORT, encoding="utf-8")
    options = ("--no-history", "--timeout-scale", "0.3")
    linux_proc, linux_results = grade(str(target), tmp_path, *options)
    out = tmp_path / "portable.json"
    win_proc = run_grader("--impl", str(target), "--json", str(out), *options,
                          env=windowsish_env())
    assert out.exists(), f"no results.json (exit {win_proc.returncode}):\n{win_proc.stderr}"
    win_results = json.loads(out.read_text(encoding="utf-8"))
    assert "Traceback" not in win_proc.stderr, win_proc.stderr
    assert verdicts(win_results) == verdicts(linux_results)
    assert [t["output"] for t in win_results["tests"]] == \
        [t["output"] for t in linux_results["tests"]]
    assert win_proc.returncode == linux_proc.returncode == 1
    assert set(verdicts(linux_results)[0].values()) != {"passed"}


@pytest.mark.parametrize("lang", ["en", "ja"])
def test_batch_and_the_bundles_say_once_in_one_line_that_a_class_needs_linux(lang, monkeypatch):
    from grader.harness.processes import jail
    from grader.instructor import isolated

    monkeypatch.setattr(jail, "available", lambda: 0)
    note = isolated.class_note(lang)
    assert note and "\n" not in note and "Linux" in note
    monkeypatch.setattr(jail, "available", lambda: 6)
    assert isolated.class_note(lang) is None
