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

What is not available (no request for it exists, and the judge would run nothing on it): the
methods that hand the code a second door into the database or run code of its own inside the
judge's SQLite (backup, iterdump, blobopen, serialize / deserialize, create_function,
create_aggregate, create_collation, create_window_function, set_authorizer,
set_progress_handler, enable_load_extension / load_extension, setlimit, setconfig): each raises
sqlite3.NotSupportedError saying so (docs/contract.md). `interrupt()` does nothing: no statement
of this connection can be running while the code calls it.
"""

from __future__ import annotations

import base64
import operator
import sqlite3
import sys
from typing import Callable

from grader.harness import wire

ITER_CHUNK = wire.DB_ITER_CHUNK  # rows asked for at a time while iterating
_BASIC = (type(None), int, float, str, bytes)
_UNAVAILABLE = ("backup", "iterdump", "blobopen", "serialize", "deserialize", "create_function",
                "create_aggregate", "create_collation", "create_window_function",
                "set_authorizer", "set_progress_handler", "enable_load_extension",
                "load_extension", "setlimit", "setconfig")
#: Python 3.10's sqlite3, which pyproject.toml allows, words a few errors otherwise than 3.11+
#: (SQL that is not UTF-8, executescript of no str, isolation_level of no str): the proxy
#: raises what the real module of the Python it runs on raises.
_PY310 = sys.version_info < (3, 11)


class _Closed:
    """A transport for a connection that can no longer be used."""

    def __call__(self, request):
        raise sqlite3.ProgrammingError("Cannot operate on a closed database.")


def raise_error(data: dict):
    """Raise the error a reply carries, as the class the real module raised."""
    name = data.get("class")
    message = data.get("message", "")
    kind = getattr(sqlite3, name, None) if type(name) is str else None
    # sqlite3.Warning is no sqlite3.Error: Python 3.10 raises it for two statements in one execute
    if not (isinstance(kind, type) and issubclass(kind, (sqlite3.Error, sqlite3.Warning))):
        import builtins

        kind = getattr(builtins, name, None) if type(name) is str else None
        if not (isinstance(kind, type) and issubclass(kind, Exception)) or \
                name not in _BUILTIN_ERRORS:
            kind = sqlite3.OperationalError
    if kind is UnicodeEncodeError:
        error = _unicode_error(data.get("unicode"), message)
    else:
        error = kind(message)
    if "code" in data and isinstance(error, sqlite3.Error):
        error.sqlite_errorcode = data["code"]
        error.sqlite_errorname = data.get("name")
    try:
        raise error
    finally:
        # no cycle (error -> traceback -> this frame -> error): the cursor that raised it is freed
        # when the code lets go of it, as a real one is, not at the next garbage collection
        del error


def _unicode_error(parts, message: str) -> UnicodeEncodeError:
    """The UnicodeEncodeError a reply describes (dbhost.error_data's "unicode": encoding, start,
    end, reason and the characters it could not encode), with the real one's message."""
    try:
        encoding, start, end, reason, chunk = parts
        text = base64.b64decode(chunk.encode("ascii")).decode("utf-8", "surrogatepass")
        if not (type(start) is type(end) is int and 0 <= start < end <= start + len(text) + 1
                and start < 1 << 20):
            raise ValueError
        return UnicodeEncodeError(str(encoding), "\0" * start + text, start, end, str(reason))
    except Exception:  # noqa: BLE001 - a reply without the parts: the message only
        return UnicodeEncodeError("utf-8", "\0", 0, 1, message)


_BUILTIN_ERRORS = wire.DB_BUILTIN_ERRORS  # the classes a reply may name besides sqlite3's


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
            elif _PY310:
                raise TypeError("isolation_level must be a string or None, not "
                                + type(value).__name__)
            else:
                raise TypeError("isolation_level must be str or None")
        if self._closed or self._state.get("closed"):
            # a closed connection takes a valid value (and has no use for it), as a real one does
            scratch = _carrier_db()
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


class ProxyCursor:
    """A sqlite3.Cursor's API over a real cursor in the judge's process."""

    def __init__(self, connection: ProxyConnection):
        self._connection = connection
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
        self._arraysize = 1
        self.row_factory = connection.row_factory
        self._carrier_cursor = None

    def __del__(self):
        # freed: its statement is reset on the judge's side, with the connection's next request
        connection = self.__dict__.get("_connection")
        if connection is not None:
            connection._freed(self._id)

    def _ask(self, request: dict, pending: list | None = None):
        if self._closed:
            raise sqlite3.ProgrammingError("Cannot operate on a closed cursor.")
        request["cur"] = self._id
        return self.connection._ask(request, pending)

    def _run(self, request: dict, pending: list | None = None) -> "ProxyCursor":
        """An execute*: a failed one leaves the cursor with no statement, no description and
        rowcount -1, as the real cursor's."""
        try:
            self._check_sql(request["sql"], request["op"])
            return self._ran(self._ask(request, pending))
        except BaseException:
            if not self._closed and not self.connection._closed:
                self._rows, self._done, self._later = [], True, None
                self._description, self._rowcount, self._rowcount0 = None, -1, None
                self._carrier_cursor = None
            raise
        finally:
            if pending:  # an exception kept here holds this frame: no cycle through the cursor
                pending.clear()

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

    def execute(self, sql, parameters=(), /):
        _sql(sql, "execute() argument 1")
        pending: list = []
        params = _parameters(parameters, pending)
        return self._run({"op": "execute", "sql": sql, "params": params}, pending)

    def executemany(self, sql, seq_of_parameters, /):
        _sql(sql, "executemany() argument 1")
        if self._closed:
            raise sqlite3.ProgrammingError("Cannot operate on a closed cursor.")
        self.connection._check_open()
        items = iter(seq_of_parameters)
        seq, failed, pending = [], None, []
        try:  # the real cursor runs the statement for each item as the iterator yields it
            for p in items:
                seq.append(_parameters(p, pending))
        except Exception as exc:  # noqa: BLE001 - the items before it run, then it is raised
            failed = exc
        try:
            result = self._run({"op": "executemany", "sql": sql, "seq": seq}, pending)
            if failed is not None:
                raise failed
            return result
        finally:
            failed = None  # no cycle through this frame: the cursor is freed as a real one is

    def executescript(self, sql_script, /):
        if _PY310 and not isinstance(sql_script, str):
            raise ValueError("script argument must be unicode.")
        _sql(sql_script, "executescript() argument")
        return self._run({"op": "executescript", "sql": sql_script})

    def _check_sql(self, sql: str, op: str) -> None:
        """What the real cursor checks before it compiles: open, and SQL that is UTF-8."""
        if self._closed:
            raise sqlite3.ProgrammingError("Cannot operate on a closed cursor.")
        self.connection._check_open()
        try:
            sql.encode("utf-8")  # a lone surrogate: the real module's UnicodeEncodeError
        except UnicodeEncodeError:
            if _PY310 and op != "executescript":  # 3.10's execute and executemany say this
                raise sqlite3.Warning(f"SQL is of wrong type ('{type(sql).__name__}')."
                                      " Must be string.") from None
            raise

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
        row = tuple(connection._text(v) if type(v) is not dict else
                    connection._raw_text(v["t"]) if "t" in v else wire.sql_value_back(v)
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
        size = self.arraysize if size is None else operator.index(size)
        self._check()
        return self._take(size if size > 0 else -1)  # 0 or less: all, as sqlite3 does

    @property
    def arraysize(self) -> int:
        return self._arraysize

    @arraysize.setter
    def arraysize(self, value) -> None:
        value = operator.index(value)
        if not -2**31 <= value < 2**31:
            raise OverflowError("Python int too large to convert to C int")
        self._arraysize = value

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
    def connection(self) -> ProxyConnection:
        return self._connection

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


def _sql(sql, what: str) -> None:
    if not isinstance(sql, str):
        kind = "None" if sql is None else type(sql).__name__
        raise TypeError(f"{what} must be str, not {kind}")


def _parameters(parameters, pending: list):
    """The parameters as the wire carries them: a list, a {name: value}, or false (parameters of
    a type sqlite3 does not take: the judge binds a value of such a type, so the real module
    raises its error at the moment it would). Each value is adapted here as the sqlite3 module
    would adapt it (`_value`)."""
    if isinstance(parameters, dict):
        return {str(key): _value(value, pending) for key, value in parameters.items()}
    if isinstance(parameters, (list, tuple)):
        return [_value(value, pending) for value in parameters]
    if isinstance(parameters, (str, bytes, bytearray)) or (
            hasattr(type(parameters), "__getitem__") and hasattr(type(parameters), "__len__")):
        length = len(parameters)
        return [_value(parameters[i], pending) for i in range(length)]
    return False


def _value(value, pending: list):
    """One parameter as an SQLite value on the wire, adapted first as sqlite3 does. A value the
    real module cannot bind travels as what makes the judge's real module raise the same error
    at the same moment (after the statement is compiled and the parameters counted):
    {"i": "+" | "-"} an int out of SQLite's range, {"u": base64} a str that is not UTF-8 (its
    surrogates passed through), {"x": type name} a value of a type it does not take, {"e": n}
    a value whose adapter (or __conform__) raised: the judge's module raises where it binds it and
    the proxy raises the very exception, `pending[n]`."""
    if type(value) not in _BASIC:
        try:
            value = sqlite3.adapt(value, sqlite3.PrepareProtocol, value)
        except Exception as exc:  # noqa: BLE001 - raised when the real module would bind it
            pending.append(exc)
            return {"e": len(pending) - 1}
    if value is None:
        return None
    if isinstance(value, str):
        value = str.__str__(value)  # a subclass binds its characters, not its __str__
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            data = value.encode("utf-8", "surrogatepass")
            return {"u": base64.b64encode(data).decode("ascii")}
        return value
    if isinstance(value, int):
        value = int.__int__(value)
        if not wire.INT_MIN <= value <= wire.INT_MAX:
            return {"i": "+" if value > 0 else "-"}
        return value
    if isinstance(value, float):
        return wire.sql_value(float.__float__(value))
    if isinstance(value, (bytes, bytearray, memoryview)):
        return wire.sql_value(bytes(value))
    return {"x": type(value).__name__[:wire.MAX_NAME]}
