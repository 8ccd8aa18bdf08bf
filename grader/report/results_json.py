"""The Gradescope `results.json` shape: top-level score, max_score, tests[] with name, score,
max_score, status (passed/failed), output and extra_data.check_id."""

from __future__ import annotations

import json
from pathlib import Path

from grader.config import Config
from .messages import text
from .render import failure_lines
from .terminal import stability_line
from grader.results import CheckResult


def build(results: list[CheckResult], lang: str, *, target: str, duration: float,
          detail: str = "full", config: Config | None = None) -> dict:
    config = config or Config()
    tests = []
    for r in results:
        output = [] if r.passed else failure_lines(r.id, r.result.to_json(), lang,
                                                    detail=detail)
        extra = {"check_id": r.id, "outcome": r.outcome}
        if r.runs:
            output = [stability_line(r, lang)] + output
            extra.update(runs=len(r.runs), passed_runs=r.passed_runs, unstable=r.unstable,
                         failed_runs=r.failed_run_numbers, run_outcomes=r.runs)
        tests.append({
            "name": f"{text(f'check.{r.id}.title', lang)} [{r.id}]",
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


def write(path: str | Path, payload: dict) -> None:
    Path(path).write_text(json.dumps(payload, ensure_ascii=False, indent=2) + "\n",
                          encoding="utf-8")
