"""PrairieLearn's external-grading results.json (`python -m grader --prairielearn PATH`; the
grading container writes it to /grade/results/results.json). PrairieLearn's docs/externalGrading.md
pins the shape:

    {"gradable": true, "score": 0.0-1.0, "message": str, "output": str,
     "tests": [{"name", "description", "points", "max_points", "message", "output"}]}

`score` is points earned / points available. Each test: `name` "title [check-id]" (as on
Gradescope), `description` why the rule matters; the top-level `output` is the terminal
report without colours, every story told and no paragraph wrapped (the causes first),
`points`/`max_points`, `message` the outcome when it passed or the first line of the failure
("See: <the mistake>" for a check a shared cause explains), `output` the failure's whole text as
the terminal shows it, without colours (that one line for a check a cause explains).

A target that cannot be loaded at all (every check failed because it does not compile, does not
import or lacks a function) is `"gradable": false` with `format_errors: [that one line, and the
line of code with its caret when known]`, score 0 and no tests: PrairieLearn then marks the
submission invalid and does not count the attempt.

Checks the instructor's config hides (`show = "hidden"`, grader.config): PrairieLearn shows every
test it is given, so they are not among `tests` nor in `output`; `score` still counts them (it
is the grade: PrairieLearn shows it, so a student can tell how many of those points they have,
never which check they are from) and `message` says how many checks are hidden and their
points. A check shown as a verdict has its one-line message as `output`.
"""

from __future__ import annotations

from .messages import text
from .render import check_text, first_line
from .sentences import plain
from .terminal import UNWRAPPED, from_view as terminal_report
from .view import CheckView, ReportView


def from_view(report: ReportView) -> dict:
    """The results object for `report`."""
    lang = report.lang
    summary = text("ui.summary", lang, passed=report.passed, failed=report.failed)
    if report.unloadable:
        problem = plain((report.checks[0].problem or "").splitlines()[0]
                        if report.checks[0].problem else first_line(report.checks[0], lang))
        source = report.causes[0].source if report.causes else []
        return {"gradable": False,
                "format_errors": [problem] + (["\n".join(map(plain, source))] if source else []),
                "score": 0.0, "message": problem, "output": "", "tests": []}
    message = text("ui.score", lang, score=report.score, max_score=report.max_score) \
        + " — " + summary
    if report.hidden_line:
        message += " " + report.hidden_line
    recorded, available = report.recorded_score, report.recorded_max_score
    return {
        "gradable": True,
        "score": recorded / available if available else 0.0,  # the grade: hidden checks count
        "message": message,
        "output": plain(terminal_report(report, every=True, width=UNWRAPPED)),
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
