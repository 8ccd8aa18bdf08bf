"""The Gradescope `results.json` shape: top-level score, max_score, tests[] with name, score,
max_score, status (passed/failed), output and extra_data.check_id.

Every test keeps its full output (Gradescope shows the tests one by one), also a test that a
shared cause explains (grader.report.view.root_causes): its extra_data gets that `cause`
({kind, function, checks: how many, and type / error / where when known}), and the top-level
extra_data lists the `causes` (the same, with their check ids), most checks first.

The one place that knows it: `build` (a graded run), `not_graded` (a submission without a
verdict), `fallback` (the grader itself failed), `read` (one read back from the grader's
process), `serialise` and `write` (atomic), and the statuses a batch row can have."""

from __future__ import annotations

import json
from pathlib import Path

from grader.checkdef import all_checks as declared_checks
from grader.config import Config
from grader.results import CheckResult
from .files import write_atomically
from .messages import CHECK_TITLE, text
from .render import check_text
from .view import CheckView, ReportView, report_view

#: Why a submission has (or lacks) a grader verdict: the `status` column of the gradebook.
GRADED, TIMED_OUT, CRASHED, MISSING, AMBIGUOUS, TOO_LARGE = "graded", "timed_out", "crashed", \
    "missing", "ambiguous", "too_large"


def build(results: list[CheckResult], lang: str, *, target: str, duration: float,
          detail: str = "full", config: Config | None = None) -> dict:
    """results.json for `results` (the view built here; `from_view` when there is one)."""
    report = report_view(results, lang, target=target, detail=detail, duration=duration)
    return from_view(report, config=config)


def from_view(report: ReportView, config: Config | None = None) -> dict:
    """results.json; `config` says each check's Gradescope visibility."""
    config = config or Config()
    return {
        "score": report.score,
        "max_score": report.max_score,
        "execution_time": round(report.duration, 3),
        "output": text("ui.summary", report.lang, passed=report.passed, failed=report.failed),
        "tests": [_test(c, report.lang, config) for c in report.checks],
        "extra_data": {"target": report.target, "lang": report.lang, "detail": report.detail,
                       "repeat": report.repeat, "unstable": report.unstable,
                       "seed": report.seed, "withheld": report.withheld,
                       "causes": [{**cause.to_json(), "sentence": cause.sentence,
                                   "ids": cause.ids} for cause in report.causes]},
    }


def _test(c: CheckView, lang: str, config: Config) -> dict:
    extra = {"check_id": c.id, "outcome": c.outcome}
    if c.oracle:
        extra["oracle"] = c.oracle
    if c.cause is not None:
        extra["cause"] = c.cause.to_json()
    if c.runs:
        extra.update(runs=len(c.runs), passed_runs=c.passed_runs, unstable=c.unstable,
                     failed_runs=c.failed_runs, run_outcomes=c.runs)
    if c.seeds:
        extra.update(run_seeds=c.seeds, failed_seeds=c.failed_seeds)
    return {
        "name": f"{c.title} [{c.id}]",
        "score": c.score,
        "max_score": c.max_score,
        "status": "passed" if c.passed else "failed",
        "output": check_text(c, lang),
        "visibility": config.visibility_of(c.id),
        "extra_data": extra,
    }


def entry(check_id: str, title: str, *, score: int, max_score: int, passed: bool,
          output: str, **extra) -> dict:
    """One element of `tests`; extra_data is the check id, then `extra` in its order."""
    return {
        "name": f"{title} [{check_id}]",
        "score": score,
        "max_score": max_score,
        "status": "passed" if passed else "failed",
        "output": output,
        "extra_data": {"check_id": check_id, **extra},
    }


def not_graded(status: str, message: str, lang: str) -> dict:
    """results.json for a submission without a verdict: every declared check failed, score 0."""
    outcome = "timed_out" if status == TIMED_OUT else "errored"
    checks = declared_checks().values()
    return {
        "score": 0,
        "max_score": sum(c.points for c in checks),
        "output": message,
        "tests": [entry(c.id, text(CHECK_TITLE(c.id), lang), score=0, max_score=c.points,
                        passed=False, output=message, outcome=outcome) for c in checks],
        "extra_data": {"status": status, "lang": lang},
    }


def fallback(lang: str) -> dict:
    """results.json when the grader itself failed: score 0 and that reason, no tests."""
    return {"score": 0, "output": text("instructor.autograder-failed", lang), "tests": []}


def read(path: str | Path) -> dict | None:
    """The results.json at `path` as the grader wrote it, or None: missing, unreadable, not
    JSON, or not a results object (a dict with `tests`)."""
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) and "tests" in data else None


def serialise(payload: dict, *, one_line: bool = False) -> str:
    """The JSON text (no final newline): indented, or on one line (embedded in a script)."""
    return json.dumps(payload, ensure_ascii=False, indent=None if one_line else 2)


def write(path: str | Path, payload: dict) -> None:
    """Write `payload` to `path` atomically (grader.report.files): never half a results.json."""
    write_atomically(path, serialise(payload) + "\n")
