"""Helpers for the project's own tests: grade an implementation the way a user does."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
MUTANTS = ROOT / "tests" / "mutants"

# Strict messages (grader.report.messages): a missing word, language or placeholder raises instead
# of showing the key, in this process and in every grader it starts (they inherit os.environ).
os.environ["LEASELAB_STRICT_MESSAGES"] = "1"
# No local run history (grader.report.history) beside the graded files of the project (lab/,
# solutions/, tests/mutants/): a verdict or a hint must not depend on the runs before it. The
# history's own tests turn it back on with LEASELAB_NO_HISTORY="".
os.environ["LEASELAB_NO_HISTORY"] = "1"
# Bytecode caches for the grader, as on a student's machine after a first run: the suite starts
# the grader hundreds of times, and without them every start compiles it again. Recorded grades
# (batch, the bundle) still set PYTHONDONTWRITEBYTECODE themselves, beside the submissions.
os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
# The grades the tests start run as a student runs them locally, in the lesson's world, whether
# the suite runs in CI or not: in CI (CI=true, GITHUB_ACTIONS) a grade given no --replay draws a
# fresh world (grader.cli.in_ci). The tests of that default set the variables themselves;
# IN_CI keeps whether the suite itself runs in CI.
IN_CI = {name: os.environ.pop(name) for name in ("CI", "GITHUB_ACTIONS") if name in os.environ}


@pytest.fixture
def lenient_messages(monkeypatch):
    """Strict messages off, as for a student: for tests that feed malformed results on purpose
    and check that a report still comes out."""
    monkeypatch.delenv("LEASELAB_STRICT_MESSAGES", raising=False)


def run_grader(*args: str, cwd: Path = ROOT, env: dict | None = None,
               timeout: float = 300) -> subprocess.CompletedProcess:
    """`python -m grader ARGS` in a child process, as a student or CI would run it."""
    # A wide terminal, whatever the one running the tests: a sentence is then one line, and
    # the report's wrapping is tested at given widths (tests/test_report_length.py).
    full_env = {**os.environ, "NO_COLOR": "1", "LANG": "C.UTF-8", "COLUMNS": "200",
                **(env or {})}
    full_env.pop("LC_ALL", None)
    return subprocess.run([sys.executable, "-m", "grader", *args], cwd=cwd, env=full_env,
                          capture_output=True, text=True, timeout=timeout)


def grade(impl: str, tmp_path: Path, *extra: str) -> tuple[subprocess.CompletedProcess, dict]:
    """Grade `impl`; return the process and its results.json."""
    out = tmp_path / f"results-{abs(hash(impl))}.json"
    proc = run_grader("--impl", impl, "--json", str(out), *extra)
    assert out.exists(), f"no results.json (exit {proc.returncode}):\n{proc.stderr}"
    return proc, json.loads(out.read_text(encoding="utf-8"))


def by_check(results: dict) -> dict[str, dict]:
    return {t["extra_data"]["check_id"]: t for t in results["tests"]}


@pytest.fixture(scope="session")
def solution_results(tmp_path_factory) -> tuple[subprocess.CompletedProcess, dict]:
    return grade("solutions.queue", tmp_path_factory.mktemp("solution"))


@pytest.fixture(scope="session")
def stub_results(tmp_path_factory) -> tuple[subprocess.CompletedProcess, dict]:
    return grade("lab.queue", tmp_path_factory.mktemp("stubs"))


#: Source for a hostile target: `channel_fds()` lists the write ends of pipes it holds (the
#: channel to the judge among them), as code that wants to forge messages would find them.
CHANNEL_FDS = """
import os


def channel_fds():
    found = []
    for name in os.listdir("/proc/self/fd"):
        try:
            if not os.readlink(f"/proc/self/fd/{name}").startswith("pipe:"):
                continue
            with open(f"/proc/self/fdinfo/{name}") as info:
                flags = int(info.read().split("flags:")[1].split()[0], 8)
        except (OSError, IndexError, ValueError):
            continue
        if flags & 3 == os.O_WRONLY:
            found.append(int(name))
    return found
"""


def gone(pid: int) -> bool:
    """No process has this pid any more."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    return False
