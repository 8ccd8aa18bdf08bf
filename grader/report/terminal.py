"""The terminal report: one line per check, the teaching text under each failure, the score."""

from __future__ import annotations

from .messages import text
from .render import Style, failure_lines
from grader.results import CheckResult

MARKS = {"passed": ("✓", "green"), "failed": ("✗", "red"), "errored": ("!", "red"),
         "timed_out": ("⏱", "yellow"), "not_implemented": ("·", "yellow")}


def stability_line(r: CheckResult, lang: str) -> str:
    """'passed k/N', and for an unstable check the runs that did not pass."""
    line = text("ui.passed-runs", lang, k=r.passed_runs, n=len(r.runs))
    if r.unstable:
        runs = ", ".join(map(str, r.failed_run_numbers))
        line += " — " + text("ui.unstable", lang, runs=runs)
    return line


def render(results: list[CheckResult], lang: str, style: Style, *, target: str,
           detail: str = "full") -> str:
    lines = [style("bold", text("ui.header", lang, target=target)), ""]
    for r in results:
        mark, colour = MARKS.get(r.outcome, ("?", "red"))
        points = text("ui.points", lang, score=r.score, points=r.points)
        title = text(f"check.{r.id}.title", lang)
        status = "" if r.passed else f"  [{text(f'outcome.{r.outcome}', lang)}]"
        if r.runs:
            stability = stability_line(r, lang)
            status += "  " + (style("yellow", stability) if r.unstable else stability)
        lines.append(f"{style(colour, mark)} {title}  {style('dim', f'{r.id} · {points}')}{status}")
        if not r.passed:
            lines += ["    " + line for line in "\n".join(
                failure_lines(r.id, r.result.to_json(), lang, style, detail)).splitlines()]
            lines.append("")
    score = sum(r.score for r in results)
    max_score = sum(r.points for r in results)
    passed = sum(r.passed for r in results)
    lines.append("")
    lines.append(style("bold", text("ui.score", lang, score=score, max_score=max_score))
                 + "   " + text("ui.summary", lang, passed=passed, failed=len(results) - passed))
    unstable = [r.id for r in results if r.unstable]
    if unstable:
        lines.append(style("yellow", text("ui.unstable-summary", lang, ids=", ".join(unstable))))
    if passed == len(results):
        lines.append(style("green", text("ui.all-passed", lang)))
    return "\n".join(lines)
