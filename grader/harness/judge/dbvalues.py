"""How the judge's databases (dbhost) carry values and errors across the channel: a reply's rows
and parameters as plain data (`row_data`, `params_data`), what a value sqlite3 cannot bind
raises, an error as data (`error_data`), the bounds of one message (`too_long`), and what a
real cursor tells of its statement (`statement_runs`, `description_of`). docs/protocol.md,
"The judge's databases".
"""

from __future__ import annotations

import base64
import binascii
import gc
import sqlite3

from grader.harness import wire

from . import callbacks

#: Builtin exceptions a request may raise besides sqlite3's (binding a value, a bad argument).
BUILTIN_ERRORS = wire.DB_BUILTIN_ERRORS
SQLITE_ERRORS = {name for name in dir(sqlite3)
                  if isinstance(getattr(sqlite3, name), type)
                  and issubclass(getattr(sqlite3, name), (sqlite3.Error, sqlite3.Warning))}


class RequestError(Exception):
    """A request that breaks the protocol (the target process sent it: a ProtocolError)."""



#: The error of a request, or of rows, too long for one message on the channel.
TOO_BIG = "string or blob too big"
#: Room left in a message for what wraps a reply on the channel ({"op": "db", "cb": n, ...}).
WRAP = 1024


def too_long(reply: dict) -> bool:
    """Whether `reply` would not fit one message. Rows far below the limit are not encoded to
    be measured (the reply is encoded once more to be sent): only those that may not fit."""
    if at_most(reply["ok"]["rows"]) <= wire.MAX_LINE // 2:
        return False
    try:
        return len(wire.encode(reply)) > wire.MAX_LINE - WRAP
    except wire.WireError:
        return True


def at_most(rows: list) -> int:
    """An upper bound of the bytes `rows` (as `row_data` writes them) take in a message: a str at
    most 6 bytes a character (a JSON escape), anything else a fixed width, and separators."""
    size = 0
    for row in rows:
        for value in row:
            if type(value) is str:
                size += 6 * len(value) + 4
            elif type(value) is dict:  # {"b" | "f" | "t": str}
                size += sum(6 * len(text) for text in value.values()) + 12
            else:
                size += 32
        size += 4
    return size


#: Cursors a connection may hold at once (a target that never lets one go is refused more).
MAX_CURSORS = 10_000


AUTOCOMMIT = hasattr(sqlite3.Connection, "autocommit")  # Python 3.12+


def connection_state(real: sqlite3.Connection) -> dict:
    try:
        state = {"in_transaction": real.in_transaction,
                 "total_changes": real.total_changes, "isolation_level": real.isolation_level}
        if AUTOCOMMIT:
            state["autocommit"] = real.autocommit
        return state
    except sqlite3.ProgrammingError:  # closed
        return {"in_transaction": False, "total_changes": 0, "isolation_level": None,
                "closed": True}


def statement_runs(cursor: sqlite3.Cursor) -> bool:
    """Does the real cursor reference a prepared statement (CPython's sqlite3: from its execute
    until that statement is done, reset or closed)?"""
    return any(type(obj) is _STATEMENT for obj in gc.get_referents(cursor))


_STATEMENT: type | None = None
_SEEN: list[bool] = []


def statements_seen() -> bool:
    """Does `DbHost.unfinished` tell on this Python? Tried once, on a database in memory: a
    cursor with rows left and one read to its end, a statement about to run (inside the trace
    callback) and a one-row SELECT whose row was read (its statement is done)."""
    global _STATEMENT
    if _SEEN:
        return _SEEN[0]
    ok = False
    try:
        real = sqlite3.connect(":memory:")
        try:
            left, again = real.cursor(), real.cursor()
            left.execute("SELECT 1 UNION ALL SELECT 2")
            kinds = {type(obj) for obj in gc.get_referents(left)
                     if type(obj).__name__ == "Statement"}
            if len(kinds) == 1:
                _STATEMENT = kinds.pop()
                left.fetchone()
                again.execute("SELECT 1 UNION ALL SELECT 2")
                again.fetchone()
                seen = []
                real.set_trace_callback(
                    lambda sql: seen.append(again.description is not None and statement_runs(again)))
                again.execute("SELECT 3")  # its first run reset, this one about to run
                real.set_trace_callback(None)
                running = left.description is not None and statement_runs(left)
                again.fetchone()  # its one row read: done
                done_one = not statement_runs(again)
                left.fetchall()
                ok = running and seen == [False] and done_one and not statement_runs(left)
        finally:
            real.close()
    except (sqlite3.Error, TypeError):
        ok = False
    _SEEN.append(ok)
    return ok


def description_of(cursor: sqlite3.Cursor):
    if cursor.description is None:
        return None
    return [str(column[0]) for column in cursor.description]


class RawText(bytes):
    """A TEXT value that is not UTF-8, read for a proxy whose text_factory is not str."""


def text_or_raw(data: bytes):
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return RawText(data)


def row_data(row) -> list:
    return [{"t": base64.b64encode(value).decode("ascii")} if type(value) is RawText
            else wire.sql_value(value) for value in row]


def params_data(params):
    if params is False:  # parameters of a type sqlite3 does not take: it raises its error
        return 0
    if type(params) is list:
        return [param_data(value) for value in params]
    if type(params) is dict:
        return {str(k): param_data(v) for k, v in params.items()}
    raise RequestError("params is neither a list nor an object")


def param_data(value):
    """A parameter as the proxy sent it (`proxycursor.sql_parameter`): an SQLite value, or what
    makes the real module raise the error binding the code's value raises."""
    if type(value) is dict and len(value) == 1:
        if "i" in value and value["i"] in ("+", "-"):
            return wire.INT_MAX + 1 if value["i"] == "+" else wire.INT_MIN - 1
        if "u" in value and type(value["u"]) is str:
            try:
                data = base64.b64decode(value["u"].encode("ascii"), validate=True)
                return data.decode("utf-8", "surrogatepass")
            except (binascii.Error, UnicodeError):
                raise RequestError("a str parameter is not base64 of UTF-8") from None
        if "e" in value:
            return Raises(integer_of(value["e"], "a parameter's error"))
        if "x" in value:
            name = string_of(value["x"], "a parameter's type", wire.MAX_NAME)
            return unbindable(name)()
    return wire.sql_value_back(value)


class Deferred(Exception):
    """What binding a `Raises` raises: the proxy raises its own exception number `index`."""

    def __init__(self, index: int):
        super().__init__(index)
        self.index = index


class Raises:
    """A parameter whose adapting raised in the proxy: binding it raises Deferred."""

    __slots__ = ("index",)

    def __init__(self, index: int):
        self.index = index

    def __conform__(self, protocol):
        raise Deferred(self.index)


_UNBINDABLE: dict[str, type] = {}


def unbindable(name: str) -> type:
    """A class named `name` that sqlite3 cannot bind (its message names the type)."""
    kind = _UNBINDABLE.get(name)
    if kind is None:
        if len(_UNBINDABLE) > 1000:
            _UNBINDABLE.clear()
        try:
            kind = type(name, (), {"__slots__": ()})
        except ValueError:  # a NUL in the name
            kind = type(name.replace("\0", "?"), (), {"__slots__": ()})
        _UNBINDABLE[name] = kind
    return kind


def error_data(exc: BaseException) -> dict:
    """An exception of the real module's as data the proxy raises again."""
    if isinstance(exc, Deferred):
        return {"class": "Deferred", "message": "", "index": exc.index}
    if isinstance(exc, callbacks.CollationRaised):  # the proxy raises what the code's raised
        return {"class": callbacks.COLLATION_RAISED, "message": ""}
    kind = type(exc)
    name = next((k.__name__ for k in kind.__mro__ if k.__name__ in SQLITE_ERRORS
                 and k.__module__ == "sqlite3"), None)
    if name is None:
        name = next((k.__name__ for k in kind.__mro__ if k.__name__ in BUILTIN_ERRORS
                     and k.__module__ == "builtins"), "OperationalError")
    data = {"class": name, "message": str(exc)[:wire.MAX_MESSAGE]}
    if isinstance(exc, UnicodeEncodeError) and isinstance(exc.object, str):
        chunk = exc.object[exc.start:exc.end][:wire.MAX_NAME]
        data["unicode"] = [str(exc.encoding)[:wire.MAX_NAME], exc.start, exc.end,
                           str(exc.reason)[:wire.MAX_NAME], base64.b64encode(
                               chunk.encode("utf-8", "surrogatepass")).decode("ascii")]
    code = getattr(exc, "sqlite_errorcode", None)
    if type(code) is int:
        data["code"] = code
        data["name"] = str(getattr(exc, "sqlite_errorname", ""))[:wire.MAX_NAME]
    return data


def cursor_ids(value) -> list[int]:
    if type(value) is not list or len(value) > MAX_CURSORS:
        raise RequestError("drop is not a list of cursor ids")
    return [integer_of(v, "drop") for v in value]


def integer_of(value, what: str) -> int:
    if type(value) is not int or not wire.INT_MIN <= value <= wire.INT_MAX:
        raise RequestError(f"{what} is not an int")
    return value


def string_of(value, what: str, limit: int) -> str:
    if type(value) is not str or len(value) > limit:
        raise RequestError(f"{what} is not a str")
    return value


def quietly(call) -> None:
    try:
        call()
    except sqlite3.Error:
        pass
