"""What the code under grade prints, in the target process: kept for the reply to the call that
printed it (`Printed`, `capture_output`), never a file or a pipe; and breakpoint(), which cannot
stop there (`NO_BREAKPOINT`). Split from grader.harness.target.server (issue 40), which installs
it before the code is imported.

May import: the standard library and grader.harness.wire.
"""

from __future__ import annotations

import sys
import threading

from grader.harness import wire


class Printed:
    """Where what the code under grade prints goes (sys.stdout and sys.stderr of the target
    process, from before it is imported): kept in memory for the reply to the call that printed
    it, at most wire.MAX_PRINTED characters a call, the rest only counted. Students debug by
    printing: the judge shows it beside the call (docs/protocol.md, "printed"). Never blocks (a
    pipe nobody reads would: a claim that printed a lot looked like an endless loop) and never
    writes a file."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.parts: list[str] = []
        self.size = 0
        self.lost = 0

    def write(self, text) -> int:
        if not isinstance(text, str):
            raise TypeError(f"write() argument must be str, not {type(text).__name__}")
        with self.lock:
            room = max(0, wire.MAX_PRINTED - self.size)
            if room:
                self.parts.append(text[:room])
                self.size += min(room, len(text))
            self.lost += max(0, len(text) - room)
        return len(text)

    def take(self) -> tuple[str, int]:
        """What was printed since the last take, and how many characters were left out."""
        with self.lock:
            printed, lost = "".join(self.parts), self.lost
            self.parts, self.size, self.lost = [], 0, 0
        # a lone surrogate cannot go on the wire (UTF-8): it shows as U+FFFD
        return printed.encode("utf-8", "replace").decode("utf-8", "replace"), lost


class _Stream:
    """sys.stdout or sys.stderr of the target process: a text stream writing to `Printed`."""

    encoding = "utf-8"
    errors = "strict"
    newlines = None
    line_buffering = False

    def __init__(self, sink: Printed, name: str) -> None:
        self._sink, self.name = sink, name

    def write(self, text) -> int:
        return self._sink.write(text)

    def writelines(self, lines) -> None:
        for line in lines:
            self._sink.write(line)

    def flush(self) -> None:
        pass

    def isatty(self) -> bool:
        return False

    def writable(self) -> bool:
        return True

    def readable(self) -> bool:
        return False

    def fileno(self) -> int:
        import io

        raise io.UnsupportedOperation("fileno: the grader keeps what the code prints")

    @property
    def closed(self) -> bool:
        return False


#: What breakpoint() says in the target process: it cannot stop there, and how to debug.
NO_BREAKPOINT = ("breakpoint() cannot stop here: the grader runs your code in a process of "
                 "its own, with no terminal. Debug with print() (what a call prints is shown "
                 "beside its check), or call your function from a script of your own and "
                 "stop there.")


def _no_breakpoint(*args, **kwargs):
    raise RuntimeError(NO_BREAKPOINT)


def capture_output() -> Printed:
    """From now on what this process prints (print, sys.stdout/sys.stderr writes, a traceback
    logged) goes to the returned `Printed`, and breakpoint() raises NO_BREAKPOINT at once (with
    no terminal it stopped on /dev/null: "claim raised BdbQuit")."""
    sink = Printed()
    sys.stdout = _Stream(sink, "<stdout>")
    sys.stderr = _Stream(sink, "<stderr>")
    sys.breakpointhook = _no_breakpoint
    return sink
