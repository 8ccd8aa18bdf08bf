"""PrairieLearn's external-grading results.json (`python -m grader --prairielearn PATH`; the
grading container writes it to /grade/results/results.json). PrairieLearn's docs/externalGrading.md
pins the shape:

    {"gradable": true, "score": 0.0-1.0, "message": str, "output": str,
     "tests": [{"name", "description", "points", "max_points", "message", "output"}]}

`score` is points earned / points available. Each test: `name` "title [check-id]" (as on
Gradescope), `description` why the rule matters; the top-level `output` is the terminal
report without colours, `points`/`max_points`, `message` the outcome
when it passed or the first line of the failure, `output` the failure's whole text as the
terminal shows it, without colours.

A target that cannot be loaded at all (every check failed because it does not compile, does not
import or lacks a function) is `"gradable": false` with `format_errors: [that one line]`, score 0
and no tests: PrairieLearn then marks the submission invalid and does not count the attempt.
"""

from __future__ import annotations

from .messages import text
from .render import check_text, first_line, plain
from .terminal import from_view as terminal_report
from .view import CheckView, ReportView


def from_view(report: ReportView) -> dict:
    """The results object for `report`."""
    lang = report.lang
    summary = text("ui.summary", lang, passed=report.passed, failed=report.failed)
    if report.unloadable:
        problem = plain(first_line(report.checks[0], lang))
        return {"gradable": False, "format_errors": [problem], "score": 0.0,
                "message": problem, "output": "", "tests": []}
    return {
        "gradable": True,
        "score": report.score / report.max_score if report.max_score else 0.0,
        "message": text("ui.score", lang, score=report.score, max_score=report.max_score)
                   + " — " + summary,
        "output": plain(terminal_report(report)),
        "tests": [_test(c, lang) for c in report.checks],
    }


def _test(c: CheckView, lang: str) -> dict:
    return {
        "name": f"{c.title} [{c.id}]",
        "description": c.why,
        "points": c.score,
        "max_points": c.max_score,
        "message": c.outcome_label if c.passed else plain(first_line(c, lang)),
        "output": plain(check_text(c, lang)),
    }
