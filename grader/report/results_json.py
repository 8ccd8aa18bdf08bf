"""The Gradescope `results.json` shape: top-level score, max_score, tests[] with name, score,
max_score, status (passed/failed), output and extra_data.check_id.

The one place that knows it: `build` (a graded run), `not_graded` (a submission without a
verdict), `fallback` (the grader itself failed), `read` (one read back from the grader's
process), `serialise` and `write` (atomic), and the statuses a batch row can have."""

from __future__ import annotations

import json
from pathlib import Path

from grader.checkdef import all_checks as declared_checks
from grader.config import Config
from .files import write_atomically
from .messages import CHECK_TITLE, text
from .render import failure_lines
from .terminal import stability_line
from grader.results import CheckResult

#: Why a submission has (or lacks) a grader verdict: the `status` column of the gradebook.
GRADED, TIMED_OUT, CRASHED, MISSING, AMBIGUOUS, TOO_LARGE = "graded", "timed_out", "crashed", \
    "missing", "ambiguous", "too_large"


def build(results: list[CheckResult], lang: str, *, target: str, duration: float,
          detail: str = "full", config: Config | None = None) -> dict:
    config = config or Config()
    tests = []
    for r in results:
        output = [] if r.passed else failure_lines(r.id, r.result, lang, detail=detail)
        extra = {"check_id": r.id, "outcome": r.outcome}
        if r.runs:
            output = [stability_line(r, lang)] + output
            extra.update(runs=len(r.runs), passed_runs=r.passed_runs, unstable=r.unstable,
                         failed_runs=r.failed_run_numbers, run_outcomes=r.runs)
        tests.append({
            "name": f"{text(CHECK_TITLE(r.id), lang)} [{r.id}]",
            "score": r.score,
            "max_score": r.points,
            "status": "passed" if r.passed else "failed",
            "output": "\n".join(output),
            "visibility": config.visibility_of(r.id),
            "extra_data": extra,
        })
    score = sum(r.score for r in results)
    max_score = sum(r.points for r in results)
    passed = sum(r.passed for r in results)
    return {
        "score": score,
        "max_score": max_score,
        "execution_time": round(duration, 3),
        "output": text("ui.summary", lang, passed=passed, failed=len(results) - passed),
        "tests": tests,
        "extra_data": {"target": target, "lang": lang, "detail": detail,
                       "repeat": max((len(r.runs) for r in results), default=0) or 1,
                       "unstable": [r.id for r in results if r.unstable]},
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
