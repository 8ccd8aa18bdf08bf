"""pytest glue for the graded checks: the `--impl` option, the sandboxed `graded` fixture and
the check metadata that goes into the JSON report (read by grader.runner)."""

from __future__ import annotations

import os
import tempfile

import pytest

from grader.harness import sandbox, scenario
from grader.harness.world import LESSON_SEED
from grader.checkdef import module_rank
from grader.report.messages import default_lang
from grader.report.render import failure_lines
from grader.report.view import check_view
from grader.harness.target import DEFAULT_TARGET
from grader.harness.target_client import TargetProcess, TargetProcessError
from grader.results import CheckResult, Failure, outcome_of, result_to_json


def pytest_addoption(parser):
    group = parser.getgroup("leaselab", "lease lab grader")
    group.addoption("--impl", default=DEFAULT_TARGET,
                    help="module name or .py file to grade (default: lab.queue)")
    group.addoption("--lang", default=None, choices=("en", "ja"), help="language of messages")
    group.addoption("--timeout-scale", type=float, default=1.0,
                    help="multiply every check's wall-clock safety timeout")
    group.addoption("--repeat", type=int, default=1,
                    help="run every check N times, each on a fresh database")
    group.addoption("--sweep", type=int, default=1,
                    help="run every check in N worlds: seeds SEED, SEED+1, ... (each --repeat "
                         "times)")
    group.addoption("--seed", type=int, default=LESSON_SEED,
                    help="the seed every check's world (times, lease length, names, ids) and "
                         "the random timelines are drawn from (default: the lesson's values)")


@pytest.hookimpl(tryfirst=True)  # before pytest's own -k deselection sees the items
def pytest_collection_modifyitems(items):
    # `-k finish-at-expiry` selects by check id (as the reports show it), not only by test name.
    for item in items:
        marker = item.get_closest_marker("check")
        if marker is not None:
            item.extra_keyword_matches.add(marker.kwargs["id"])
    # Run and report the checks in the order the lesson tells its rules (stable within a module).
    items.sort(key=lambda item: module_rank(item.module.__name__))


def pytest_configure(config):
    config.addinivalue_line("markers", "check(id, points): a graded check of the lease lab")


@pytest.fixture(scope="session")
def preflight(request):
    """Start the target once (in a target process of its own, like every check): if it cannot
    be graded, every check says why at once instead of each waiting for its own timeout."""
    spec = request.config.getoption("--impl")
    scale = request.config.getoption("--timeout-scale")

    def probe():
        step = {"op": "import", "target": spec}
        sandbox.report_step(step)
        try:
            TargetProcess(spec, start_timeout=10.0 * scale).close()
        except TargetProcessError as exc:
            return scenario.start_failure(exc, spec, 10.0 * scale)
        return None

    return sandbox.run(probe, timeout=10.0 * scale + 5)


class Graded:
    def __init__(self, request, preflight):
        self.request = request
        self.preflight = preflight
        self.spec = request.config.getoption("--impl")
        self.scale = request.config.getoption("--timeout-scale")
        self.lang = request.config.getoption("--lang") or default_lang()
        self.repeat = max(1, request.config.getoption("--repeat"))
        self.seed = request.config.getoption("--seed")
        self.sweep = max(1, request.config.getoption("--sweep"))

    def run(self, check_id, body, timeout):
        """Run the check `repeat` times in each of `sweep` worlds; the reported result is the
        first that did not pass."""
        seeds = [(self.seed + i) % 2 ** 63 for i in range(self.sweep) for _ in range(self.repeat)]
        runs = [self._run_once(check_id, body, timeout, seed) for seed in seeds]
        failure = next((f for f in runs if f is not None), None)
        self.request.node.check_result = result_to_json(failure)  # read by grader.runner
        many = len(runs) > 1
        self.request.node.check_runs = [outcome_of(f) for f in runs] if many else []
        self.request.node.check_seeds = seeds if self.sweep > 1 else []
        if failure is not None:
            view = check_view(CheckResult(check_id, 0, failure.outcome, failure), self.lang)
            pytest.fail("\n".join(failure_lines(view, self.lang)), pytrace=False)

    def _run_once(self, check_id, body, timeout, seed):
        if self.preflight is not None:
            return self.preflight
        with tempfile.TemporaryDirectory(prefix="leaselab-", dir=ram_folder()) as workdir:
            return sandbox.run(lambda: scenario.run_check(body, self.spec, workdir, seed,
                                                          call_timeout=timeout * self.scale + 5,
                                                          check=check_id),
                               timeout=timeout * self.scale)


RAM_FOLDER = "/dev/shm"
RAM_NEEDED = 512 * 1024 * 1024  # free bytes: room for a check's file-size limit, and more


def ram_folder() -> str | None:
    """Where a check's databases go: a RAM-backed folder where there is one with room to spare
    (SQLite's fsyncs cost nothing there; a SIGKILLed process loses nothing there either, so
    the crash check stays honest), else the temporary folder (None)."""
    try:
        stats = os.statvfs(RAM_FOLDER)
    except OSError:
        return None
    room = stats.f_bavail * stats.f_frsize
    return RAM_FOLDER if room >= RAM_NEEDED and os.access(RAM_FOLDER, os.W_OK) else None


@pytest.fixture
def graded(request, preflight):
    return Graded(request, preflight)


def pytest_json_runtest_metadata(item, call):
    if call.when != "call":
        return {}
    marker = item.get_closest_marker("check")
    if marker is None:
        return {}
    return {"check_id": marker.kwargs["id"], "points": marker.kwargs["points"],
            "result": getattr(item, "check_result", None),
            "runs": getattr(item, "check_runs", []), "seeds": getattr(item, "check_seeds", [])}
