"""The terminal report: the shared causes first ("fix this first", grader.report.view), then one
line per check, the teaching text under each failure that no shared cause explains (a check
a cause explains is one line pointing above), the score."""

from __future__ import annotations

from .messages import text
from .render import PLAIN, Style, failure_lines
from .view import ReportView
from .wrapping import wrap

COLOURS = {"ok": "green", "warn": "yellow", "bad": "red"}


def from_view(report: ReportView, style: Style = PLAIN) -> str:
    lang = report.lang
    lines = [style("bold", text("ui.header", lang, target=report.target)), ""]
    if report.drawn:
        lines[-1:-1] = wrap(text("ui.drawn-world", lang, seed=report.seed), lang, "", "")
    for cause in report.causes:
        lines.append(style("bold", style("red", "▶ " + cause.heading)))
        lines += ["    " + line for line in cause.sentence.splitlines()]
        lines += wrap(cause.affects, lang, "    ", "      ")
        lines.append("")
    if report.lead:
        lines += [style("bold", report.lead), ""]
    for c in report.checks:
        if c.cause is not None:
            lines.append(f"{style(COLOURS[c.tone], c.mark)} {c.title}  "
                         f"{style('dim', f'{c.id} · {c.points}')}  → {c.cause.see_above}")
            continue
        status = "" if c.passed else f"  [{c.outcome_label}]"
        if c.stability is not None:
            status += "  " + (style("yellow", c.stability) if c.unstable else c.stability)
        lines.append(f"{style(COLOURS[c.tone], c.mark)} {c.title}  "
                     f"{style('dim', f'{c.id} · {c.points}')}{status}")
        if not c.passed:
            lines += ["    " + line
                      for line in "\n".join(failure_lines(c, lang, style)).splitlines()]
            lines.append("")
    lines.append("")
    lines.append(style("bold", text("ui.score", lang, score=report.score,
                                    max_score=report.max_score))
                 + "   " + text("ui.summary", lang, passed=report.passed, failed=report.failed))
    if report.unstable:
        lines.append(style("yellow", text("ui.unstable-summary", lang,
                                          ids=", ".join(report.unstable))))
    if report.failed == 0:
        lines.append(style("green", text("ui.all-passed", lang)))
    if report.progress:  # this run against the last local one
        lines += wrap(report.progress, lang)
    if report.hint_note:
        lines += [style("dim", line) for line in wrap(report.hint_note, lang)]
    for check in report.withheld:
        lines.append(style("yellow", text("ui.withheld", lang, **check)))
    return "\n".join(lines)
