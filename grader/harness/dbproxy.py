"""The connection the code under grade is handed: a proxy for a real one in the judge's process.

Imported by the target server (the target process); it holds no database handle. Each operation
of `ProxyConnection` / `ProxyCursor` that touches the database is one request to the judge's
`dbhost.DbHost`, through `transport(request) -> reply` (the target server's channel), which runs
the very sqlite3 call it stands for on the real connection; the reply's error is raised here
again as the same class (sqlite3's own, or a builtin), with the same message and, where it has
them, sqlite_errorcode / sqlite_errorname. So the contract's "behaves as a sqlite3.Connection"
holds by construction for everything that reaches the database; what is kept here is what a
real connection keeps in Python: `row_factory`, `text_factory`, the trace callback of the code's
own, a cursor's `arraysize` and the rows already read.

Parameters are turned into SQLite values here as the sqlite3 module would (adapters registered
with `sqlite3.register_adapter` and `__conform__` included); a value it cannot bind raises the
module's own error before anything is sent.

What is not available (no request for it exists, and the judge would run nothing on it): the
methods that hand the code a second door into the database or run code of its own inside the
judge's SQLite (backup, iterdump, blobopen, serialize / deserialize, create_function,
create_aggregate, create_collation, create_window_function, set_authorizer,
set_progress_handler, enable_load_extension / load_extension, setlimit, setconfig): each raises
sqlite3.NotSupportedError saying so (docs/contract.md). `interrupt()` does nothing: no statement
of this connection can be running while the code calls it.
"""

from __future__ import annotations

import sqlite3
import weakref
from typing import Callable

from . import wire

ITER_CHUNK = 16  # dbhost.ITER_CHUNK: rows asked for at a time while iterating
_BASIC = (type(None), int, float, str, bytes)
_UNAVAILABLE = ("backup", "iterdump", "blobopen", "serialize", "deserialize", "create_function",
                "create_aggregate", "create_collation", "create_window_function",
                "set_authorizer", "set_progress_handler", "enable_load_extension",
                "load_extension", "setlimit", "setconfig")


class _Closed:
    """A transport for a connection that can no longer be used."""

    def __call__(self, request):
        raise sqlite3.ProgrammingError("Cannot operate on a closed database.")


def raise_error(data: dict):
    """Raise the error a reply carries, as the class the real module raised."""
    name = data.get("class")
    message = data.get("message", "")
    kind = getattr(sqlite3, name, None) if type(name) is str else None
    if not (isinstance(kind, type) and issubclass(kind, sqlite3.Error)):
        import builtins

        kind = getattr(builtins, name, None) if type(name) is str else None
        if not (isinstance(kind, type) and issubclass(kind, Exception)) or \
                name not in _BUILTIN_ERRORS:
            kind = sqlite3.OperationalError
    if kind is UnicodeEncodeError:
        error = UnicodeEncodeError("utf-8", "", 0, 1, message)
    else:
        error = kind(message)
    if "code" in data and isinstance(error, sqlite3.Error):
        error.sqlite_errorcode = data["code"]
        error.sqlite_errorname = data.get("name")
    raise error


_BUILTIN_ERRORS = ("TypeError", "ValueError", "OverflowError", "UnicodeEncodeError",
                   "MemoryError", "RecursionError", "KeyError", "IndexError")


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

    # -- requests ------------------------------------------------------------------------------
    def _ask(self, request: dict):
        if self._closed:
            raise sqlite3.ProgrammingError("Cannot operate on a closed database.")
        request["conn"], request["epoch"] = self._name, self._epoch
        if self._drop:
            request["drop"], self._drop = self._drop, []
        if self._trace is not None:
            request["trace"] = True
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
            raise_error(reply["error"])
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
    def cursor(self, factory=None):
        self._check_open()
        cursor = ProxyCursor(self)
        if factory is not None and factory is not ProxyCursor:
            raise sqlite3.NotSupportedError("cursor(factory=...) is not available on the "
                                            "connection the grader hands in")
        return cursor

    def execute(self, sql, parameters=()):
        return self.cursor().execute(sql, parameters)

    def executemany(self, sql, seq_of_parameters):
        return self.cursor().executemany(sql, seq_of_parameters)

    def executescript(self, sql_script):
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
        return self._state.get("isolation_level")

    @isolation_level.setter
    def isolation_level(self, value) -> None:
        if value is not None and type(value) is not str:
            # the real module's words, before anything reaches the database
            if isinstance(value, str):
                value = str(value)
            else:
                raise TypeError("isolation_level must be str or None")
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


class ProxyCursor:
    """A sqlite3.Cursor's API over a real cursor in the judge's process."""

    def __init__(self, connection: ProxyConnection):
        self.connection = connection
        self._id = connection._new_cursor_id()
        self._rows: list[list] = []  # read from the real cursor, not handed out yet
        self._done = True
        self._later: dict | None = None  # an error the real cursor raised at its next fetch
        self._rowcount0: int | None = None  # rowcount until the first row is handed out
        self._rowcount = -1
        self._lastrowid = None
        self._description = None
        self._closed = False
        self._used = False
        self.arraysize = 1
        self.row_factory = connection.row_factory
        self._carrier_cursor = None
        weakref.finalize(self, connection._freed, self._id)

    def _ask(self, request: dict):
        if self._closed:
            raise sqlite3.ProgrammingError("Cannot operate on a closed cursor.")
        request["cur"] = self._id
        return self.connection._ask(request)

    def _ran(self, result: dict) -> "ProxyCursor":
        self._used = True
        names = result.get("description")
        self._description = (None if names is None else
                             tuple((name, None, None, None, None, None, None) for name in names))
        self._lastrowid = result.get("lastrowid")
        self._rows = list(result.get("rows") or [])
        self._done = bool(result.get("done"))
        self._later = result.get("later")
        self._rowcount = result.get("rowcount", -1)
        self._rowcount0 = result.get("rowcount0") if self._rows else None
        self._carrier_cursor = None
        return self

    def execute(self, sql, parameters=()):
        _sql(sql)
        return self._ran(self._ask({"op": "execute", "sql": sql,
                                    "params": _parameters(parameters)}))

    def executemany(self, sql, seq_of_parameters):
        _sql(sql)
        seq = [_parameters(p) for p in seq_of_parameters]
        return self._ran(self._ask({"op": "executemany", "sql": sql, "seq": seq}))

    def executescript(self, sql_script):
        if not isinstance(sql_script, str):
            raise ValueError("script argument must be unicode.")
        return self._ran(self._ask({"op": "executescript", "sql": sql_script}))

    # -- rows ----------------------------------------------------------------------------------
    def _take(self, n: int) -> list:
        """Up to n rows (n < 0: all), as the real cursor would hand them out."""
        taken = []
        while n < 0 or len(taken) < n:
            if self._rows:
                taken.append(self._rows.pop(0))
                self._rowcount0 = None
                continue
            if self._later is not None:
                later, self._later = self._later, None
                self._done = True
                raise_error(later)
            if self._done:
                break
            want = -1 if n < 0 else n - len(taken)
            result = self._ask({"op": "fetch", "n": want})
            self._rows = list(result.get("rows") or [])
            self._done = bool(result.get("done"))
            self._rowcount = result.get("rowcount", self._rowcount)
            if not self._rows:
                self._done = True
        return [self._make(row) for row in taken]

    def _make(self, values: list):
        connection = self.connection
        row = tuple(wire.sql_value_back(v) if type(v) is dict else connection._text(v)
                    for v in values)
        factory = self.row_factory
        if factory is None:
            return row
        if isinstance(factory, type) and issubclass(factory, sqlite3.Row):
            return factory(self._carrier(), row)
        return factory(self, row)

    def _carrier(self) -> sqlite3.Cursor:
        """A real cursor (of an in-memory database) whose description is this one's: what
        sqlite3.Row reads its keys from."""
        if self._carrier_cursor is None:
            names = [d[0] for d in self._description or ()]
            columns = ", ".join('NULL AS "' + name.replace('"', '""') + '"' for name in names)
            self._carrier_cursor = _carrier_db().execute(f"SELECT {columns or 'NULL'}")
        return self._carrier_cursor

    def fetchone(self):
        self._check()
        rows = self._take(1)
        return rows[0] if rows else None

    def fetchmany(self, size=None):
        self._check()
        size = self.arraysize if size is None else size
        return self._take(max(int(size), 0)) if size else []

    def fetchall(self):
        self._check()
        return self._take(-1)

    def __iter__(self):
        return self

    def __next__(self):
        self._check()
        if not self._rows and not self._done and self._later is None:
            result = self._ask({"op": "fetch", "n": ITER_CHUNK})
            self._rows = list(result.get("rows") or [])
            self._done = bool(result.get("done"))
            self._rowcount = result.get("rowcount", self._rowcount)
        rows = self._take(1)
        if not rows:
            raise StopIteration
        return rows[0]

    def close(self) -> None:
        if self._closed:
            return
        if self._used:
            self._ask({"op": "close_cursor"})
        self._closed = True
        self._rows, self._done = [], True

    def _check(self) -> None:
        if self._closed:
            raise sqlite3.ProgrammingError("Cannot operate on a closed cursor.")
        self.connection._check_open()

    def setinputsizes(self, sizes) -> None:
        pass

    def setoutputsize(self, size, column=None) -> None:
        pass

    @property
    def rowcount(self) -> int:
        return self._rowcount0 if self._rowcount0 is not None else self._rowcount

    @property
    def lastrowid(self):
        return self._lastrowid

    @property
    def description(self):
        return self._description

    def __repr__(self) -> str:
        return f"<sqlite3.Cursor object at {id(self):#x}>"


_carrier = None


def _carrier_db() -> sqlite3.Connection:
    global _carrier
    if _carrier is None:
        _carrier = sqlite3.connect(":memory:", check_same_thread=False)
    return _carrier


def _sql(sql) -> None:
    if not isinstance(sql, str):
        raise TypeError(f"execute() argument 1 must be str, not {type(sql).__name__}")


def _parameters(parameters):
    """The parameters as the wire carries them (a list or a {name: value}), each value adapted and
    checked as the sqlite3 module would bind it."""
    if isinstance(parameters, dict):
        return {str(key): _value(value, key) for key, value in parameters.items()}
    if isinstance(parameters, (list, tuple)):
        return [_value(value, index + 1) for index, value in enumerate(parameters)]
    try:
        length = len(parameters)
        items = [parameters[i] for i in range(length)]
    except Exception:
        raise sqlite3.ProgrammingError("parameters are of unsupported type") from None
    return [_value(value, index + 1) for index, value in enumerate(items)]


def _value(value, where):
    """One parameter as an SQLite value on the wire (adapted first, as sqlite3 does)."""
    if type(value) not in _BASIC:
        try:
            value = sqlite3.adapt(value, sqlite3.PrepareProtocol, value)
        except Exception:
            pass
    if value is None or type(value) is str:
        if type(value) is str:
            value.encode("utf-8")  # a lone surrogate raises UnicodeEncodeError, as binding does
        return value
    if isinstance(value, bool) or isinstance(value, int):
        value = int(value)
        if not wire.INT_MIN <= value <= wire.INT_MAX:
            raise OverflowError("Python int too large to convert to SQLite INTEGER")
        return value
    if isinstance(value, float):
        return wire.sql_value(float(value))
    if isinstance(value, str):
        return str(value)
    if isinstance(value, (bytes, bytearray, memoryview)):
        return wire.sql_value(bytes(value))
    # the module's own words for a value it cannot bind (binding it to a scratch statement)
    try:
        _carrier_db().execute("SELECT ?", (value,))
    except (sqlite3.Error, TypeError, ValueError, OverflowError) as exc:
        message = str(exc).replace("parameter 1", f"parameter {where}")
        raise type(exc)(message) from None
    raise sqlite3.ProgrammingError(f"Error binding parameter {where}: type "
                                   f"'{type(value).__name__}' is not supported")
