"""Small pieces of the judge's handle on a target process (split from target_client, issue 40,
which uses them): the environment a target process starts with (`scrubbed`), a sqlite3 error of
the judge's own told as a call's (`raised_error`), a method called through a weak reference
(`weakly`), and the checks of what the judge passes in (`conn_name`, `int64`, `short_str`) or
was sent (`what`, a load error's and a ready's fields, a reply's `printed_field` and `own_connections_field`); `CallFrame`, one
call under way.

May import: the standard library and grader.harness.wire.
"""

from __future__ import annotations

import dataclasses
import sqlite3
import weakref
from typing import Callable

from grader.harness import wire
from grader.harness.wire.values import RaisedInTarget

from .target_errors import TargetLoadError


CALLS = ("claim", "finish", "work_once")  # the calls of the code under grade


@dataclasses.dataclass
class CallFrame:
    call_id: int
    op: str
    send: Callable | None = None
    clock: Callable | None = None
    next_cb: int | None = None
    statement: Callable | None = None  # a claim on a gated connection: asked before each step
    step: int = 0  # the statements of a gated claim so far
    free: bool = False  # the judge answered "free"
    conn: str | None = None  # the connection the call was given
    # traced during it: (conn, sql, tables), tables as dbhost.DbHost.tables_read told
    statements: list = dataclasses.field(default_factory=list)
    dropped: int = 0  # statements traced over the limit
    #: work_once: for each send, what its connection held at that moment (dbhost.DbHost.held:
    #: a transaction open; the code's statements still running, each keeping its lock)
    sends_held: list = dataclasses.field(default_factory=list)


def raised_error(function: str, exc: sqlite3.Error) -> RaisedInTarget:
    """A sqlite3 error of a request the judge ran on a target's connection (setup SQL), told as
    the error a call raised. Not values.describe_error, which tells what the code under
    grade raised: its place in that code, its chain, a callback's error; this error is the
    judge's own (no place, no chain, the message cut at MAX_MESSAGE without "…")."""
    kind = next((k.__name__ for k in type(exc).__mro__ if k.__module__ == "sqlite3"), "Error")
    first = (str(exc).strip().splitlines() or [""])[0]
    return RaisedInTarget(function, type=f"sqlite3.{type(exc).__name__}",
                          message=f"{type(exc).__name__}: {first}"[:wire.MAX_MESSAGE],
                          where=None, not_implemented=False, sqlite_error=kind,
                          send_failed=None, chain=[])


def weakly(owner, method) -> Callable:
    """`method` of `owner`, called through a weak reference: the DbHost a TargetProcess holds
    (and its finalizer closes) does not keep that TargetProcess alive."""
    ref = weakref.ref(owner)

    def call(*args):
        target = ref()
        if target is not None:
            return method(target, *args)
        return None
    return call


def what(message: dict) -> str:
    kind = message.get("msg")
    return f"a {kind[:20]!r} message" if type(kind) is str else "a message without msg"


def conn_name(name) -> str:
    if type(name) is not str or not name or len(name) > wire.MAX_NAME:
        raise TypeError("a connection name is a non-empty str")
    return name


def int64(value) -> int:
    if type(value) is not int or not wire.INT_MIN <= value <= wire.INT_MAX:
        raise TypeError(f"expected a 64-bit int, got {type(value).__name__}")
    return value


def short_str(value) -> str:
    if type(value) is not str or len(value) > wire.MAX_STR:
        raise TypeError(f"expected a str, got {type(value).__name__}")
    return value


def printed_field(value, op: str) -> tuple[str, int]:
    """A reply's "printed" (to a call only): [text, characters left out], the text at most
    wire.MAX_PRINTED characters."""
    if op not in CALLS:
        raise wire.WireError(f"printed in a reply to {op}")
    items = wire.array(value, "printed", 2)
    if len(items) != 2:
        raise wire.WireError("printed is not [text, lost]")
    return (wire.string(items[0], "printed", wire.MAX_PRINTED),
            wire.integer(items[1], "printed lost"))


def dropped_field(value) -> list[tuple[str, int, object]]:
    """A reply's "drop": [[conn, epoch, [cursor, ...]], ...], the cursors the code let go of
    during the call, as (conn, epoch, ids); the ids are the judge's to check (dbhost.drop)."""
    found = []
    for item in wire.array(value, "drop", wire.MAX_NESTING * 64):
        item = wire.array(item, "drop item", 3)
        if len(item) != 3:
            raise wire.WireError("drop item is not [conn, epoch, ids]")
        found.append((wire.string(item[0], "drop conn", wire.MAX_NAME),
                      wire.integer(item[1], "drop epoch"), item[2]))
    return found


def own_connections_field(value, op: str) -> list[str]:
    """A reply's own_connections (when present): 1 to wire.MAX_OWN distinct paths, on the reply to
    a claim / finish / work_once only."""
    if op not in ("claim", "finish", "work_once"):
        raise wire.WireError(f"own_connections in a reply to {op}")
    paths = wire.array(value, "own_connections", wire.MAX_OWN)
    if not paths:
        raise wire.WireError("own_connections is empty")
    paths = [wire.string(path, "own_connections path", wire.MAX_MESSAGE) for path in paths]
    if len(set(paths)) != len(paths) or not all(paths):
        raise wire.WireError("own_connections: a path repeated or empty")
    return paths


def load_error(message: dict) -> TargetLoadError:
    """The error a "load-error" message tells (wire.WireError: not one)."""
    wire.keys(message, ("msg", "kind", "params"), what="load-error")
    kind = wire.string(message["kind"], "load-error kind", wire.MAX_NAME)
    params = wire.obj(message["params"], "load-error params")
    if len(params) > 10:
        raise wire.WireError("load-error params: too many")
    for key, value in params.items():
        wire.string(key, "load-error param name", wire.MAX_NAME)
        if type(value) is not int:
            wire.string(value, "load-error param", wire.MAX_MESSAGE)
    return TargetLoadError(kind, dict(params))


def ready_fields(message: dict) -> tuple[int, int]:
    """A "ready" message's (pid, contained) (wire.WireError: not one)."""
    wire.keys(message, ("msg", "pid"), ("contained",), what="ready")
    return (wire.integer(message["pid"], "pid"),
            wire.integer(message.get("contained", 0), "contained"))
