"""Progress of a batch on stderr: a bar redrawn in place on a terminal, one plain line per
finished submission otherwise (logs, CI), nothing when quiet."""

from __future__ import annotations

import sys

from grader.report.messages import text

BAR_WIDTH = 30


class Progress:
    def __init__(self, total: int, lang: str, stream=None, quiet: bool = False):
        self.total = total
        self.lang = lang
        self.stream = stream or sys.stderr
        self.quiet = quiet
        self.tty = self.stream.isatty()
        self.done = 0

    def finished(self, name: str, status: str, score: int, max_score: int) -> None:
        self.done += 1
        if self.quiet:
            return
        line = text("instructor.progress", self.lang, done=self.done, total=self.total,
                    name=name, status=text(f"instructor.status.{status}", self.lang),
                    score=score, max_score=max_score)
        if self.tty:
            filled = BAR_WIDTH * self.done // max(self.total, 1)
            bar = "█" * filled + "░" * (BAR_WIDTH - filled)
            self.stream.write(f"\r\033[K{bar} {line}")
        else:
            self.stream.write(line + "\n")
        self.stream.flush()

    def close(self) -> None:
        if self.tty and not self.quiet and self.done:
            self.stream.write("\n")
            self.stream.flush()
