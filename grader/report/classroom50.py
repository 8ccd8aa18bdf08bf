"""Classroom 50's `result.json` (schema `classroom50/result/v1`), made from a Gradescope
results.json: the one place that maps one shape onto the other.

Classroom 50 (foundation50/classroom50, wiki page "Advanced Autograding") runs an assignment's
autograder.py in the student's checkout with the submission's identity in the environment
(`CONTEXT_ENV`, `REVIEW_URL` optional) and reads `./result.json`: `schema`, `classroom`,
`assignment`, `submission`, `commit`, `release`, `review`, `datetime` (the submission instant, UTC
ISO 8601), integer `score` and `max-score` (the sums over `tests`), and `tests[]` of
`{test-name, passed, score, max-score}`. Extra fields on a test are kept: here `check-id` and a
one-line `message`. `graded_at` (optional in the contract) is when this grade ran.

Classroom 50 shows students every test it reads, and has no visibility of its own: the checks the
instructor's config hides (`extra_data.show` "hidden", grader.config) are one test, "Checks
hidden until published", with their points summed (so the score stays the grade) and `passed`
when all of them passed; no name, id or message of theirs is written. A check shown as a
verdict comes with its one-line message only, as results.json has it.
"""

from __future__ import annotations

import datetime as dt
from pathlib import Path
from typing import Mapping

from .files import write_atomically
from .messages import OUTCOME, text
from .results_json import serialise

SCHEMA = "classroom50/result/v1"
RESULT_NAME = "result.json"
#: What the runner must set: without them the result cannot be attributed (infrastructure error).
CONTEXT_ENV = ("CLASSROOM", "ASSIGNMENT", "SUBMISSION_TAG", "COMMIT_URL", "RELEASE_URL")


def missing_context(environ: Mapping[str, str]) -> list[str]:
    """The required variables `environ` lacks (or has empty), in CONTEXT_ENV's order."""
    return [name for name in CONTEXT_ENV if not environ.get(name)]


def from_results(results: dict, environ: Mapping[str, str], *, submitted: dt.datetime,
                 graded: dt.datetime) -> dict:
    """result.json for a Gradescope-shaped `results` (graded or not graded), the submission
    identity from `environ`, `submitted` (the commit's time) and `graded` (now), both aware."""
    lang = (results.get("extra_data") or {}).get("lang", "en")
    shown = [t for t in results.get("tests", []) if not _hidden(t)]
    tests = [_test(t, lang) for t in shown]
    hidden = [t for t in results.get("tests", []) if _hidden(t)]
    if hidden:  # counted in the grade, as one test that names none of them
        tests.append(_hidden_test(hidden, lang))
    return {
        "schema": SCHEMA,
        "classroom": environ["CLASSROOM"],
        "assignment": environ["ASSIGNMENT"],
        "submission": environ["SUBMISSION_TAG"],
        "commit": environ["COMMIT_URL"],
        "release": environ["RELEASE_URL"],
        "review": environ.get("REVIEW_URL") or environ["COMMIT_URL"],
        "datetime": utc_iso(submitted),
        "graded_at": utc_iso(graded),
        "score": sum(t["score"] for t in tests),
        "max-score": sum(t["max-score"] for t in tests),
        "tests": tests,
    }


def _test(test: dict, lang: str) -> dict:
    extra = test.get("extra_data") or {}
    return {
        "test-name": test["name"],
        "passed": test["status"] == "passed",
        "score": int(test["score"]),
        "max-score": int(test["max_score"]),
        "check-id": extra.get("check_id", ""),
        "message": _message(test, extra.get("outcome", test["status"]), lang),
    }


def _hidden(test: dict) -> bool:
    """A check the instructor's config hides from students (grader.config `show`)."""
    return (test.get("extra_data") or {}).get("show") == "hidden"


def _hidden_test(tests: list[dict], lang: str) -> dict:
    """The hidden checks as one test: their points count (Classroom 50's score is the sum over
    tests[]), their names, ids, outcomes and messages are not shown."""
    points = sum(int(t["max_score"]) for t in tests)
    return {
        "test-name": text("formats.hidden-checks", lang),
        "passed": all(t["status"] == "passed" for t in tests),
        "score": sum(int(t["score"]) for t in tests),
        "max-score": points,
        "check-id": "hidden",
        "message": text("ui.hidden-checks", lang, count=len(tests), points=points),
    }


def _message(test: dict, outcome: str, lang: str) -> str:
    """The first line of the failure text, else the outcome in words."""
    for line in (test.get("output") or "").splitlines():
        if line.strip():
            return line.strip()
    return text(OUTCOME(outcome), lang)


def utc_iso(moment: dt.datetime) -> str:
    """`2026-06-01T14:32:01Z`: the form Classroom 50's own templates write."""
    return moment.astimezone(dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def write(path: str | Path, payload: dict) -> None:
    """Write result.json atomically (grader.report.files)."""
    write_atomically(path, serialise(payload) + "\n")
