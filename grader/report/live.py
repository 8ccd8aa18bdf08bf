"""While a grade runs on a terminal: one line, redrawn in place as each check's verdict comes in
(lesson order), erased before the report is printed. Nothing at all when the output is not a
terminal (a pipe, a file, CI): the report there is exactly the report."""

from __future__ import annotations

import os
import shutil

from grader.results import CheckResult

from .messages import text
from .render import width

MARKS = {True: "✓", False: "✗"}


class LiveLine:
    def __init__(self, stream, total: int, lang: str, hidden: frozenset[str] = frozenset()):
        """`hidden`: the checks students do not see (the config's `show`): their verdicts are
        neither drawn nor counted, and `total` is of the others."""
        self.stream, self.total, self.lang, self.hidden = stream, total, lang, hidden
        self.enabled = _is_terminal(stream)
        self.done = self.not_passed = 0
        self.shown = False

    def show(self, result: CheckResult) -> None:
        """Count `result` and redraw the line with it as the latest verdict."""
        if result.id in self.hidden:
            return
        self.done += 1
        self.not_passed += not result.passed
        if not self.enabled:
            return
        line = text("ui.live", self.lang, mark=MARKS[result.passed], id=result.id,
                    done=self.done, total=self.total, failed=self.not_passed)
        self._draw(_fit(line, shutil.get_terminal_size((80, 24)).columns - 1))

    def clear(self) -> None:
        if self.shown:
            self._draw("")
            self.shown = False

    def _draw(self, line: str) -> None:
        try:
            self.stream.write("\r\033[K" + line)
            self.stream.flush()
        except (OSError, ValueError):  # the terminal went away: the report will say the rest
            self.enabled = False
            return
        self.shown = bool(line)


def _is_terminal(stream) -> bool:
    try:
        return stream.isatty() and os.environ.get("TERM") != "dumb"
    except (AttributeError, ValueError):
        return False


def _fit(line: str, columns: int) -> str:
    """`line` cut to `columns` terminal columns (wide characters take two), so that it never
    wraps: a wrapped line could not be redrawn in place."""
    out, used = [], 0
    for ch in line:
        used += width(ch)
        if used > max(columns, 10):
            break
        out.append(ch)
    return "".join(out)
