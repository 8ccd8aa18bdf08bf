"""Plain text of a check's view (`grader.report.view`): the teaching part under a failed check,
as the terminal report and results.json's `output` show it. Colours only when asked (a TTY
without NO_COLOR)."""

from __future__ import annotations

import os
import re
import sys
import unicodedata

from .messages import text
from .view import CheckView, RowView, Step, plain, steps, value  # noqa: F401 (plain: for the writers)

__all__ = ["PLAIN", "Style", "check_text", "failure_lines", "first_line", "pad", "plain",
           "row_lines", "step_lines", "timeline_lines", "value", "width"]


class Style:
    CODES = {"red": "31", "green": "32", "yellow": "33", "dim": "2", "bold": "1"}

    def __init__(self, enabled: bool):
        self.enabled = enabled

    def __call__(self, name: str, s: str) -> str:
        return f"\033[{self.CODES[name]}m{s}\033[0m" if self.enabled else s

    @classmethod
    def for_stream(cls, stream=sys.stdout) -> "Style":
        wanted = stream.isatty() and not os.environ.get("NO_COLOR") and os.environ.get("TERM") != "dumb"
        return cls(wanted)


PLAIN = Style(False)


def width(s: str) -> int:
    """Columns `s` takes in a terminal: East Asian wide characters take two."""
    return sum(2 if unicodedata.east_asian_width(ch) in "WF" else 1 for ch in s)


def pad(s: str, columns: int) -> str:
    return s + " " * max(0, columns - width(s))


def timeline_lines(events: list[dict], lang: str, style: Style = PLAIN) -> list[str]:
    return step_lines(steps(events, lang), style)


def step_lines(timeline: list[Step], style: Style = PLAIN) -> list[str]:
    lines = []
    for step in timeline:
        clock = f"{step.t:>6} ms" if step.t is not None else " " * 9
        line = f"{'▶' if step.failing else ' '} {clock}  {step.text}"
        lines.append(style("bold", line) if step.failing else line)
    return lines


def row_lines(row: RowView, lang: str, style: Style = PLAIN) -> list[str]:
    """The job's row as a two-column table, current vs expected, differing fields marked ≠."""
    cells = max([width(line.current) for line in row.lines] + [width(text("ui.current", lang))])
    title = f"  {pad(row.heading, 14)} {pad(text('ui.current', lang), cells)}"
    lines = [title + (f"    {text('ui.expected-col', lang)}" if row.with_expected else "")]
    for line in row.lines:
        if not row.with_expected:
            lines.append(f"    {line.column:<12} {line.current}")
        elif not line.differs:
            lines.append(f"    {line.column:<12} {pad(line.current, cells)}    {line.expected}")
        else:
            lines.append(style("red", f"  ≠ {line.column:<12} {pad(line.current, cells)}    ")
                         + style("green", line.expected))
    return lines


def failure_lines(check: CheckView, lang: str, style: Style = PLAIN) -> list[str]:
    """The teaching part of a failed check, as far as the view's detail level shows it: what
    happened, what came back, the row, the why (and the hint)."""
    lines: list[str] = [part for part in (check.problem, check.sentence) if part]
    if check.steps:
        lines.append(text("ui.timeline", lang))
        lines += ["  " + line for line in step_lines(check.steps, style)]
    if check.returned is not None:
        lines.append(f"{text('ui.came-back', lang)} {check.returned.came_back}")
        if check.returned.expected is not None:
            lines.append(f"{text('ui.expected', lang)} {check.returned.expected}")
    if check.row is not None:
        lines += row_lines(check.row, lang, style)
    lines.append(f"{text('ui.why', lang)} {check.why}")
    if check.hint is not None:  # shown by itself after failing runs in a row: it says so
        label = (text("ui.hint", lang) if check.hint_runs is None
                 else text("hints.label-after", lang, runs=check.hint_runs))
        lines.append(f"{label} {check.hint}")
    return lines


def check_text(check: CheckView, lang: str) -> str:
    """A check's result as plain text (results.json's `output`, the file formats): with
    --repeat the stability line, then the teaching part of a failure; "" for a single pass."""
    lines = [] if check.passed else failure_lines(check, lang)
    if check.stability is not None:
        lines = [check.stability] + lines
    return "\n".join(lines)


def first_line(check: CheckView, lang: str) -> str:
    """One line saying what went wrong with a failed check: the first line of the problem or
    of the check's own sentence; else what came back (and what was expected, if shown); else
    why the rule matters (what detail "none" leaves)."""
    said = check.problem or check.sentence
    if said:
        return said.splitlines()[0]
    if check.returned is not None:
        line = f"{text('ui.came-back', lang)} {check.returned.came_back}"
        if check.returned.expected is not None:
            line += f"  {text('ui.expected', lang)} {check.returned.expected}"
        return " ".join(line.splitlines())  # a value a student's code made can hold newlines
    return f"{text('ui.why', lang)} {check.why}"

