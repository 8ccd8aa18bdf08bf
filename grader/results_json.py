"""The Gradescope `results.json` shape: top-level score, max_score, tests[] with name, score,
max_score, status (passed/failed), output and extra_data.check_id."""

from __future__ import annotations

import json
from pathlib import Path

from .messages import text
from .render import failure_lines
from .runner import CheckResult


def build(results: list[CheckResult], lang: str, *, target: str, duration: float) -> dict:
    tests = []
    for r in results:
        tests.append({
            "name": f"{text(f'check.{r.id}.title', lang)} [{r.id}]",
            "score": r.score,
            "max_score": r.points,
            "status": "passed" if r.passed else "failed",
            "output": "" if r.passed else "\n".join(failure_lines(r.id, r.result, lang)),
            "extra_data": {"check_id": r.id, "outcome": r.outcome},
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
        "extra_data": {"target": target, "lang": lang},
    }


def write(path: str | Path, payload: dict) -> None:
    Path(path).write_text(json.dumps(payload, ensure_ascii=False, indent=2) + "\n",
                          encoding="utf-8")
