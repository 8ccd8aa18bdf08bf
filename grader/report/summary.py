"""The short summary `python -m grader watch` redraws after each save: the score, what to fix
first (the first shared cause, else the first failing check) with its one-line problem, and
how many checks failed. Read from the one view, like every writer; `running` names the checks
of the grade still running (their verdict comes in a second redraw)."""

from __future__ import annotations

from .messages import text
from .render import PLAIN, Style, first_line
from .terminal import COLOURS
from .view import ReportView


def from_view(report: ReportView, style: Style = PLAIN, running: list[str] = ()) -> list[str]:
    lang = report.lang
    score = text("ui.score", lang, score=report.score, max_score=report.max_score)
    line = style("bold", score) + "   " + text("ui.summary", lang, passed=report.passed,
                                                 failed=report.failed)
    if running:
        line += "   " + text("watch.so-far", lang, count=len(running))
    lines = [line]
    if report.causes:
        cause = report.causes[0]
        lines.append(style("bold", style("red", "▶ " + cause.heading)))
        lines.append("    " + _one_line(cause.sentence))
    elif report.uncaused:
        first = report.uncaused[0]
        lines.append(style("bold", report.lead))
        lines.append(f"{style(COLOURS[first.tone], first.mark)} {_one_line(first_line(first, lang))}")
    elif not running and not report.hidden:  # a hidden check's verdict is not told
        lines.append(style("green", text("ui.all-passed", lang)))
    if report.unstable:
        lines.append(style("yellow", text("ui.unstable-summary", lang,
                                          ids=", ".join(report.unstable))))
    if report.hidden_line:  # how many checks the config hides, and their points (never which)
        lines.append(report.hidden_line)
    return lines


def _one_line(s: str) -> str:
    return s.splitlines()[0] if s else ""
