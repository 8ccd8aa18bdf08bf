"""The Gradescope `results.json` shape: top-level score, max_score, tests[] with name, score,
max_score, status (passed/failed), output and extra_data.check_id."""

from __future__ import annotations

import json
from pathlib import Path

from grader.config import Config
from grader.results import CheckResult
from .messages import text
from .render import failure_lines
from .view import CheckView, ReportView, report_view


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
                       "repeat": report.repeat, "unstable": report.unstable},
    }


def _test(c: CheckView, lang: str, config: Config) -> dict:
    output = [] if c.passed else failure_lines(c, lang)
    extra = {"check_id": c.id, "outcome": c.outcome}
    if c.runs:
        output = [c.stability] + output
        extra.update(runs=len(c.runs), passed_runs=c.passed_runs, unstable=c.unstable,
                     failed_runs=c.failed_runs, run_outcomes=c.runs)
    return {
        "name": f"{c.title} [{c.id}]",
        "score": c.score,
        "max_score": c.max_score,
        "status": "passed" if c.passed else "failed",
        "output": "\n".join(output),
        "visibility": config.visibility_of(c.id),
        "extra_data": extra,
    }


def write(path: str | Path, payload: dict) -> None:
    Path(path).write_text(json.dumps(payload, ensure_ascii=False, indent=2) + "\n",
                          encoding="utf-8")
