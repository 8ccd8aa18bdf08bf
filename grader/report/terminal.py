"""The terminal report: one story at a time. The shared causes first ("fix this first",
grader.report.view), then one line per check, the teaching text under each failure that no
shared cause explains (a check a cause explains is one line pointing above), the score.

The view says which stories are told in full (`ReportView.in_full`: the first `told`, causes
first; `--all`: every one): each other one is a line (a cause's heading and mistake, a check's
title line), and a note under the score says how to see them all. When the causes explain every
check and none of the code ran (`ReportView.whole`: it does not load, nothing is implemented),
the report is short: the cause with its line of code and a caret, and the score.

Every paragraph is wrapped to the terminal's width between words (`grader.report.wrapping`);
the row table and statement listings keep their lines."""

from __future__ import annotations

import dataclasses

from .messages import text
from .render import PLAIN, Style, failure_lines
from .view import CheckView, ReportView
from .wrapping import columns, wrap, wrap_spans

COLOURS = {"ok": "green", "warn": "yellow", "bad": "red"}
INDENT = "    "
#: A width no paragraph reaches: the report as a file holds it (PrairieLearn's output).
UNWRAPPED = 10 ** 9


def from_view(report: ReportView, style: Style = PLAIN, width: int | None = None,
              every: bool = False) -> str:
    """The report; `width` the columns to wrap at (default: the terminal's); `every`: tell
    every story in full, whatever the view's `told` (a file holds the whole report)."""
    if every and report.told is not None:
        report = dataclasses.replace(report, told=None)
    lang, width = report.lang, width or columns()

    def para(paragraph: str, indent: str = "", hanging: str | None = None) -> list[str]:
        return wrap(paragraph, lang, indent, hanging, width)

    lines = [style("bold", text("ui.header", lang, target=report.target)), ""]
    short = report.whole and report.told is not None
    if report.drawn and not short:
        lines[-1:-1] = para(text("ui.drawn-world", lang, seed=report.seed))
    for cause in report.causes:
        heading = "▶ " + cause.heading
        if not report.in_full(cause):  # one line: the heading and the mistake
            lines += wrap_spans([(heading + ":", _bold_red(style)),
                                 (" " + _first(cause.sentence), None)], lang, "", "  ", width)
            continue
        lines += [_bold_red(style)(line) for line in para(heading, "", "  ")]
        for line in cause.sentence.splitlines():
            lines += para(line, INDENT, INDENT + "  ")
        lines += [INDENT + INDENT + line for line in cause.source]
        if cause.hint and not short:
            lines += para(f"{text('ui.hint', lang)} {cause.hint}", INDENT, INDENT)
        if not short:
            lines += para(cause.affects, INDENT, INDENT + "  ")
        lines.append("")
    if not short:
        if report.lead:
            lines += [style("bold", line) for line in para(report.lead)] + [""]
        for c in report.checks:
            lines += _check(report, c, style, width)
        lines.append("")
    lines += wrap_spans([(text("ui.score", lang, score=report.score,
                                max_score=report.max_score), _styled(style, "bold")),
                         ("   " + text("ui.summary", lang, passed=report.passed,
                                       failed=report.failed), None)], lang, "", "", width)
    if report.hidden_line:  # how many checks are hidden, never which
        lines += para(report.hidden_line)
    if short:
        return "\n".join(lines)
    if report.unstable:
        lines += [style("yellow", line) for line in para(
            text("ui.unstable-summary", lang, ids=", ".join(report.unstable)))]
    if report.failed == 0 and not report.hidden:
        lines.append(style("green", text("ui.all-passed", lang)))
    if report.untold:
        lines += [style("dim", line) for line in para(text(
            "ui.untold", lang, shown=report.told, total=len(report.stories)))]
    if report.progress:  # this run against the last local one
        lines += para(report.progress)
    if report.hint_note:
        lines += [style("dim", line) for line in para(report.hint_note)]
    for check in report.withheld:
        lines += [style("yellow", line) for line in para(text("ui.withheld", lang, **check))]
    return "\n".join(lines)


def _check(report: ReportView, c: CheckView, style: Style, width: int) -> list[str]:
    """A check's line, and under a failure told in full its teaching text."""
    lang = report.lang
    spans = [(c.mark, _styled(style, COLOURS[c.tone])), (" " + c.title, None),
             (f"  {c.id} · {c.points}", _styled(style, "dim"), True)]
    if c.cause is not None:
        return wrap_spans(spans + [(f"  → {c.cause.see_above}", None, True)], lang, "", "  ", width)
    if not c.passed:
        spans.append((f"  [{c.outcome_label}]", None, True))
    if c.stability is not None:
        spans.append(("  " + c.stability, _styled(style, "yellow") if c.unstable else None))
    lines = wrap_spans(spans, lang, "", "  ", width)
    if c.passed:
        return lines
    if not report.in_full(c):  # one line; under it its hint, when the student asked for them
        if report.hints_asked and c.hint:
            lines += wrap(f"{text('ui.hint', lang)} {c.hint}", lang, INDENT, INDENT, width)
        return lines

    def fill(paragraph: str, hanging: str = "", inset: int = 0) -> list[str]:
        return wrap(paragraph, lang, "", hanging, width - len(INDENT) - inset)

    return lines + [INDENT + line for line in failure_lines(c, lang, style, fill)] + [""]


def _styled(style: Style, name: str):
    return lambda s: style(name, s)


def _bold_red(style: Style):
    return lambda s: style("bold", style("red", s))


def _first(s: str) -> str:
    return s.splitlines()[0] if s else ""
