"""Where a lane's judge is when its answer is overdue: running a statement of the code's SQL, or
not.

The code's SQL runs in the judge's process (grader.harness.judge.dbhost), and SQLite cannot stop
every statement there: a wait for a lock lasts the busy timeout the code set (`PRAGMA
busy_timeout`, up to the lockdown's bound) whatever `interrupt()` says, and one function over a
large value runs as one step of its virtual machine, which the progress handler never sees. The
judge's own timeout (an alarm, a watchdog) then cannot end the check, and the process that
oversees the lane gives up on it at its backstop (grader.runner.lanes). Whether that is the
code's doing or the grader's is what a `Mark` tells: one byte the lane and its overseer share,
1 while the judge runs a request of the code's SQL, 0 otherwise. A lane overdue with the mark set
timed out in the code's SQL (`grader.results.Kind.SQL_STUCK`); otherwise the grader failed.

A forked lane shares an anonymous mapping with the grading process (a fork keeps it shared,
and so do the check's forked judges); a spawned lane (the portable path) maps a file the grading
process made (`Mark.in_file`), on every platform that path runs on; the portable path's home
lane, a thread of the grading process, shares its mark in memory. The process that runs a judge
adopts its lane's mark (`adopt`); dbhost sets it around each request (`here`).

May import: the standard library.
"""

from __future__ import annotations

import mmap
import os
import tempfile


class Mark:
    """One byte shared by a lane and the process that oversees it: 1 while the lane's judge runs
    a request of the code's SQL."""

    def __init__(self, path: str | None = None):
        self.path = path
        if path is None:
            self._map = mmap.mmap(-1, 1)  # anonymous: shared with the forks made after
        else:
            with open(path, "r+b") as file:
                self._map = mmap.mmap(file.fileno(), 1)

    @classmethod
    def in_file(cls, folder: str) -> "Mark":
        """A mark in a new file of `folder`, for a spawned lane to map (`Mark(path)`)."""
        fd, path = tempfile.mkstemp(prefix="sql-running-", dir=folder)
        with os.fdopen(fd, "wb") as file:
            file.write(b"\0")
        return cls(path)

    def set(self, running: bool) -> None:
        self._map[0] = 1 if running else 0

    @property
    def running(self) -> bool:
        """The judge runs a request of the code's SQL now."""
        try:
            return self._map[0] == 1
        except ValueError:  # closed
            return False

    def close(self) -> None:
        try:
            self._map.close()
        except (OSError, ValueError):
            pass


_here: Mark | None = None


def adopt(mark: Mark | None) -> None:
    """This process runs its lane's judges: `mark` is the one dbhost sets (`here`)."""
    global _here
    _here = mark


def here() -> Mark | None:
    """The mark of the lane this process runs judges for; None outside a lane."""
    return _here
