"""The connection the code under grade is handed: a proxy for a real one in the judge's process.

Imported by the target server (the target process); it holds no database handle. Here lives
`ProxyConnection`; its cursor, `ProxyCursor`, and the parameters and errors both share, in
`proxycursor`; the code's SQL functions in `functions`. Each operation
of `ProxyConnection` / `ProxyCursor` that touches the database is one request to the judge's
`dbhost.DbHost`, through `transport(request) -> reply` (the target server's channel), which runs
the very sqlite3 call it stands for on the real connection; the reply's error is raised here
again as the same class (sqlite3's own, or a builtin), with the same message and, where it has
them, sqlite_errorcode / sqlite_errorname. So the contract's "behaves as a sqlite3.Connection"
holds by construction for everything that reaches the database; what is kept here is what a
real connection keeps in Python: `row_factory`, `text_factory`, the trace callback of the code's
own, a cursor's `arraysize` and the rows already read.

Parameters are turned into SQLite values here as the sqlite3 module would (adapters registered with
`sqlite3.register_adapter` and `__conform__` included). A value it cannot bind (an int out of
SQLite's range, a str with lone surrogates, a value of a type it does not take, one whose adapter
raised) and parameters that are not a sequence or a dict are sent as what makes the judge's real
module raise the same error when it binds them (docs/protocol.md, "The judge's databases"), so the
error comes at the real moment: after the statement is compiled (a syntax error wins), the bindings
counted and Python's implicit BEGIN run; an adapter's own exception is raised as it is. executemany
runs the items its iterator yielded before one that raised, then raises it. A failed execute leaves
the cursor as the real one's (no description, rowcount -1). No exception raised here holds a cycle
through the cursor, so a cursor is let go of when the code lets go of it (and the judge's real
cursor with it, as the real module reuses a cached statement only once free).
tests/test_proxy_conformance.py compares a corpus of sqlite3 usage step by step with a real
connection.

Known divergences, left as they are (docs/contract.md): a dict subclass's `__missing__` is not
consulted for named parameters; a sequence whose `len()` or indexing raises raises here, before the
statement is compiled; a request, or the rows one reply carries, longer than one message on the
channel (wire.MAX_LINE) raise sqlite3.DataError "string or blob too big" (a value of more than
about 3 MiB cannot be handed out); a call the API does not take (an argument too many, a keyword
where sqlite3 takes positions only, writing a read-only attribute) raises the same class
(TypeError, AttributeError), in Python's words, not the module's.

The code's SQL functions, aggregates, window functions and collations (create_function, ...)
are compute-only callbacks: the callable stays in this process (`functions`), and the judge
registers a stand-in on its real connection that asks this process to run it whenever SQLite
calls it, and takes back only an SQLite value (docs/protocol.md, "The code's SQL functions").
Such a callable may not use the connection (sqlite3 would let it), and a name that is SQLite's
own function or collation, or the grader's, may not be registered (NotSupportedError). Known
divergences there: a function in the database's schema (an expression index, a view or trigger
in main) is SQLite's "unsafe use of" (the judge's schema is not trusted); an argument or result
longer than one message on the channel fails the statement ("user-defined function raised
exception"); on Python 3.10 an aggregate class without `step` raises the AttributeError naming
the stand-in's class, not the code's; the time of each call counts against the call's timeout.

What is not available (no request for it exists, and the judge would run nothing on it): the
methods that hand the code a second door into the database or run code of its own inside the
judge's SQLite (backup, iterdump, blobopen, serialize / deserialize, set_authorizer,
set_progress_handler, enable_load_extension / load_extension, setlimit, setconfig): each raises
sqlite3.NotSupportedError saying so (docs/contract.md). `interrupt()` does nothing: no statement
of this connection can be running while the code calls it.
"""

from __future__ import annotations

import base64
import sqlite3
from typing import Callable

from grader.harness import wire
from . import functions
from .proxycursor import PY310, ProxyCursor, carrier_db, raise_error

_UNAVAILABLE = ("backup", "iterdump", "blobopen", "serialize", "deserialize",
                "set_authorizer", "set_progress_handler", "enable_load_extension",
                "load_extension", "setlimit", "setconfig")


class ProxyConnection:
    """A sqlite3.Connection's API over the judge's real connection `name` (its `epoch`)."""

    # DB-API's optional extension: the error classes as attributes of the connection
    Warning, Error, InterfaceError, DatabaseError = (sqlite3.Warning, sqlite3.Error,
                                                      sqlite3.InterfaceError, sqlite3.DatabaseError)
    DataError, OperationalError, IntegrityError = (sqlite3.DataError, sqlite3.OperationalError,
                                                   sqlite3.IntegrityError)
    InternalError, ProgrammingError, NotSupportedError = (
        sqlite3.InternalError, sqlite3.ProgrammingError, sqlite3.NotSupportedError)

    def __init__(self, name: str, epoch: int, transport: Callable[[dict], dict], state: dict):
        self._name, self._epoch = name, epoch
        self._transport = transport
        self._state = dict(state)
        self._closed = False
        self._cursors = 0
        self._drop: list[int] = []  # cursors freed since the last request
        self.row_factory = None
        self._text_factory = str
        self._trace = None
        self._functions = functions.Functions()  # the code's SQL functions (compute only)

    # -- requests ------------------------------------------------------------------------------
    def _ask(self, request: dict, pending: list | None = None):
        if self._closed:
            raise sqlite3.ProgrammingError("Cannot operate on a closed database.")
        request["conn"], request["epoch"] = self._name, self._epoch
        if self._drop:
            request["drop"], self._drop = self._drop, []
        if self._trace is not None:
            request["trace"] = True
        if self._text_factory is not str:
            request["raw_text"] = True
        reply = self._transport(request)
        state = reply.get("state")
        if type(state) is dict:
            self._state = state
        trace = self._trace
        if trace is not None:
            for sql in reply.get("trace") or ():
                try:
                    trace(sql)
                except Exception:  # as sqlite3 does: a failing trace callback is ignored
                    pass
        if "error" in reply:
            error = reply["error"]
            index = error.get("index") if type(error) is dict else None
            if error.get("class") == "Deferred" and pending and type(index) is int and \
                    0 <= index < len(pending):
                # what adapting the code's value raised, at its moment; no reference to it is
                # kept here (a cycle through this frame would keep the cursor, and its statement
                # on the judge's side, alive until a garbage collection)
                error = pending[index]
                pending.clear()
                try:
                    raise error
                finally:
                    del error
            if error.get("class") == wire.DB_COLLATION_RAISED:
                # a collation of the code's raised: sqlite3 lets that very exception out
                self._functions.raise_kept()
            raise_error(error)
        return reply.get("ok")

    def _new_cursor_id(self) -> int:
        self._cursors += 1
        return self._cursors

    def _freed(self, cid: int) -> None:
        if not self._closed:
            self._drop.append(cid)

    def _check_open(self) -> None:
        if self._closed or self._state.get("closed"):
            raise sqlite3.ProgrammingError("Cannot operate on a closed database.")

    # -- the sqlite3.Connection API -------------------------------------------------------------
    def cursor(self, factory=sqlite3.Cursor):
        self._check_open()
        if factory is not sqlite3.Cursor and factory is not ProxyCursor and not callable(factory):
            raise TypeError(f"'{type(factory).__name__}' object is not callable")
        if factory is not sqlite3.Cursor and factory is not ProxyCursor:
            raise sqlite3.NotSupportedError("cursor(factory=...) is not available on the "
                                            "connection the grader hands in")
        return ProxyCursor(self)

    def execute(self, sql, parameters=(), /):
        return self.cursor().execute(sql, parameters)

    def executemany(self, sql, seq_of_parameters, /):
        return self.cursor().executemany(sql, seq_of_parameters)

    def executescript(self, sql_script, /):
        return self.cursor().executescript(sql_script)

    def commit(self) -> None:
        self._ask({"op": "commit"})

    def rollback(self) -> None:
        self._ask({"op": "rollback"})

    def close(self) -> None:
        if self._closed:
            return
        try:
            self._ask({"op": "close"})
        finally:
            self._closed = True

    def interrupt(self) -> None:
        self._check_open()

    def __enter__(self):
        return self

    def __exit__(self, kind, value, traceback):
        self._ask({"op": "exit", "error": kind is not None})
        return False

    @property
    def in_transaction(self) -> bool:
        self._check_open()
        return bool(self._state.get("in_transaction"))

    @property
    def total_changes(self) -> int:
        self._check_open()
        return int(self._state.get("total_changes", 0))

    @property
    def isolation_level(self):
        self._check_open()
        return self._state.get("isolation_level")

    @isolation_level.setter
    def isolation_level(self, value) -> None:
        if value is not None and type(value) is not str:
            # the real module's words, before anything reaches the database
            if isinstance(value, str):
                value = str.__str__(value)
            elif PY310:
                raise TypeError("isolation_level must be a string or None, not "
                                + type(value).__name__)
            else:
                raise TypeError("isolation_level must be str or None")
        if self._closed or self._state.get("closed"):
            # a closed connection takes a valid value (and has no use for it), as a real one does
            scratch = carrier_db()
            try:
                scratch.isolation_level = value
            finally:
                scratch.isolation_level = ""
            return
        self._ask({"op": "set", "attr": "isolation_level", "value": value})

    if hasattr(sqlite3.Connection, "autocommit"):
        @property
        def autocommit(self):
            return self._state.get("autocommit", sqlite3.LEGACY_TRANSACTION_CONTROL)

        @autocommit.setter
        def autocommit(self, value) -> None:
            if type(value) is not bool and value != sqlite3.LEGACY_TRANSACTION_CONTROL:
                raise ValueError("autocommit must be True, False, or "
                                 "sqlite3.LEGACY_TRANSACTION_CONTROL")
            self._ask({"op": "set", "attr": "autocommit", "value": value})
            self._state["autocommit"] = value

    @property
    def text_factory(self):
        return self._text_factory

    @text_factory.setter
    def text_factory(self, factory) -> None:
        self._text_factory = factory

    def set_trace_callback(self, trace_callback) -> None:
        self._check_open()
        self._trace = trace_callback

    # the code's SQL functions: kept here, called from the judge's SQLite (`functions`)
    def create_function(self, *args, **kwargs) -> None:
        self._register("function", args, kwargs)

    def create_aggregate(self, *args, **kwargs) -> None:
        self._register("aggregate", args, kwargs)

    def create_collation(self, *args, **kwargs) -> None:
        self._register("collation", args, kwargs)

    if hasattr(sqlite3.Connection, "create_window_function"):  # Python 3.11+
        def create_window_function(self, *args, **kwargs) -> None:
            self._register("window", args, kwargs)

    def _register(self, kind: str, args: tuple, kwargs: dict) -> None:
        """Check the arguments as the real method does, have the judge register a stand-in of
        the callable on its real connection (its error is the real module's), keep it."""
        try:
            name, narg, func, deterministic = functions.check(kind, args, kwargs)
        except sqlite3.Error:  # the real method checks the connection before it registers
            self._check_open()
            raise
        self._check_open()
        number = None if func is None else self._functions.number()
        self._ask({"op": "function", "kind": kind, "name": str.__str__(name),
                   "narg": int(narg), "deterministic": deterministic, "fn": number})
        self._functions.add(kind, name, narg, func, number)

    def __getattr__(self, name):
        if name in _UNAVAILABLE:
            def unavailable(*args, **kwargs):
                raise sqlite3.NotSupportedError(
                    f"Connection.{name} is not available on the connection the grader hands "
                    "in (see docs/contract.md)")
            return unavailable
        raise AttributeError(f"'sqlite3.Connection' object has no attribute {name!r}")

    def __repr__(self) -> str:
        return f"<sqlite3.Connection object at {id(self):#x}>"

    # -- rows ----------------------------------------------------------------------------------
    def _text(self, value):
        """A TEXT value (the judge reads it as str) as this connection's text_factory makes it."""
        factory = self._text_factory
        if factory is str or type(value) is not str:
            return value
        data = value.encode("utf-8")
        return data if factory is bytes else factory(data)

    def _raw_text(self, data) -> object:
        """A TEXT value that is not UTF-8 (sent as base64 because text_factory is not str)."""
        try:
            raw = base64.b64decode(data.encode("ascii"), validate=True)
        except (AttributeError, ValueError):  # not a str, not ASCII, not base64
            raise wire.WireError("raw text is not base64") from None
        factory = self._text_factory
        if factory is str:  # changed since the request: what str would have raised
            raw.decode("utf-8")
        return raw if factory is bytes else factory(raw)

