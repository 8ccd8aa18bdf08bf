"""The code's own SQL functions, aggregates, window functions and collations (compute-only
callbacks), kept in the target process beside the code that registered them.

`Functions` is one proxy connection's registry. `conn.create_function(...)` and its siblings
(`dbproxy.ProxyConnection`) check their arguments here as the real module does (`check`: on a
connection in memory of this process's own sqlite3, so every TypeError, ValueError and
"Error creating function" is the real module's), then ask the judge to register a stand-in on
its real connection (the request "function", grader.harness.judge.callbacks), then keep the
callable by number (`add`). When the judge's SQLite calls that stand-in, the judge asks this
process ({"op": "fn", ...}, a call nested in the database request under way) and `answer`
runs the callable here, on the thread that made the request, and turns what it returned into
an SQLite value as sqlite3 does (`result`). What the callable raises goes back as the call's
error; the judge's stand-in then raises, so sqlite3 fails the statement with its own error
("user-defined function raised exception", "user-defined aggregate's 'step' method raised
error", a collation's 0). The protocol: docs/protocol.md, "The code's SQL functions".

Nothing here is believed: the judge validates every value that comes back, and a function may
not use the connection (the target server refuses a database request made while one runs).
"""

from __future__ import annotations

import operator
import sqlite3

from grader.harness import wire

#: The registering methods of sqlite3.Connection, by the kind of callback each registers.
METHODS = {"function": "create_function", "aggregate": "create_aggregate",
           "window": "create_window_function", "collation": "create_collation"}
#: An aggregate's (or window function's) methods the real module may call, in its words.
AGGREGATE_METHODS = ("step", "finalize", "value", "inverse")
#: Aggregate (and window function) instances alive at once on one connection (a group by of
#: many groups, statements never finished): past it, the oldest is let go of.
MAX_INSTANCES = wire.DB_MAX_AGGREGATES


def _function_args(name, narg, func, *, deterministic=False):
    return name, narg, func, deterministic


def _aggregate_args(name, n_arg, aggregate_class):
    return name, n_arg, aggregate_class, False


def _window_args(name, num_params, aggregate_class, /):
    return name, num_params, aggregate_class, False


def _collation_args(name, callable, /):  # noqa: A002 - the real method's word
    return name, -1, callable, False


_ARGS = {"function": _function_args, "aggregate": _aggregate_args, "window": _window_args,
         "collation": _collation_args}
_checker: sqlite3.Connection | None = None


def check(kind: str, args: tuple, kwargs: dict) -> tuple:
    """(name, narg, callable, deterministic) of a registration, its arguments checked as the
    real module checks them (raises what it raises: a TypeError, a ValueError, an
    OperationalError "Error creating function" for a narg out of range or a name too long)."""
    global _checker
    if _checker is None:
        _checker = sqlite3.connect(":memory:", check_same_thread=False)
    method = getattr(_checker, METHODS[kind])
    try:
        name, narg, func, deterministic = _ARGS[kind](*args, **kwargs)
    except TypeError:  # the real module's words for it
        method(*args, **kwargs)
        raise
    if func is None:  # a removal: of a registration the checker has too (3.10 raises KeyError
        _quietly(method, name, narg, len)  # removing a collation it never had, as the judge's
    method(*args, **kwargs)                # module does where the code never registered it)
    if func is not None:  # let go of the callable at once (no statement runs here)
        _quietly(method, name, narg, None)
    return name, narg, func, bool(deterministic)


def _quietly(method, name, narg, func) -> None:
    try:
        if method.__name__ == "create_collation":
            method(name, func)
        else:
            method(name, narg, func)
    except Exception:  # noqa: BLE001 - a Python whose sqlite3 takes no None here: kept
        pass


def key(kind: str, name: str, narg: int) -> tuple:
    """What SQLite tells one registration from another by: a function by its name (ASCII case
    folded) and its number of arguments, a collation by its name."""
    folded = name.translate(_ASCII_LOWER)
    return ("collation", folded) if kind == "collation" else ("function", folded, narg)


_ASCII_LOWER = {c: c + 32 for c in range(ord("A"), ord("Z") + 1)}


class Functions:
    """The callables one proxy connection registered, by number."""

    def __init__(self) -> None:
        self.numbers: dict[tuple, int] = {}  # key -> the number its callable has now
        self.callables: dict[int, tuple[str, object]] = {}  # number -> (kind, callable)
        self.instances: dict[int, object] = {}  # an aggregate's instances under way
        self.made = 0  # numbers given to callables and instances so far
        self.kept: BaseException | None = None  # what a collation raised last (`raise_kept`)

    def number(self) -> int:
        """A number no callable or instance of this connection had."""
        self.made += 1
        return self.made

    def add(self, kind: str, name: str, narg: int, func, number: int | None) -> None:
        """Keep `func` as `number`: the judge registered it as `name` (None: it removed it)."""
        which = key(kind, name, narg)
        old = self.numbers.pop(which, None)
        if old is not None:
            self.callables.pop(old, None)
        if func is not None and number is not None:
            self.numbers[which] = number
            self.callables[number] = (kind, func)

    def answer(self, request: dict):
        """Run one call the judge's SQLite made of a stand-in: what goes back as the reply's
        "result". What the callable raises propagates (the target server sends it as the
        call's error)."""
        call = request.get("call")
        args = [wire.sql_value_back(v) for v in request.get("args") or ()]
        if call == "new":
            kind, factory = self._callable(request, ("aggregate", "window"))
            instance = factory()
            number = self.number()
            self.instances[number] = instance
            while len(self.instances) > MAX_INSTANCES:
                del self.instances[next(iter(self.instances))]
            names = AGGREGATE_METHODS if kind == "window" else AGGREGATE_METHODS[:2]
            return {"obj": number, "has": [m for m in names if hasattr(instance, m)]}
        if call in AGGREGATE_METHODS:
            number = request.get("obj")
            instance = (self.instances.pop(number) if call == "finalize"
                        else self.instances[number])
            value = getattr(instance, call)(*args)
            return None if call in ("step", "inverse") else result(value)
        if call == "call":
            _, func = self._callable(request, ("function",))
            return result(func(*args))
        if call == "compare":
            _, func = self._callable(request, ("collation",))
            try:
                order = func(*args)
            except BaseException as exc:
                self.kept = exc
                raise
            try:  # as sqlite3 reads it: what is no int compares equal
                order = operator.index(order)
            except Exception:  # noqa: BLE001
                return 0
            return (order > 0) - (order < 0)
        raise LookupError(f"no call {str(call)[:40]!r}")

    def raise_kept(self) -> None:
        """Raise what a collation raised last, once (the statement it failed is over)."""
        error, self.kept = self.kept, None
        if error is not None:
            try:
                raise error
            finally:
                del error

    def _callable(self, request: dict, kinds: tuple) -> tuple:
        kind, func = self.callables[request.get("fn")]
        if kind not in kinds:
            raise LookupError("a callable of another kind")
        return kind, func


def result(value):
    """What a function returned, as sqlite3 hands it to SQLite (`_pysqlite_set_result`): None,
    an int, a float, a str (UTF-8), a buffer's bytes; anything else raises, and sqlite3 would
    fail the statement just the same. An int out of SQLite's range is {"i": "+" | "-"}: the
    judge's stand-in returns such an int, and its module fails as this one would."""
    if value is None:
        return None
    if isinstance(value, int):
        value = int.__int__(value)
        if not wire.INT_MIN <= value <= wire.INT_MAX:  # the judge's module fails the same way
            return {"i": "+" if value > 0 else "-"}
        return value
    if isinstance(value, float):
        return wire.sql_value(float.__float__(value))
    if isinstance(value, str):
        text = str.__str__(value)
        text.encode("utf-8")  # a lone surrogate: sqlite3's UnicodeEncodeError
        return _fitting(text)
    try:
        data = memoryview(value).tobytes()
    except TypeError:
        raise TypeError(f"a function returned a {type(value).__name__}, which SQLite does "
                        "not take") from None
    return _fitting(wire.sql_value(data))


def _fitting(value):
    """`value` (a str, or bytes as the wire writes them), if it fits one message on the channel
    with room to spare; else the function fails (a value of more than about 3 MiB cannot be
    handed back, as none can be fetched: docs/protocol.md)."""
    size = len(value) if type(value) is str else len(value["b"])
    if size >= wire.MAX_LINE // 8 and len(wire.encode({"result": value})) >= wire.MAX_LINE - 1024:
        raise ValueError("string or blob too big for the channel")
    return value
