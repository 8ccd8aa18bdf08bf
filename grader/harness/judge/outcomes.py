"""How a check's run ends, in the judge's terms: the exceptions a check stops with (`CheckFailed`,
`WriteLocked`, `TargetRaised`), the failures the target process's end or load gives
(`lost_target`, `start_failure`, `limit_hit`), and how values and errors are shown on a
timeline (`show`, `show_typed`, `stamp`, `error_line`, `where`). Used by the Lab (scenario) and
by the run of a check (checkrun).
"""

from __future__ import annotations

import contextlib
import dataclasses
import errno
import os
import signal
import sqlite3
import traceback
from typing import Any

from lab.store import Claim

from grader.results import Failure, Kind, Outcome

from grader.harness.processes import sandbox
from grader.harness.wire.values import Foreign, RaisedInTarget
from .target_errors import (ProtocolError, TargetEnded, TargetLoadError, TargetProcessError,
                            TargetTimeout)

class CheckFailed(Exception):
    """The check's verdict is 'failed' (or another outcome, given in `failure.outcome`)."""

    def __init__(self, failure: Failure):
        super().__init__(failure.kind)
        self.failure = failure


class WriteLocked(Exception):
    """A write of the judge's own to the check's database, on a connection of its own, found it
    locked (SQLITE_BUSY past its busy timeout, or SQLITE_LOCKED): only the code under grade
    can hold a lock on that file then (a statement it left unfinished, a transaction it left
    open). The check's verdict, with that cause (`judge_write`), never a bug of the grader's.
    `reading`: even a read found it locked (a write transaction left open past its first write,
    or begun EXCLUSIVE)."""

    def __init__(self, error: str, reading: bool = False):
        super().__init__(error)
        self.error, self.reading = error, reading


_SQLITE_BUSY, _SQLITE_LOCKED = 5, 6

@contextlib.contextmanager
def judge_write(reading: bool = False):
    """Around a write of the judge's own (an enqueue, a requeue, a row set by hand), or a read
    (`reading`) on a connection of its own: the database found locked raises WriteLocked
    (other errors pass through: they are the grader's)."""
    try:
        yield
    except sqlite3.OperationalError as exc:
        code = getattr(exc, "sqlite_errorcode", None)
        locked = (code & 0xFF in (_SQLITE_BUSY, _SQLITE_LOCKED) if code is not None
                  else "locked" in str(exc) or "busy" in str(exc))
        if not locked:
            raise
        raise WriteLocked(error_line(exc), reading) from None


class TargetRaised(Exception):
    """The target raised: carries the original exception and a one-line description."""

    def __init__(self, function: str, exc: BaseException, where: str | None,
                 event: dict | None = None):
        super().__init__(function, exc)
        self.function = function
        self.exc = exc
        self.where = where
        self.event = event if event is not None else {}  # the call's timeline event
        self.setup = False  # raised while the check was setting up its situation


def show(value: Any) -> str:
    """The value as a student would write it: Claim(...), True, None (a Foreign: its repr)."""
    if type(value) is Claim:
        fields = ", ".join(f"{f.name}={getattr(value, f.name)!r}" for f in dataclasses.fields(value))
        return f"Claim({fields})"
    return repr(value)


def show_typed(got: Any, expected: Any) -> str:
    """`show(got)`, with its type's name when the type is what differs from `expected` (None
    for False, 1 for True, 1000.0 for 1000); a Claim for None, or None for a Claim, is plain."""
    types = {type_name(got), type_name(expected)}
    if len(types) == 1 or types <= {"Claim", "NoneType"}:
        return show(got)
    return f"{show(got)} ({type_name(got)})"


def type_name(value: Any) -> str:
    """The short name of the value's type (a Foreign's type as the target process named it)."""
    if type(value) is Foreign:
        return value.type.rsplit(".", 1)[-1]
    return type(value).__name__


def stamp(claim: Claim | None) -> dict | None:
    return None if claim is None else dataclasses.asdict(claim)


def own_files(paths: list[str]) -> str:
    """The files of a target's own connections as a report names them: base names, in order."""
    return ", ".join(dict.fromkeys(os.path.basename(p) or p for p in paths))


def expected_row(row: dict, **changes) -> dict:
    """`row` with some columns changed: the row a check expects after a step."""
    unknown = set(changes) - set(row)
    assert not unknown, f"not a column: {unknown}"
    return {**row, **changes}


def error_line(exc: BaseException) -> str:
    """`Type: message`, the way a failure sentence names an exception (one the target raised
    arrives already in that form)."""
    if isinstance(exc, RaisedInTarget):
        return exc.message
    text = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {text[0]}" if text else type(exc).__name__


def where(exc: BaseException) -> str | None:
    """file:line of the innermost frame outside the grader (the target's code, usually)."""
    grader_dir = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))  # grader/harness
    where = None
    for frame in traceback.extract_tb(exc.__traceback__):
        path = os.path.abspath(frame.filename)
        if not path.startswith(grader_dir) and "importlib" not in path:
            try:
                where = f"{os.path.relpath(path)}:{frame.lineno}"
            except ValueError:
                where = f"{path}:{frame.lineno}"
    return where


def lost_target(lost: TargetEnded | TargetTimeout | ProtocolError, step: dict | None,
                timeline: list[dict] | None = None, timeout: float | None = None) -> Failure:
    """The target process ended (a limit's signal, or an exit code or signal), hung (timed out
    after `timeout`, or the proxy's own) or broke the channel during `step`."""
    if isinstance(lost, TargetTimeout):
        return Failure(Outcome.TIMED_OUT, step=step,
                       timeout=lost.timeout if timeout is None else timeout)
    if isinstance(lost, ProtocolError):
        return Failure(Outcome.ERRORED, Kind.PROTOCOL, error=str(lost)[:300], step=step,
                       timeline=timeline)
    limit = sandbox.LIMIT_SIGNALS.get(getattr(signal, lost.signal or "", None))
    if limit is not None:
        return Failure(Outcome.RESOURCE_LIMIT, Kind.RESOURCE_LIMIT, error=limit, step=step,
                       timeline=timeline)
    how = {"signal": lost.signal} if lost.signal else {"code": lost.code}
    return Failure(Outcome.ERRORED, Kind.EXITED, step=step, timeline=timeline, **how)


def start_failure(exc: TargetProcessError, target_spec: str, timeout: float) -> Failure | None:
    """What went wrong starting the target process (importing the code under grade)."""
    if isinstance(exc, TargetLoadError):
        return Failure.load_error(exc.kind, exc.params)
    return lost_target(exc, {"op": "import", "target": target_spec}, timeout=timeout)


def limit_hit(exc: RaisedInTarget) -> str | None:
    """Which limit an exception the target raised says ran out, if any: memory (MemoryError),
    or file size (Python ignores SIGXFSZ: the write fails with EFBIG)."""
    if exc.type == "MemoryError":
        return "memory"
    if exc.message.startswith(f"OSError: [Errno {errno.EFBIG}]"):
        return "file-size"
    return None


#: How long (ms) a connection of the judge's own to a check's database waits for a lock the code
#: under grade holds, where other processes run the code too (the race, the crash, the
#: integration run): one of them may let go of it meanwhile.
SHARED_WAIT_MS = 1000


def judge_wait_ms(alone: bool) -> int:
    """The busy timeout (ms) of the judge's own connections to a check's database. `alone`: the
    code under grade is one target process whose every statement runs here, on the thread that
    also runs the judge's (a check of a family that starts no processes, the random timelines,
    the preflight's probe; outside a call its connections refuse to run anything): a lock the
    code holds when the judge's statement meets it can then only be let go of by a statement
    of the code's, which cannot run before the judge's has ended, so a wait could never end and
    none is made (the same "database is locked", at once: the verdict is the one the wait gave,
    without the wait). Else SHARED_WAIT_MS."""
    return 0 if alone else SHARED_WAIT_MS
