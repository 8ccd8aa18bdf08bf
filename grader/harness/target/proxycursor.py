"""The cursor of the connection the code under grade is handed (`dbproxy`), and what it shares
with that connection: the parameters turned into SQLite values as the sqlite3 module would bind
them, and a reply's error raised again as the real module raised it.

Imported by `dbproxy` (the target process); it holds no database handle. A `ProxyCursor`'s
every operation that touches the database is one request through its connection's transport,
answered by the judge's `dbhost.DbHost` on a real cursor; what is kept here is what a real
cursor keeps in Python: the rows already read (ahead of the code at most by what the judge
read, docs/protocol.md, "Rows and locks"), its row_factory, arraysize, description, rowcount
and lastrowid. The module's behaviour and its known divergences: `dbproxy`'s docstring.
"""

from __future__ import annotations

import base64
import operator
import sqlite3
import sys

from grader.harness import wire

ITER_CHUNK = wire.DB_ITER_CHUNK  # rows asked for at a time while iterating
_BASIC = (type(None), int, float, str, bytes)
#: Python 3.10's sqlite3, which pyproject.toml allows, words a few errors otherwise than 3.11+
#: (SQL that is not UTF-8, executescript of no str, isolation_level of no str): the proxy
#: raises what the real module of the Python it runs on raises.
PY310 = sys.version_info < (3, 11)


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



class ProxyCursor:
    """A sqlite3.Cursor's API over a real cursor in the judge's process."""

    def __init__(self, connection):
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
        check_sql(sql, "execute() argument 1")
        pending: list = []
        params = parameters_of(parameters, pending)
        return self._run({"op": "execute", "sql": sql, "params": params}, pending)

    def executemany(self, sql, seq_of_parameters, /):
        check_sql(sql, "executemany() argument 1")
        if self._closed:
            raise sqlite3.ProgrammingError("Cannot operate on a closed cursor.")
        self.connection._check_open()
        items = iter(seq_of_parameters)
        seq, failed, pending = [], None, []
        try:  # the real cursor runs the statement for each item as the iterator yields it
            for p in items:
                seq.append(parameters_of(p, pending))
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
        if PY310 and not isinstance(sql_script, str):
            raise ValueError("script argument must be unicode.")
        check_sql(sql_script, "executescript() argument")
        return self._run({"op": "executescript", "sql": sql_script})

    def _check_sql(self, sql: str, op: str) -> None:
        """What the real cursor checks before it compiles: open, and SQL that is UTF-8."""
        if self._closed:
            raise sqlite3.ProgrammingError("Cannot operate on a closed cursor.")
        self.connection._check_open()
        try:  # a lone surrogate: the real module's UnicodeEncodeError (ASCII str has none)
            type(sql) is str and sql.isascii() or sql.encode("utf-8")
        except UnicodeEncodeError:
            if PY310 and op != "executescript":  # 3.10's execute and executemany say this
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
            self._carrier_cursor = carrier_db().execute(f"SELECT {columns or 'NULL'}")
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
    def connection(self):
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


def carrier_db() -> sqlite3.Connection:
    global _carrier
    if _carrier is None:
        _carrier = sqlite3.connect(":memory:", check_same_thread=False)
    return _carrier


def check_sql(sql, what: str) -> None:
    if not isinstance(sql, str):
        kind = "None" if sql is None else type(sql).__name__
        raise TypeError(f"{what} must be str, not {kind}")


def parameters_of(parameters, pending: list):
    """The parameters as the wire carries them: a list, a {name: value}, or false (parameters of
    a type sqlite3 does not take: the judge binds a value of such a type, so the real module
    raises its error at the moment it would). Each value is adapted here as the sqlite3 module
    would adapt it (`sql_parameter`)."""
    if isinstance(parameters, dict):
        return {str(key): sql_parameter(value, pending) for key, value in parameters.items()}
    if isinstance(parameters, (list, tuple)):
        return [sql_parameter(value, pending) for value in parameters]
    if isinstance(parameters, (str, bytes, bytearray)) or (
            hasattr(type(parameters), "__getitem__") and hasattr(type(parameters), "__len__")):
        length = len(parameters)
        return [sql_parameter(parameters[i], pending) for i in range(length)]
    return False


def sql_parameter(value, pending: list):
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

