"""Run the graded checks through pytest (with pytest-json-report) and collect one result per check."""

from __future__ import annotations

import contextlib
import io
import os
from pathlib import Path

import pytest
from pytest_jsonreport.plugin import JSONReport

from .results import CheckResult, Failure, outcome_of, result_from_json

CHECKS_DIR = Path(__file__).with_name("checks")


class GraderError(Exception):
    """The grader itself could not run (exit status 2)."""


class NoCheckSelected(GraderError):
    """`select` matches no check (a pass of `watch` may select none: not an error there)."""


def run_checks(impl: str, *, lang: str = "en", timeout_scale: float = 1.0,
               select: str | None = None, repeat: int = 1, seed: int = 1,
               sweep: int = 1) -> list[CheckResult]:
    """Grade `impl` (module name or .py path); `select` is a pytest -k expression; `repeat`
    runs every check that many times on fresh databases; `seed` draws the checks' worlds and
    the random timelines; `sweep` runs every check in that many worlds (seed, seed + 1...)."""
    args = [
        str(CHECKS_DIR), "-c", str(CHECKS_DIR / "pytest.ini"), "--rootdir", str(CHECKS_DIR),
        "-q", "--no-header", "--tb=no", "-p", "pytest_jsonreport.plugin",
        f"--impl={impl}", f"--lang={lang}", f"--timeout-scale={timeout_scale}",
        f"--repeat={repeat}", f"--seed={seed}", f"--sweep={sweep}",
        "--json-report-file=none", "--json-report-omit", "log", "streams",
    ]
    if select:
        args += ["-k", select]
    plugin = JSONReport()
    sink = io.StringIO()
    with contextlib.redirect_stdout(sink), _cwd_on_path(), _no_plugin_autoload():
        code = pytest.main(args, plugins=[plugin])
    report = plugin.report
    if code == pytest.ExitCode.NO_TESTS_COLLECTED and select:
        raise NoCheckSelected(f"no check matches -k {select!r} (a check id such as"
                              " finish-at-expiry, or a part of one; python -m grader checks"
                              " lists every id)")
    if report is None or code not in (pytest.ExitCode.OK, pytest.ExitCode.TESTS_FAILED):
        raise GraderError(f"the checks could not run (pytest exit {int(code)}):\n{sink.getvalue()}")
    results = []
    for test in report["tests"]:
        meta = test.get("metadata") or {}
        if "check_id" not in meta:
            raise GraderError(f"{test['nodeid']} is not a declared check")
        failure = result_from_json(meta["result"]) if meta.get("result") else _from_pytest(test)
        results.append(CheckResult(
            id=meta["check_id"], points=meta["points"], outcome=outcome_of(failure),
            result=failure, duration=sum(test.get(s, {}).get("duration", 0.0)
                                         for s in ("setup", "call", "teardown")),
            runs=meta.get("runs") or [], seeds=meta.get("seeds") or []))
    return results


def _from_pytest(test: dict) -> Failure:
    """A check that never reached the sandbox (a fixture or the check module itself broke)."""
    stage = next((test[s] for s in ("setup", "call") if test.get(s, {}).get("outcome") == "failed"),
                 {})
    return Failure.grader_bug(stage.get("longrepr", ""))


@contextlib.contextmanager
def _no_plugin_autoload():
    # Whatever pytest plugins happen to be installed must not change (or slow) the grading.
    old = os.environ.get("PYTEST_DISABLE_PLUGIN_AUTOLOAD")
    os.environ["PYTEST_DISABLE_PLUGIN_AUTOLOAD"] = "1"
    try:
        yield
    finally:
        if old is None:
            del os.environ["PYTEST_DISABLE_PLUGIN_AUTOLOAD"]
        else:
            os.environ["PYTEST_DISABLE_PLUGIN_AUTOLOAD"] = old


@contextlib.contextmanager
def _cwd_on_path():
    # `lab.queue` and a student's own modules resolve from the folder the grader runs in.
    import sys

    cwd = os.getcwd()
    added = cwd not in sys.path
    if added:
        sys.path.insert(0, cwd)
    try:
        yield
    finally:
        if added and cwd in sys.path:
            sys.path.remove(cwd)
