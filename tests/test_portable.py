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

from conftest import ROOT, grade, run_grader

WINDOWSISH = Path(__file__).resolve().parent / "windowsish"

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


def windowsish_env() -> dict[str, str]:
    """The environment that makes every interpreter the grade starts a simulated Windows one."""
    path = os.environ.get("PYTHONPATH")
    return {"PYTHONPATH": os.pathsep.join([str(WINDOWSISH)] + ([path] if path else []))}


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


def test_no_module_of_the_portable_path_imports_a_posix_only_module_at_its_top():
    """What a grade loads on the portable path imports under the simulated Windows (a module
    that imported fcntl, resource or termios at its top would fail here)."""
    modules = ["grader.cli", "grader.runner", "grader.runner.spawned",
               "grader.harness.target.server", "grader.harness.target.zygote_server",
               "grader.harness.judge.target_client", "grader.harness.processes.sandbox",
               "grader.harness.processes.portable", "grader.checks", "grader.watch"]
    code = "import importlib\n" + "".join(f"importlib.import_module({m!r})\n" for m in modules)
    env = {**os.environ, **windowsish_env()}
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True,
                         text=True, timeout=60)
    assert out.returncode == 0, out.stderr


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


@pytest.mark.parametrize("lang", ["en", "ja"])
def test_batch_and_the_bundles_say_once_in_one_line_that_a_class_needs_linux(lang, monkeypatch):
    from grader.harness.processes import jail
    from grader.instructor import isolated

    monkeypatch.setattr(jail, "available", lambda: 0)
    note = isolated.class_note(lang)
    assert note and "\n" not in note and "Linux" in note
    monkeypatch.setattr(jail, "available", lambda: 6)
    assert isolated.class_note(lang) is None
