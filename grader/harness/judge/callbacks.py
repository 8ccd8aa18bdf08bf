"""The code's SQL functions on the judge's side: stand-ins registered on the real connection that
call the code's callables in the target process, and take back only validated SQLite values.

A proxy's request {"op": "function", "kind", "name", "narg", "deterministic", "fn"} (served by
`dbhost.DbHost`, which calls `register`) registers, on the real connection of the code's and
on that one only, a stand-in of the kind asked: a scalar function, an aggregate class, a window
function class or a collation, bound to the number `fn` the target process keeps the callable
by (`fn` null: the function or collation is removed, as a None callable removes it in sqlite3).
When SQLite calls a stand-in, it asks the target through `DbHost.call_out` (the TargetProcess's
nested call {"op": "fn", ...}, made while the target waits for the reply to its own request)
and returns what came back, checked here (`answer`): an SQLite value (None, an int of SQLite's
range, a float, a str, bytes), a collation's order (-1, 0, 1), an aggregate instance's number and
the methods it has. What the code's callable raised is `FunctionRaised`: the stand-in raises it,
and the real sqlite3 module makes of it what it makes of any callback that raised (the same
class and message as on a real connection: it is that module that calls the stand-in). Nothing
from the target is ever run here: only data crosses.

Bounds: a stand-in runs only while the code's own request is served (`Hosted.serving`): a
statement of the judge's own on that connection (its setup SQL, a row read) never calls the
target; a name that is SQLite's own function or collation, or the judge's (`harness_count`),
cannot be registered (the judge's statements and triggers on the connection use them); at most
`MAX_FUNCTIONS` registrations per connection; a callback's time counts against the call's
timeout (the TargetProcess gives the nested call what is left of it), and `MAX_CALLS_PER_REQUEST`
calls per request at most.
"""

from __future__ import annotations

import sqlite3
from typing import Callable

from grader.harness import wire

#: The request that registers one (dbhost serves it here).
OP = "function"
KINDS = ("function", "aggregate", "window", "collation")
#: Registrations kept per connection (distinct names and argument counts).
MAX_FUNCTIONS = wire.DB_MAX_FUNCTIONS
#: Calls of the code's callables in one proxy request (one statement and its rows): past it the
#: stand-in fails the statement. The call's timeout bounds them first, in practice.
MAX_CALLS_PER_REQUEST = 1_000_000
#: The longest name SQLite takes for a function (bytes of UTF-8; longer: "Error creating").
MAX_NAME = 255
#: The judge's own SQL functions and those SQLite refuses to the code (dbhost's authorizer).
RESERVED = ("harness_count", "harness_fail", "load_extension", "fts3_tokenizer")
#: SQLite's built-in collations.
BUILTIN_COLLATIONS = ("binary", "nocase", "rtrim")


class FunctionRaised(Exception):
    """The code's callable raised in the target process (or the target could not run it): the
    stand-in raises this, and sqlite3 fails the statement as it does for any callback."""


#: The error class of such a statement's reply (dbhost.error_data).
COLLATION_RAISED = wire.DB_COLLATION_RAISED


class CollationRaised(FunctionRaised):
    """A collation of the code's raised: sqlite3 lets the exception out of the statement, and
    the proxy raises the code's own (which it kept), not an error of the module's."""


class Refused(Exception):
    """A stand-in called where it may not ask the target (a statement of the judge's own)."""


def _builtin_functions() -> frozenset:
    """The names of SQLite's own functions (lower case), where its build lists them."""
    try:
        probe = sqlite3.connect(":memory:")
        try:
            return frozenset(str(row[0]).lower() for row in probe.execute(
                "SELECT name FROM pragma_function_list WHERE builtin"))
        finally:
            probe.close()
    except sqlite3.Error:
        return frozenset()


BUILTIN_FUNCTIONS = _builtin_functions()


def register(conn, request: dict, host) -> None:
    """Serve a proxy's "function" request on `conn` (`hosted.Hosted`): register (or remove) a
    stand-in on its real connection. A malformed request is a wire.WireError (the target broke
    the protocol); what the real module raises is the code's error, as on a real connection."""
    kind = request.get("kind")
    if kind not in KINDS:
        raise wire.WireError("function: unknown kind")
    name = wire.string(request.get("name"), "function name", MAX_NAME)
    narg = wire.integer(request.get("narg"), "function narg")
    deterministic = wire.boolean(request.get("deterministic"), "function deterministic")
    number = request.get("fn")
    if number is not None:
        number = wire.integer(number, "function number")
    folded = name.lower()
    if folded in RESERVED or (kind == "collation" and folded in BUILTIN_COLLATIONS) or (
            kind != "collation" and folded in BUILTIN_FUNCTIONS):
        raise sqlite3.NotSupportedError(
            f"{name!r} is SQLite's own or the grader's: the connection the grader hands in does "
            "not let code replace it (docs/contract.md)")
    registered = conn.functions
    which = (kind == "collation", folded, -1 if kind == "collation" else narg)
    if number is not None and which not in registered and len(registered) >= MAX_FUNCTIONS:
        raise sqlite3.OperationalError("too many functions registered on this connection")
    real = conn.real
    if kind == "function":
        stand_in = None if number is None else _scalar(conn, host, number)
        real.create_function(name, narg, stand_in, deterministic=deterministic)
    elif kind == "collation":
        real.create_collation(name, None if number is None else _collation(conn, host, number))
    else:
        stand_in = None if number is None else _aggregate(conn, host, number, kind == "window")
        if kind == "window":
            real.create_window_function(name, narg, stand_in)
        else:
            real.create_aggregate(name, narg, stand_in)
    if number is None:
        registered.pop(which, None)
    else:
        registered[which] = number


def _ask(conn, host, request: dict):
    """One call of the code's callable: asked of the target, its answer (checked by the
    TargetProcess with `answer`). Only while the code's own request is served."""
    if not conn.serving:
        raise Refused("a statement of the judge's own called a function of the code's")
    call_out: Callable | None = host.call_out
    if call_out is None:
        raise Refused("no target process to call")
    host.function_calls += 1
    if host.function_calls > MAX_CALLS_PER_REQUEST:
        raise Refused("too many calls of the code's functions in one request")
    request.update(conn=conn.name, epoch=conn.epoch)
    if not fits(request):
        raise Refused("arguments too long for one message on the channel")
    host.calling += 1
    try:
        return call_out(request)
    finally:
        host.calling -= 1


def fits(message: dict) -> bool:
    """Whether `message` fits one line on the channel with room to spare (measured only when
    its values are long enough for it to matter)."""
    size = sum(len(v) if type(v) is str else len(str(v)) for v in message.get("args") or ()
               if type(v) is not int and v is not None)
    if size < wire.MAX_LINE // 8:
        return True
    try:
        return len(wire.encode(message)) < wire.MAX_LINE - 1024
    except (wire.WireError, ValueError):
        return False


def _values(args) -> list:
    return [wire.sql_value(value) for value in args]


def _scalar(conn, host, number: int) -> Callable:
    def stand_in(*args):
        return _ask(conn, host, {"call": "call", "fn": number, "args": _values(args)})
    return stand_in


def _collation(conn, host, number: int) -> Callable:
    def stand_in(left, right):
        return _ask(conn, host, {"call": "compare", "fn": number,
                                 "args": _values((left, right))})
    return stand_in


def _aggregate(conn, host, number: int, window: bool) -> type:
    """A class sqlite3 makes an instance of for each group (or window): the target makes the
    code's own instance, and this one has the methods that one has, each a call of it."""

    def method(obj: int, name: str) -> Callable:
        def call(*args):
            return _ask(conn, host, {"call": name, "fn": number, "obj": obj,
                                     "args": _values(args)})
        return call

    class StandIn:
        def __init__(self):
            made = _ask(conn, host, {"call": "new", "fn": number})
            for name in made["has"]:
                setattr(self, name, method(made["obj"], name))

    return StandIn


def answer(request: dict, message: dict):
    """The target's reply to a call of a stand-in (`request`), checked: what the stand-in
    returns. FunctionRaised where the code's callable raised (or the target refused the call);
    wire.WireError where the reply breaks the protocol."""
    wire.keys(message, ("msg", "id"), ("result", "raised", "refused"), what="function reply")
    outcome = [k for k in ("result", "raised", "refused") if k in message]
    if len(outcome) != 1:
        raise wire.WireError("function reply needs exactly one of result, raised, refused")
    if outcome != ["result"]:
        raise (CollationRaised if request["call"] == "compare" else FunctionRaised)(outcome[0])
    value = message["result"]
    call = request["call"]
    if call in ("step", "inverse"):
        if value is not None:
            raise wire.WireError(f"{call} answered a value")
        return None
    if call == "compare":
        if type(value) is not int or value not in (-1, 0, 1):
            raise wire.WireError("a collation answered no order")
        return value
    if call == "new":
        value = wire.obj(value, "new")
        wire.keys(value, ("obj", "has"), what="new")
        has = wire.array(value["has"], "has", 4)
        if any(name not in ("step", "finalize", "value", "inverse") for name in has) or \
                len(set(has)) != len(has):
            raise wire.WireError("new: unknown methods")
        return {"obj": wire.integer(value["obj"], "obj"), "has": has}
    if type(value) is dict and len(value) == 1 and value.get("i") in ("+", "-"):
        # an int out of SQLite's range: returned as such, the real module fails as it would
        return wire.INT_MAX + 1 if value["i"] == "+" else wire.INT_MIN - 1
    return wire.sql_value_back(value)
