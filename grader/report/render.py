"""Plain text of a check's view (`grader.report.view`): the teaching part under a failed check,
as the terminal report and results.json's `output` show it. Colours only when asked (a TTY
without NO_COLOR)."""

from __future__ import annotations

import os
import sys
from typing import Callable

from .messages import text
from .view import CheckView, RowView, Step, message_line, steps
from .wrapping import display_width

__all__ = ["PLAIN", "Style", "cause_text", "causes_text", "check_text", "failure_lines",
           "first_line", "one_line", "pad", "row_lines", "step_lines", "timeline_lines", "width"]


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


width = display_width  # columns `s` takes in a terminal: East Asian wide characters take two

#: How a writer fits a paragraph of a failure into its lines: (paragraph, the hanging indent
#: of its later lines, how many columns the caller puts before each line) to lines. The files
#: keep each paragraph on one line; the terminal wraps them to its width.
Fill = Callable[..., list[str]]


def one_line(paragraph: str, hanging: str = "", inset: int = 0) -> list[str]:
    return paragraph.splitlines() or [""]


def pad(s: str, columns: int) -> str:
    return s + " " * max(0, columns - width(s))


def timeline_lines(events: list[dict], lang: str, style: Style = PLAIN) -> list[str]:
    return step_lines(steps(events, lang), style)


def step_lines(timeline: list[Step], style: Style = PLAIN, fill: Fill = one_line) -> list[str]:
    """The steps, their times right-aligned in one column (as wide as the longest time: a
    drawn world's instants run to nine digits), the failing step marked ▶ and bold."""
    digits = max([6] + [len(str(step.t)) for step in timeline if step.t is not None])
    lines = []
    for step in timeline:
        clock = f"{step.t:>{digits}} ms" if step.t is not None else " " * (digits + 3)
        head = f"{'▶' if step.failing else ' '} {clock}  "
        for line in fill(head + step.text, " " * len(head)):
            lines.append(style("bold", line) if step.failing else line)
        # what the call printed, under it, each of its lines kept as it is
        lines += [" " * len(head) + style("dim", line) for line in step.printed]
    return lines


def row_lines(row: RowView, lang: str, style: Style = PLAIN) -> list[str]:
    """The job's row as a two-column table, current vs expected, differing fields marked ≠.
    The column names are as wide as the heading needs (a drawn world's job ids are long), so
    the header's words stay over their columns."""
    cells = max([width(line.current) for line in row.lines] + [width(text("ui.current", lang))])
    names = max([12, width(row.heading) - 2] + [width(line.column) for line in row.lines])
    title = f"  {pad(row.heading, names + 2)} {pad(text('ui.current', lang), cells)}"
    lines = [title + (f"    {text('ui.expected-col', lang)}" if row.with_expected else "")]
    for line in row.lines:
        if not row.with_expected:
            lines.append(f"    {pad(line.column, names)} {line.current}")
        elif not line.differs:
            lines.append(f"    {pad(line.column, names)} {pad(line.current, cells)}    "
                         f"{line.expected}")
        else:
            lines.append(style("red", f"  ≠ {pad(line.column, names)} {pad(line.current, cells)}    ")
                         + style("green", line.expected))
    return lines


def failure_lines(check: CheckView, lang: str, style: Style = PLAIN,
                  fill: Fill = one_line) -> list[str]:
    """The teaching part of a failed check, as far as the view's detail level shows it: what
    happened, what came back, the row, the why (and the hint). `fill` lays each paragraph out
    (the terminal wraps them; a statement listing keeps its lines as they are)."""
    lines: list[str] = []
    for part in (check.problem, check.sentence):
        for line in (part or "").splitlines():
            lines += fill(line, "  ") if not line.startswith(" ") else [line]
    if check.steps:
        lines.append(text("ui.timeline", lang))
        lines += ["  " + line for line in step_lines(
            check.steps, style, lambda p, hanging: fill(p, hanging, 2))]
    if check.returned is not None:
        lines += fill(f"{text('ui.came-back', lang)} {check.returned.came_back}", "  ")
        if check.returned.expected is not None:
            lines += fill(f"{text('ui.expected', lang)} {check.returned.expected}", "  ")
    if check.row is not None:
        lines += row_lines(check.row, lang, style)
    lines += fill(f"{text('ui.why', lang)} {check.why}", "")
    if check.hint is not None:  # shown by itself after failing runs in a row: it says so
        label = (text("ui.hint", lang) if check.hint_runs is None
                 else text("hints.label-after", lang, runs=check.hint_runs))
        lines += fill(f"{label} {check.hint}", "")
    return lines


def check_text(check: CheckView, lang: str) -> str:
    """A check's result as plain text (results.json's `output`, the file formats): with
    --repeat the stability line, then the teaching part of a failure, or for a check a shared
    cause explains one line naming that cause (the file leads with its story); "" for a
    single pass."""
    if check.passed:
        lines = []
    elif check.cause is not None:  # the file leads with the cause's story
        lines = [check.cause.see]
    else:
        lines = failure_lines(check, lang)
    if check.stability is not None:
        lines = [check.stability] + lines
    return "\n".join(lines)


def cause_text(cause, lang: str) -> str:
    """A shared cause as plain text, as the files lead with it: its heading, the mistake, the
    line of code and caret, the hint its checks share, and the checks it makes fail."""
    hint = [f"{text('ui.hint', lang)} {cause.hint}"] if cause.hint else []
    return "\n".join([cause.heading, *cause.sentence.splitlines(),
                      *["    " + line for line in cause.source], *hint, cause.affects])


def causes_text(report, lang: str) -> str:
    """What a results file's top-level output says: the causes first, then the first failure
    no cause explains (and how many), then the counts."""
    parts = [cause_text(cause, lang) for cause in report.causes]
    if report.lead:
        parts.append(report.lead)
    parts.append(text("ui.score", lang, score=report.score, max_score=report.max_score)
                 + "   " + text("ui.summary", lang, passed=report.passed, failed=report.failed))
    if report.hidden_line:  # the checks students do not see yet: how many, never which
        parts[-1] += "\n" + report.hidden_line
    return "\n\n".join(parts)


def first_line(check: CheckView, lang: str) -> str:
    """One line saying what went wrong with a failed check (grader.report.view.message_line)."""
    return message_line(check, lang)
