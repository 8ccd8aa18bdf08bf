"""The Gradescope `results.json` shape: top-level score, max_score, tests[] with name, score,
max_score, status (passed/failed), output and extra_data.check_id.

The top-level `output` leads with the shared causes (grader.report.causes.root_causes), as the
terminal does: each cause's heading, the mistake, its line of code and caret, the checks it
makes fail; then the first failure of its own and how many; then the score. A test that a cause
explains says so in one line ("See: <the mistake>") instead of repeating it, and its extra_data
gets the `cause`'s number; the top-level extra_data lists the `causes` ({kind, function,
checks: how many, type / error / where when known, sentence, ids}), most checks first. Every
other failed test keeps its whole story (every story, whatever the terminal told in full).

The one place that knows it: `build` (a graded run), `not_graded` (a submission without a
verdict), `fallback` (the grader itself failed), `read` (one read back from the grader's
process), `serialise` and `write` (atomic), and the statuses a batch row can have.

What students see (the config's `show`, grader.config): Gradescope shows a test to students
according to its `visibility` and every test to instructors, and when any test is hidden it keeps
the total score from students. So every check is a test here, a hidden one whole (with the
visibility that hides it: students see it once the due date passed or the grades are
published, as configured), and the top-level `score` counts every check; the top-level
`output`, which students always see, names no hidden check (the causes are those of the checks
shown; one line says how many are hidden and their points). A check shown as a verdict has
only its one-line message as `output`. `extra_data.show` is each check's level."""

from __future__ import annotations

import json
from pathlib import Path

from grader.checkdef import all_checks as declared_checks
from grader.config import Config
from grader.results import CheckResult
from .files import write_atomically
from .messages import CHECK_TITLE, text
from .render import causes_text, check_text
from .view import CheckView, ReportView, report_view

#: Why a submission has (or lacks) a grader verdict: the `status` column of the gradebook.
GRADED, TIMED_OUT, CRASHED, MISSING, AMBIGUOUS, NOT_REGULAR, TOO_LARGE = "graded", \
    "timed_out", "crashed", "missing", "ambiguous", "not_regular", "too_large"


def build(results: list[CheckResult], lang: str, *, target: str, duration: float,
          detail: str = "full", config: Config | None = None) -> dict:
    """results.json for `results` (the view built here; `from_view` when there is one)."""
    report = report_view(results, lang, target=target, detail=detail, duration=duration)
    return from_view(report, config=config)


def from_view(report: ReportView, config: Config | None = None) -> dict:
    """results.json; `config` says each check's Gradescope visibility."""
    config = config or Config()
    return {
        "score": report.recorded_score,  # hidden checks count: Gradescope hides the total
        "max_score": report.recorded_max_score,
        "execution_time": round(report.duration, 3),
        "output": causes_text(report, report.lang),
        "tests": [_test(c, report.lang, config) for c in report.every_check],
        "extra_data": {"target": report.target, "lang": report.lang, "detail": report.detail,
                       "repeat": report.repeat, "unstable": report.unstable,
                       "seed": report.seed, "withheld": report.withheld,
                       "causes": [{**cause.to_json(), "sentence": cause.sentence,
                                   "ids": cause.ids} for cause in report.causes]},
    }


def _test(c: CheckView, lang: str, config: Config) -> dict:
    extra = {"check_id": c.id, "outcome": c.outcome, "show": c.level}
    if c.oracle:
        extra["oracle"] = c.oracle
    if c.cause is not None:
        extra["cause"] = c.cause.number  # extra_data.causes[number - 1]
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
    """results.json for a submission without a verdict: every declared check failed, score 0.
    The top-level output is `message`; each test names it in one line ("See: ..."), as a test
    a shared cause explains does."""
    outcome = "timed_out" if status == TIMED_OUT else "errored"
    checks = declared_checks().values()
    see = text("ui.see-cause", lang, cause=(message.splitlines() or [""])[0])
    return {
        "score": 0,
        "max_score": sum(c.points for c in checks),
        "output": message,
        "tests": [entry(c.id, text(CHECK_TITLE(c.id), lang), score=0, max_score=c.points,
                        passed=False, output=see, outcome=outcome) for c in checks],
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
    """The JSON text (no final newline): on one line (embedded in a script), or a key a line
    with each test, and each value of a dict such as extra_data, on a line of its own (forty
    tests of eleven indented lines each made a 30 KB file of a submission that does not
    import)."""
    if one_line:
        return json.dumps(payload, ensure_ascii=False)
    parts = []
    for key, value in payload.items():
        if key == "tests" and isinstance(value, list) and value:
            body = ",\n".join("    " + json.dumps(t, ensure_ascii=False) for t in value)
            parts.append(f'  {json.dumps(key)}: [\n{body}\n  ]')
        elif isinstance(value, dict) and value:  # extra_data: a key a line, each value compact
            body = ",\n".join(f"    {json.dumps(k, ensure_ascii=False)}: "
                              f"{json.dumps(v, ensure_ascii=False)}" for k, v in value.items())
            parts.append(f"  {json.dumps(key, ensure_ascii=False)}: {{\n{body}\n  }}")
        else:
            parts.append(f"  {json.dumps(key, ensure_ascii=False)}: "
                         f"{json.dumps(value, ensure_ascii=False)}")
    return "{\n" + ",\n".join(parts) + "\n}" if parts else "{}"


def write(path: str | Path, payload: dict) -> None:
    """Write `payload` to `path` atomically (grader.report.files): never half a results.json."""
    write_atomically(path, serialise(payload) + "\n")
