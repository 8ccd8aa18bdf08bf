"""The judge's databases: the real sqlite3 connections behind the proxies the code under grade holds.

A `DbHost` holds one target process's connections by name (`watched` connections, opened as
`lab.store.connect` opens one); `serve(request)` runs a proxy's request on them, the very sqlite3
call the proxy stands for. What the judge believes about how the code ran is read here: the
statements traced, transactions and locks held (`unfinished`), the race's gate, the fault
triggers' firings (an authorizer keeps the code from calling or dropping them); and the code's
SQL is bounded here (a deadline, value and database sizes). Requests and replies, rows and
locks, the authorizer and the bounds: docs/protocol.md, "The judge's databases".
"""

from __future__ import annotations

import base64
import binascii
import gc
import os
import sqlite3
import time
from typing import Callable

from lab.store import BUSY_TIMEOUT_MS

from . import callbacks, watched
from grader.harness import wire
from .interleave import verb

#: Rows a proxy asks for at a time while it is iterated (fetchone asks for 1).
ITER_CHUNK = wire.DB_ITER_CHUNK
#: Builtin exceptions a request may raise besides sqlite3's (binding a value, a bad argument).
BUILTIN_ERRORS = wire.DB_BUILTIN_ERRORS
#: The SQL function that counts a fault trigger's firings (only a trigger may call it).
COUNTER = "harness_count"
#: The SQL function that fails (its Python body raises, so sqlite3 raises OperationalError "user-
#: defined function raised exception": a database error that is not a lock); only a trigger the
#: judge created may call it, as COUNTER.
FAILER = "harness_fail"
#: What sqlite3 raises for a statement in which FAILER ran (OperationalError).
FAILER_MESSAGE = "user-defined function raised exception"
#: The judge's own SQL functions: the code's SQL may not call them.
_JUDGE_FUNCTIONS = (COUNTER, FAILER)
_SQLITE_ERRORS = {name for name in dir(sqlite3)
                  if isinstance(getattr(sqlite3, name), type)
                  and issubclass(getattr(sqlite3, name), (sqlite3.Error, sqlite3.Warning))}
_ATTRS = ("isolation_level", "autocommit")


class RequestError(Exception):
    """A request that breaks the protocol (the target process sent it: a ProtocolError)."""


class _Conn:
    """One real connection and the cursors its proxies use."""

    def __init__(self, name: str, epoch: int, real: watched.WatchedConnection,
                 path: str):
        self.name, self.epoch, self.real, self.path = name, epoch, real, path
        self.cursors: dict[int, sqlite3.Cursor] = {}
        self.student_trace: list[str] | None = None  # collecting for a proxy's trace callback
        self.serving = False  # a proxy's request runs: the statements are the code's
        self.judge_ran = False  # the judge ran a statement here since the code's last request
        self.judge_triggers: set[str] = set()  # the triggers the judge created (lower case)
        # the code ran a statement that may change the database otherwise than row by row (its
        # schema, a PRAGMA that sets): its total_changes no longer tells every change (`changes`)
        self.reshaped = False
        # what SQLite's authorizer told of the statements prepared since the last one traced (the
        # tables they read or write, `_table`): `tables_read`, `traced`
        self.prepared = False  # a statement was prepared (the authorizer was called)
        self.prepared_tables: set[str] = set()
        #: the text an execute or executemany runs now (sqlite3's statement cache's key for it),
        #: None otherwise (`cached`)
        self.running: str | None = None
        #: such a text -> the tables of its statement, as when it was last prepared; the oldest
        #: first, at most MAX_REMEMBERED texts of MAX_REMEMBERED_CHARS characters in all
        self.tables_of: dict[str, frozenset] = {}
        self.remembered_chars = 0
        self.last_tables: frozenset | None = None  # those of the statement traced last
        # whether that statement writes rows (the authorizer told SQLITE_INSERT/UPDATE/DELETE):
        # a write's RETURNING rows are not read ahead (`DbHost._run`); None where not known.
        # Kept per text as its tables are (`writes_of`, the same keys as `tables_of`).
        self.prepared_writes = False
        self.writes_of: dict[str, bool] = {}
        self.last_writes: bool | None = None
        #: the code's SQL functions registered here: (collation?, name, narg) -> the number the
        #: target keeps the callable by (`callbacks.register`)
        self.functions: dict[tuple, int] = {}

    def cached(self, sql: str, run: Callable[[], object]):
        """`run()`, an execute or executemany of `sql` on the real connection, which prepares it
        only if sqlite3's statement cache does not hold it: its tables are then those its text
        had when it was last prepared (`tables_of`). A text dropped from `tables_of` makes every
        statement prepared again before its next run (`WatchedConnection.expire`), so none runs
        from the cache unseen by the authorizer, whatever the cache holds."""
        self.prepared, self.prepared_tables = False, set()  # a failed prepare tells nothing here
        self.prepared_writes = False
        tables = self.tables_of.pop(sql, None)
        if tables is not None:  # the most recent last
            self.tables_of[sql] = tables
        dropped = False
        while self.tables_of and (len(self.tables_of) > MAX_REMEMBERED
                                  or self.remembered_chars > MAX_REMEMBERED_CHARS):
            oldest = next(iter(self.tables_of))
            del self.tables_of[oldest]
            self.writes_of.pop(oldest, None)
            self.remembered_chars -= len(oldest)
            dropped = True
        if dropped:
            self.real.expire()
        outer, self.running = self.running, sql
        try:
            return run()
        finally:
            self.running = outer

    def traced(self, sql: str) -> frozenset | None:
        """The tables (`_table`) of the statement SQLite traces now, its text `sql`: what the
        authorizer told since the last statement traced, when it was prepared just now; else
        (run again from sqlite3's statement cache, or executemany's next row) those its text had
        (`cached`); None where not known (text that is only comments: a trigger program).

        A transaction's statement (BEGIN, COMMIT, END, ROLLBACK, SAVEPOINT, RELEASE) touches no
        table. sqlite3's own BEGIN (a legacy isolation_level) is prepared and traced after the
        statement it runs before was prepared: what the authorizer told of that one (a write
        always names its table) is kept for it."""
        first = verb(sql)
        if not first:
            self.last_writes = None
            return None
        if first in _TRANSACTION_VERBS:
            if not self.prepared_tables:
                self.prepared = False
            self.last_writes = False
            return frozenset()
        if self.prepared:
            tables, writes = frozenset(self.prepared_tables), self.prepared_writes
            if self.running is not None:
                self._remember(self.running, tables)
                self.writes_of[self.running] = writes
        else:
            tables = None if self.running is None else self.tables_of.get(self.running)
            writes = None if self.running is None else self.writes_of.get(self.running)
        self.prepared = False
        self.prepared_tables = set()
        self.prepared_writes = False
        self.last_writes = writes
        return tables

    def _remember(self, sql: str, tables: frozenset) -> None:
        if sql in self.tables_of:
            del self.tables_of[sql]
        else:
            self.remembered_chars += len(sql)
        self.tables_of[sql] = tables


#: The authorizer's actions by which a statement reads or writes a table's rows (arg1: the table).
_TABLE_ACTIONS = frozenset((sqlite3.SQLITE_READ, sqlite3.SQLITE_INSERT, sqlite3.SQLITE_UPDATE,
                            sqlite3.SQLITE_DELETE))
#: How many texts' tables one connection remembers, and how many characters of text in all (a
#: statement run again from sqlite3's statement cache is not prepared again: the authorizer is
#: not asked). Beyond either, the oldest are dropped and every statement prepared again.
MAX_REMEMBERED = 512
MAX_REMEMBERED_CHARS = 1 << 20
#: The verbs of the statements that only open or end a transaction or a savepoint: no table.
_TRANSACTION_VERBS = frozenset(("BEGIN", "COMMIT", "END", "ROLLBACK", "SAVEPOINT", "RELEASE"))


def _table(name, database) -> str:
    """How a table the authorizer names is recorded: its name, lower case, for a table of the
    main database (or of no schema named: SQLite names none for a read of no column of a table
    named without one, `SELECT count(*) FROM jobs`); `schema.name` for another (`temp.jobs`: a
    TEMP table of the connection's own, not the database's jobs)."""
    table = str(name).lower()
    schema = "main" if database is None else str(database).lower()
    return table if schema == "main" else f"{schema}.{table}"


class DbHost:
    """The real connections of one target process, by name."""

    def __init__(self, traced: Callable[[str, str], None] | None = None):
        #: called with (name, sql) for every statement traced on any connection here
        self.traced = traced
        self.conns: dict[str, _Conn] = {}
        self.counts: dict[str, int] = {}
        self._epochs = 0
        #: time.monotonic() by which a proxy's request must be done (the call's timeout, set by
        #: the TargetProcess while it serves one); a statement still running then is interrupted
        #: and `overran` set: the call timed out
        self.deadline: float | None = None
        self.overran = False
        #: asks the target process to run a function of the code's (`callbacks`: the
        #: TargetProcess's nested call), the calls of them in the request under way, how many
        #: run now, and whether the connections were to be closed meanwhile (`close_all`)
        self.call_out: Callable[[dict], object] | None = None
        self.function_calls = 0
        self.calling = 0
        self.closing = False

    # -- the judge's own uses ----------------------------------------------------------------
    def open(self, name: str, path: str, busy_timeout_ms: int = BUSY_TIMEOUT_MS,
             synchronous_off: bool = False) -> int:
        """Open (or open again) connection `name` as lab.store.connect would; its epoch."""
        self.close(name)
        real = watched.connect(path, busy_timeout_ms=busy_timeout_ms)
        self._epochs += 1
        conn = _Conn(name, self._epochs, real, str(path))
        real.watch(lambda sql, conn=conn: self._trace(conn, sql))
        real.create_function(COUNTER, 1, self._count)
        real.create_function(FAILER, 0, _fail)
        # the code's SQL runs in the judge's process: locked down and bounded first (`lock_down`)
        lock_down(real)
        real.set_authorizer(lambda *args, conn=conn: authorize(conn, *args))
        real.set_progress_handler(self._progress, PROGRESS_STEPS)
        if synchronous_off:
            real.execute("PRAGMA synchronous = OFF")
        self.conns[name] = conn
        return conn.epoch

    def close(self, name: str) -> None:
        """Close connection `name` if it is open (its uncommitted work is rolled back)."""
        conn = self.conns.pop(name, None)
        if conn is not None:
            for cursor in conn.cursors.values():
                _quietly(cursor.close)
            conn.cursors.clear()
            # a statement still referenced (an exception's traceback, say) would keep a closed
            # connection alive with its transaction and locks (sqlite3_close_v2): roll back first
            _quietly(conn.real.rollback)
            _quietly(conn.real.close)

    def close_all(self) -> None:
        """The target process is gone (killed, ended, closed): its connections go as a crash
        would take them (`crash`). While a function of the code's runs (called by one of their
        statements), they are closed once that request is served."""
        if self.calling:
            self.closing = True
            self.interrupt_all()
            return
        for name in list(self.conns):
            self.crash(name)

    def crash(self, name: str) -> None:
        """Close connection `name` as if the process holding it had died: the files are left as
        they were (a transaction under way leaves its rollback journal behind, a hot journal the
        next reader plays back), the locks are gone. The connection lives in the judge's
        process, so its files are copied as they are, the connection closed (which rolls back
        and removes the journal), and the copies put back, in place."""
        conn = self.conns.get(name)
        if conn is None:
            return
        journal = conn.path + "-journal"
        saved = None
        try:
            if conn.real.in_transaction and os.path.exists(journal):
                with open(conn.path, "rb") as db_file, open(journal, "rb") as journal_file:
                    saved = (db_file.read(), journal_file.read())
        except (OSError, sqlite3.Error):
            saved = None
        self.close(name)
        if saved is not None:
            try:
                with open(conn.path, "r+b") as db_file:  # the same inode: other connections
                    db_file.write(saved[0])           # of the judge's stay on the file
                    db_file.truncate()
                with open(journal, "wb") as journal_file:
                    journal_file.write(saved[1])
            except OSError:
                pass

    def real(self, name: str) -> sqlite3.Connection:
        """The real connection `name` (KeyError: none is open by that name)."""
        return self.conns[name].real

    def epoch(self, name: str) -> int:
        return self.conns[name].epoch

    def execute(self, name: str, sql: str, params=()) -> None:
        conn = self.conns[name]
        conn.cached(sql, lambda: conn.real.execute(sql, params))

    def in_transaction(self, name: str) -> bool:
        """Whether connection `name` has a transaction open (False once the code closed it)."""
        try:
            return bool(self.real(name).in_transaction)
        except sqlite3.ProgrammingError:
            return False

    def journal_mode(self, name: str) -> str:
        conn = self.conns[name]
        row = conn.cached("PRAGMA journal_mode",
                          lambda: conn.real.execute("PRAGMA journal_mode").fetchone())
        return str(row[0]) if row else ""

    def count(self, key: str) -> int:
        """How often a trigger called harness_count(key) on any connection here."""
        return self.counts.get(key, 0)

    def changes(self, name: str) -> int | None:
        """The rows connection `name` has inserted, updated or deleted so far (triggers'
        included: SQLite's total_changes), a number that moves with every change it makes to
        the database; None where that is not known (not open, closed, or the code ran a
        statement that changes it otherwise: `_Conn.reshaped`)."""
        conn = self.conns.get(name)
        if conn is None or conn.reshaped:
            return None
        try:
            return conn.real.total_changes
        except sqlite3.ProgrammingError:  # closed
            return None

    def state(self, name: str) -> dict:
        """What a proxy reads without asking: in_transaction, total_changes, isolation_level."""
        conn = self.conns.get(name)
        if conn is None:
            return {"in_transaction": False, "total_changes": 0, "isolation_level": None}
        return _state(conn.real)

    def interrupt(self, name: str) -> None:
        """Stop the statement running on `name` before it changes anything (called from its
        trace callback: the crash check's kill point, a stopped gate)."""
        conn = self.conns.get(name)
        if conn is not None:
            conn.real.interrupt()

    def tables_read(self, name: str) -> frozenset | None:
        """The tables the statement traced last on connection `name` reads or writes, as SQLite's
        authorizer told when it was prepared (SQLITE_READ, INSERT, UPDATE, DELETE; a view or
        trigger it runs included): lower case, `temp.name` for a TEMP table (`_table`);
        frozenset() for one that touches no table (`SELECT 1`, `SELECT sqlite_version()`, a
        PRAGMA, BEGIN or COMMIT); None where that is not known (text that is only comments).
        A statement run again from sqlite3's statement cache, not prepared again, has the tables
        its text had when it was last prepared (`_Conn.cached`, `_Conn.traced`)."""
        conn = self.conns.get(name)
        return None if conn is None else conn.last_tables

    def unfinished(self, name: str) -> tuple[int, int] | None:
        """(reads, writes): how many cursors of connection `name` hold a statement still running
        (it returned a row and was neither read to its end, nor reset, nor closed), which keeps
        its lock as long as it runs: a read its SHARED lock (even in autocommit, even past
        COMMIT), a write (UPDATE ... RETURNING) its RESERVED lock and its changes unpublished.
        Asked from the connection's trace callback, a statement about to run is not counted (a
        real cursor resets what it ran before first). (0, 0) for a closed connection; None where
        this Python's sqlite3 does not let it be seen (`_STATEMENTS_SEEN`): the lock is unknown.

        Read without running anything on the connection: a real cursor references its statement
        for as long as it runs (CPython's sqlite3 lets go of it at its end, reset or close), and
        a cursor that runs one has a description (it returned rows; one about to run has none)."""
        if not _statements_seen():
            return None
        conn = self.conns.get(name)
        if conn is None:
            return 0, 0
        reads = writes = 0
        for cursor in conn.cursors.values():
            if cursor.description is not None and _runs(cursor):
                if cursor.rowcount == -1:  # a SELECT's; a write's counts the rows it changed
                    reads += 1
                else:
                    writes += 1
        return reads, writes

    def drop(self, name: str, epoch: int, ids) -> None:
        """Let go of cursors `ids` of connection `name` (its `epoch`): their statements are
        reset, as a real cursor's is when it is freed."""
        conn = self.conns.get(name)
        if conn is None or conn.epoch != epoch:
            return
        for cid in _cursor_ids(ids):
            cursor = conn.cursors.pop(cid, None)
            if cursor is not None:
                _quietly(cursor.close)

    def interrupt_all(self) -> None:
        """Interrupt whatever runs on any connection here (from any thread: a kill)."""
        for conn in list(self.conns.values()):
            try:
                conn.real.interrupt()
            except sqlite3.Error:
                pass

    # -- a proxy's request ---------------------------------------------------------------------
    def serve(self, request: dict) -> dict:
        """Run one proxy request; the reply. RequestError for a request that breaks the protocol."""
        op = request.get("op")
        name = _string(request.get("conn"), "conn", wire.MAX_NAME)
        epoch = _integer(request.get("epoch"), "epoch")
        conn = self.conns.get(name)
        live = conn is not None and conn.epoch == epoch
        if live and "drop" in request:
            self.drop(name, epoch, request["drop"])
        want_trace = request.get("trace", False)
        if type(want_trace) is not bool:
            raise RequestError("trace is not a bool")
        raw_text = request.get("raw_text", False)
        if type(raw_text) is not bool:
            raise RequestError("raw_text is not a bool")
        if live:
            conn.student_trace = [] if want_trace else None
        try:
            if not live:
                raise sqlite3.ProgrammingError("Cannot operate on a closed database.")
            if conn.judge_ran:
                # a statement the judge ran here is in sqlite3's cache, prepared with the judge's
                # leave: the code running the same text would run it as prepared, its authorizer
                # not asked again; so every statement is prepared again before the code's next
                # one runs. (Belt and braces: no such statement is known to matter today: a DDL
                # statement expires the cache itself, and SQLite runs a PRAGMA's only once.)
                conn.real.expire()
                conn.judge_ran = False
            conn.serving = True
            self.function_calls = 0
            conn.prepared = False  # a prepare that failed earlier tells nothing of this request
            conn.prepared_tables = set()
            conn.prepared_writes = False
            if raw_text:  # the code's text_factory is not str: TEXT that is not UTF-8 is sent
                conn.real.text_factory = _text_or_raw
            try:
                result = self._run(conn, op, request)
            finally:
                conn.serving = False
                if raw_text:
                    _quietly(lambda: setattr(conn.real, "text_factory", str))
        except RequestError:
            raise
        except wire.WireError as exc:
            raise RequestError(str(exc)) from None
        except BaseException as exc:  # the real module's error: the proxy raises the same
            reply = {"error": error_data(exc)}
        else:
            reply = {"ok": result}
            if type(result) is dict and result.get("rows") and _too_long(reply):
                # rows too long for one message on the channel: the fetch that would hand them
                # out raises what a request too long raises (they are read on the judge's side)
                too_big = {"class": "DataError", "message": TOO_BIG}
                if op == "fetch":
                    reply = {"error": too_big}
                else:
                    result.update(rows=[], done=True, later=too_big)
        if live:
            reply["state"] = _state(conn.real)
            if conn.student_trace is not None:
                reply["trace"] = conn.student_trace
                conn.student_trace = None
        if self.closing and not self.calling:  # the target ended while a function of it ran
            self.closing = False
            self.close_all()
        return reply

    def _run(self, conn: _Conn, op, request: dict):
        real = conn.real
        if op in ("execute", "executemany", "executescript"):
            cursor = self._cursor(conn, request)
            sql = _string(request.get("sql"), "sql", wire.MAX_LINE)
            if op == "execute":
                params = request.get("params")
                params = () if params is None else _params(params)
                conn.cached(sql, lambda: cursor.execute(sql, params))
            elif op == "executemany":
                seq = request.get("seq")
                if type(seq) is not list:
                    raise RequestError("seq is not a list")
                seq = [_params(p) for p in seq]
                conn.cached(sql, lambda: cursor.executemany(sql, seq))
            else:  # each statement prepared as it comes, none cached
                cursor.executescript(sql)
            result = {"description": _description(cursor), "lastrowid": cursor.lastrowid,
                      "rowcount0": cursor.rowcount, "rows": [], "done": True}
            if cursor.description is not None and op == "execute" and \
                    conn.last_writes is not False:
                # A write's RETURNING rows are handed out only when the code fetches them: until
                # its last row is read the statement is in progress, as on a real cursor (a
                # COMMIT then fails, its changes are not counted yet), so the real cursor must
                # not step past what the code has read (a statement not known to read only is
                # taken as a write).
                result["done"] = False
            elif cursor.description is not None:
                try:
                    row = cursor.fetchone()
                except BaseException as exc:  # the real cursor raises it at the first fetch
                    result["later"] = error_data(exc)
                else:
                    result["rows"] = [] if row is None else [_row(row)]
                    result["done"] = row is None
            result["rowcount"] = cursor.rowcount
            return result
        if op == "fetch":
            cursor = self._cursor(conn, request, create=False)
            n = _integer(request.get("n"), "n")
            rows = cursor.fetchall() if n < 0 else cursor.fetchmany(n)
            return {"rows": [_row(row) for row in rows], "done": n < 0 or len(rows) < n,
                    "rowcount": cursor.rowcount}
        if op == "close_cursor":
            cursor = conn.cursors.pop(_integer(request.get("cur"), "cur"), None)
            if cursor is not None:
                cursor.close()
            return None
        if op == callbacks.OP:  # a function of the code's: a stand-in registered here
            callbacks.register(conn, request, self)
            return None
        if op == "commit":
            real.commit()
            return None
        if op == "rollback":
            real.rollback()
            return None
        if op == "close":
            conn.cursors.clear()
            real.close()
            return None
        if op == "exit":
            error = request.get("error")
            if type(error) is not bool:
                raise RequestError("exit: error is not a bool")
            if error:
                real.__exit__(Exception, Exception(), None)
            else:
                real.__exit__(None, None, None)
            return None
        if op == "set":
            attr = request.get("attr")
            if attr not in _ATTRS:
                raise RequestError("set: unknown attribute")
            value = request.get("value")
            if attr == "autocommit":
                if type(value) is not bool and value != -1:
                    raise RequestError("set autocommit: not a bool or -1")
                if not hasattr(real, "autocommit"):
                    raise RequestError("set autocommit: not on this Python")
                real.autocommit = value
            else:
                if value is not None and type(value) is not str:
                    raise RequestError("set isolation_level: not a str or null")
                real.isolation_level = value
            return None
        raise RequestError(f"unknown op {str(op)[:40]!r}")

    def _cursor(self, conn: _Conn, request: dict, create: bool = True) -> sqlite3.Cursor:
        cid = _integer(request.get("cur"), "cur")
        cursor = conn.cursors.get(cid)
        if cursor is None:
            if not create:
                raise RequestError("fetch on a cursor that never executed")
            if len(conn.cursors) >= MAX_CURSORS:
                raise sqlite3.OperationalError("too many cursors open on this connection")
            cursor = conn.cursors[cid] = conn.real.cursor()
        return cursor

    # -- what the real connections tell ----------------------------------------------------------
    def _trace(self, conn: _Conn, sql: str) -> None:
        conn.last_tables = conn.traced(sql)
        if not conn.serving:  # the judge's own statement: prepared with the judge's leave
            conn.judge_ran = True
        if conn.student_trace is not None and len(conn.student_trace) < wire.MAX_STATEMENTS:
            conn.student_trace.append(sql[:wire.MAX_SQL])
        if self.traced is not None:
            self.traced(conn.name, sql)

    def _progress(self) -> int:
        """SQLite's progress handler: every PROGRESS_STEPS steps of a statement, 1 (interrupt)
        once the request's deadline has passed."""
        if self.deadline is not None and time.monotonic() > self.deadline:
            self.overran = True
            return 1
        return 0

    def _count(self, key) -> int:
        key = str(key)[:wire.MAX_NAME]
        self.counts[key] = self.counts.get(key, 0) + 1
        return 1


#: The error of a request, or of rows, too long for one message on the channel.
TOO_BIG = "string or blob too big"
#: Room left in a message for what wraps a reply on the channel ({"op": "db", "cb": n, ...}).
_WRAP = 1024


def _too_long(reply: dict) -> bool:
    """Whether `reply` would not fit one message. Rows far below the limit are not encoded to
    be measured (the reply is encoded once more to be sent): only those that may not fit."""
    if _at_most(reply["ok"]["rows"]) <= wire.MAX_LINE // 2:
        return False
    try:
        return len(wire.encode(reply)) > wire.MAX_LINE - _WRAP
    except wire.WireError:
        return True


def _at_most(rows: list) -> int:
    """An upper bound of the bytes `rows` (as `_row` writes them) take in a message: a str at
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


#: PRAGMAs that set something for the whole judge's process (where SQLite puts its temporary
#: files, how much memory it may take): refused when they set a value, whoever runs them.
_PROCESS_PRAGMAS = ("temp_store_directory", "data_store_directory", "hard_heap_limit",
                    "soft_heap_limit")
#: PRAGMAs the code may read but not set: the bounds the judge puts on its connections (sizes,
#: memory, threads, where temporary tables live) and what the connection trusts (the schema's
#: functions, writing sqlite_master, the schema cookie, CHECK constraints: what SQLite's
#: defensive mode guards, refused here on every Python, whether or not its sqlite3 has setconfig).
_BOUND_PRAGMAS = ("max_page_count", "page_size", "temp_store", "mmap_size", "threads",
                  "trusted_schema", "writable_schema", "schema_version",
                  "ignore_check_constraints")
#: journal_mode values the code may not set: OFF lets ordinary SQL corrupt the file (what
#: defensive mode turns into a no-op; refused here, the same on every Python).
_DENIED_JOURNAL_MODES = ("off",)
#: SQL functions the code may not call: they load native code or install a C pointer
#: (SQLite refuses them by default too; refused here whatever the build says).
_DENIED_FUNCTIONS = ("load_extension", "fts3_tokenizer")
#: The judge's tables: the code may not drop, rename or alter them (their schema is the lab's).
_JUDGE_TABLES = ("jobs",)
#: The longest busy timeout the code may set (PRAGMA busy_timeout): a statement waiting on a
#: lock waits in the judge's process, where no signal ends it.
MAX_BUSY_TIMEOUT_MS = 60_000
#: How often (in SQLite's virtual machine steps) a statement looks at the request's deadline.
PROGRESS_STEPS = 20_000
#: The largest string or blob a statement may make (SQLITE_LIMIT_LENGTH): what fits one message.
MAX_VALUE_BYTES = wire.MAX_LINE
#: The largest database (and temporary database) a connection may grow, in pages (64 MiB at
#: SQLite's default 4 KiB page; its page_size cannot be set from the code).
MAX_PAGES = 16_384


#: Actions no statement may take, whatever their arguments: ATTACH (a file, a URI, a bound or
#: computed name, which SQLite hands the authorizer as None; and VACUUM, which attaches its copy:
#: '' or the INTO file) and DETACH. The connections also allow 0 attached databases
#: (SQLITE_LIMIT_ATTACHED, where this Python's sqlite3 has setlimit).
_NEVER = frozenset((sqlite3.SQLITE_ATTACH, sqlite3.SQLITE_DETACH))
#: Virtual tables the code may not create or drop (FTS and the like: their shadow tables are what
#: defensive mode guards, and the lab needs none; json_each and pragma_* functions still read).
_VTABLE_ACTIONS = frozenset((sqlite3.SQLITE_CREATE_VTABLE, sqlite3.SQLITE_DROP_VTABLE))
_CREATE_TRIGGER = (sqlite3.SQLITE_CREATE_TRIGGER, sqlite3.SQLITE_CREATE_TEMP_TRIGGER)
_DROP_TRIGGER = (sqlite3.SQLITE_DROP_TRIGGER, sqlite3.SQLITE_DROP_TEMP_TRIGGER)


#: What a statement that changes the database only row by row is made of (each change counted
#: by total_changes): anything else the code prepares marks its connection `reshaped`.
_ROW_ACTIONS = frozenset(getattr(sqlite3, name) for name in (
    "SQLITE_READ", "SQLITE_SELECT", "SQLITE_TRANSACTION", "SQLITE_FUNCTION", "SQLITE_SAVEPOINT",
    "SQLITE_INSERT", "SQLITE_UPDATE", "SQLITE_DELETE", "SQLITE_RECURSIVE")
    if hasattr(sqlite3, name))


def authorize(conn: _Conn, action, arg1, arg2, database, source):
    """The authorizer of connection `conn`.

    harness_count and harness_fail may be called only by a trigger the judge created (`source`, the innermost
    trigger or view, is the trigger's name): not by the code's SQL, nor by a trigger or view
    of the code's, so a firing cannot be faked; and the code cannot drop the judge's triggers
    (nor create one of the same name), so a fault cannot be switched off. No statement opens a
    file: the code's SQL runs here, in the judge's process, so every ATTACH and DETACH is
    refused whatever names the file (a literal, a bound parameter or an expression, which SQLite
    hands over as None, a URI; VACUUM and VACUUM INTO attach their copy the same way), and so
    are the PRAGMAs that move the process's temporary files or set its heap. The code may read
    every PRAGMA but not set the bounds and trust `lock_down` set (`_BOUND_PRAGMAS`,
    journal_mode OFF), call load_extension or fts3_tokenizer, create or drop a virtual table,
    or drop or alter the judge's tables. Refused is SQLite's "not authorized", as a server's
    authorizer says it."""
    conn.prepared = True
    if action in _TABLE_ACTIONS and arg1 is not None:
        conn.prepared_tables.add(_table(arg1, database))
        if action != sqlite3.SQLITE_READ:
            conn.prepared_writes = True
    if conn.serving and action not in _ROW_ACTIONS and (action != sqlite3.SQLITE_PRAGMA
                                                         or arg2 is not None):
        conn.reshaped = True
    if action == sqlite3.SQLITE_FUNCTION:
        function = "" if arg2 is None else arg2.lower()
        if function in _DENIED_FUNCTIONS or (function in _JUDGE_FUNCTIONS and (
                source is None or source.lower() not in conn.judge_triggers)):
            return sqlite3.SQLITE_DENY
        return sqlite3.SQLITE_OK
    if action in _CREATE_TRIGGER or action in _DROP_TRIGGER:
        name = str(arg1).lower()
        if conn.serving:
            if name in conn.judge_triggers:
                return sqlite3.SQLITE_DENY
            if action == sqlite3.SQLITE_CREATE_TRIGGER and str(arg2).lower() in _JUDGE_TABLES \
                    and str(database or "main").lower() == "main":
                # a trigger on the judge's table in the database file fires in every
                # connection's writes, the judge's own among them (its enqueue, its operator):
                # the code may keep TEMP triggers, which fire in its own connection only
                return sqlite3.SQLITE_DENY
        elif action in _CREATE_TRIGGER:
            conn.judge_triggers.add(name)
        else:
            conn.judge_triggers.discard(name)
        return sqlite3.SQLITE_OK
    if action in _NEVER:
        return sqlite3.SQLITE_DENY
    if action == sqlite3.SQLITE_PRAGMA and arg2 is not None and arg1 is not None:
        pragma = arg1.lower()
        if pragma in _PROCESS_PRAGMAS:
            return sqlite3.SQLITE_DENY
        if conn.serving and (pragma in _BOUND_PRAGMAS or (
                pragma == "journal_mode" and _word(arg2) in _DENIED_JOURNAL_MODES)):
            return sqlite3.SQLITE_DENY
        if conn.serving and pragma == "busy_timeout" and _over(arg2, MAX_BUSY_TIMEOUT_MS):
            return sqlite3.SQLITE_DENY
    if conn.serving and (action in _VTABLE_ACTIONS or _changes_judge_table(action, arg1, arg2,
                                                                           database)):
        return sqlite3.SQLITE_DENY
    return sqlite3.SQLITE_OK


def _changes_judge_table(action, arg1, arg2, database) -> bool:
    """Does the action drop or alter one of the judge's tables (in main)? SQLITE_DROP_TABLE names
    the table in arg1 and its schema in `database`; SQLITE_ALTER_TABLE the schema in arg1 and
    the table in arg2."""
    if action == sqlite3.SQLITE_DROP_TABLE:
        table, schema = arg1, database
    elif action == sqlite3.SQLITE_ALTER_TABLE:
        table, schema = arg2, arg1
    else:
        return False
    return (str(table).lower() in _JUDGE_TABLES
            and str(schema or "main").lower() == "main")


#: SQLite's limits on what one statement of the code may grow (SQLITE_LIMIT_*: set where this
#: Python's sqlite3 has Connection.setlimit, 3.11+). Where it has not (3.10), ATTACH is refused
#: by the authorizer all the same, a value or a statement too long for one message is refused
#: on its way (wire's bound, `TOO_BIG`), and the heap limit bounds every allocation.
LIMITS = {
    "SQLITE_LIMIT_ATTACHED": 0,
    "SQLITE_LIMIT_LENGTH": MAX_VALUE_BYTES,
    "SQLITE_LIMIT_SQL_LENGTH": wire.MAX_LINE,
    "SQLITE_LIMIT_EXPR_DEPTH": 1000,
    "SQLITE_LIMIT_COMPOUND_SELECT": 500,
    "SQLITE_LIMIT_TRIGGER_DEPTH": 100,
    "SQLITE_LIMIT_WORKER_THREADS": 0,
}
#: The most memory SQLite may allocate in the judge's process (PRAGMA hard_heap_limit, which the
#: code may not set): the code's temporary tables and sorts live in memory (temp_store), bounded
#: by MAX_PAGES each and by this all together; an allocation past it fails with SQLITE_NOMEM
#: ("out of memory") instead of growing the process.
HEAP_BYTES = 512 * 1024 ** 2
#: sqlite3_db_config switches (Connection.setconfig, Python 3.12+): on, off.
_CONFIG = (("SQLITE_DBCONFIG_DEFENSIVE", True), ("SQLITE_DBCONFIG_TRUSTED_SCHEMA", False),
           ("SQLITE_DBCONFIG_ENABLE_LOAD_EXTENSION", False),
           ("SQLITE_DBCONFIG_ENABLE_FTS3_TOKENIZER", False),
           ("SQLITE_DBCONFIG_WRITABLE_SCHEMA", False))


def lock_down(real: sqlite3.Connection) -> None:
    """Lock down a judge's connection as a server locks down one that runs untrusted SQL, using
    only what this Python's sqlite3 has: its limits (`LIMITS`), defensive mode and an untrusted
    schema (setconfig where there is one; PRAGMA trusted_schema = OFF everywhere: a function of
    the judge's runs only in the judge's TEMP triggers, which SQLite trusts), temporary tables
    and sorts in memory (so no file is made outside the database's folder: the judge's process
    may write nothing else, `jail.enter_judge`), the page counts of main and temp, and the
    process's heap. Called before the authorizer is set; the authorizer then keeps the code from
    setting any of these back (`_BOUND_PRAGMAS`, `_PROCESS_PRAGMAS`) or opening a file (`_NEVER`)."""
    if hasattr(real, "setlimit"):
        for name, value in LIMITS.items():
            real.setlimit(getattr(sqlite3, name), value)
    if hasattr(real, "setconfig"):
        for name, on in _CONFIG:
            if hasattr(sqlite3, name):
                real.setconfig(getattr(sqlite3, name), on)
    real.execute("PRAGMA trusted_schema = OFF")
    real.execute("PRAGMA temp_store = MEMORY")
    real.execute(f"PRAGMA hard_heap_limit = {HEAP_BYTES}")
    for schema in ("main", "temp"):
        real.execute(f"PRAGMA {schema}.max_page_count = {MAX_PAGES}")


class InjectedFailure(Exception):
    """What FAILER's body raises (sqlite3 turns it into its OperationalError; it stays here)."""


def _fail() -> None:
    """FAILER's body: always raises (a fault trigger of the judge's calls it)."""
    raise InjectedFailure("injected database error")


def _word(value) -> str:
    """A PRAGMA's value as SQLite hands it to the authorizer, unquoted and in lower case."""
    return str(value).strip().strip("'\"").lower()


def _over(value: str, limit: int) -> bool:
    """Whether a PRAGMA's value (as SQLite hands it to the authorizer) is above `limit` (a value
    that is no integer is not: SQLite reads it as 0)."""
    try:
        return int(str(value).strip().strip("'\"")) > limit
    except ValueError:
        return False


_AUTOCOMMIT = hasattr(sqlite3.Connection, "autocommit")  # Python 3.12+


def _state(real: sqlite3.Connection) -> dict:
    try:
        state = {"in_transaction": real.in_transaction,
                 "total_changes": real.total_changes, "isolation_level": real.isolation_level}
        if _AUTOCOMMIT:
            state["autocommit"] = real.autocommit
        return state
    except sqlite3.ProgrammingError:  # closed
        return {"in_transaction": False, "total_changes": 0, "isolation_level": None,
                "closed": True}


def _runs(cursor: sqlite3.Cursor) -> bool:
    """Does the real cursor reference a prepared statement (CPython's sqlite3: from its execute
    until that statement is done, reset or closed)?"""
    return any(type(obj) is _STATEMENT for obj in gc.get_referents(cursor))


_STATEMENT: type | None = None
_SEEN: list[bool] = []


def _statements_seen() -> bool:
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
                    lambda sql: seen.append(again.description is not None and _runs(again)))
                again.execute("SELECT 3")  # its first run reset, this one about to run
                real.set_trace_callback(None)
                running = left.description is not None and _runs(left)
                again.fetchone()  # its one row read: done
                done_one = not _runs(again)
                left.fetchall()
                ok = running and seen == [False] and done_one and not _runs(left)
        finally:
            real.close()
    except (sqlite3.Error, TypeError):
        ok = False
    _SEEN.append(ok)
    return ok


def _description(cursor: sqlite3.Cursor):
    if cursor.description is None:
        return None
    return [str(column[0]) for column in cursor.description]


class _RawText(bytes):
    """A TEXT value that is not UTF-8, read for a proxy whose text_factory is not str."""


def _text_or_raw(data: bytes):
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return _RawText(data)


def _row(row) -> list:
    return [{"t": base64.b64encode(value).decode("ascii")} if type(value) is _RawText
            else wire.sql_value(value) for value in row]


def _params(params):
    if params is False:  # parameters of a type sqlite3 does not take: it raises its error
        return 0
    if type(params) is list:
        return [_param(value) for value in params]
    if type(params) is dict:
        return {str(k): _param(v) for k, v in params.items()}
    raise RequestError("params is neither a list nor an object")


def _param(value):
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
            return _Raises(_integer(value["e"], "a parameter's error"))
        if "x" in value:
            name = _string(value["x"], "a parameter's type", wire.MAX_NAME)
            return _unbindable(name)()
    return wire.sql_value_back(value)


class Deferred(Exception):
    """What binding a `_Raises` raises: the proxy raises its own exception number `index`."""

    def __init__(self, index: int):
        super().__init__(index)
        self.index = index


class _Raises:
    """A parameter whose adapting raised in the proxy: binding it raises Deferred."""

    __slots__ = ("index",)

    def __init__(self, index: int):
        self.index = index

    def __conform__(self, protocol):
        raise Deferred(self.index)


_UNBINDABLE: dict[str, type] = {}


def _unbindable(name: str) -> type:
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
    name = next((k.__name__ for k in kind.__mro__ if k.__name__ in _SQLITE_ERRORS
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


def _cursor_ids(value) -> list[int]:
    if type(value) is not list or len(value) > MAX_CURSORS:
        raise RequestError("drop is not a list of cursor ids")
    return [_integer(v, "drop") for v in value]


def _integer(value, what: str) -> int:
    if type(value) is not int or not wire.INT_MIN <= value <= wire.INT_MAX:
        raise RequestError(f"{what} is not an int")
    return value


def _string(value, what: str, limit: int) -> str:
    if type(value) is not str or len(value) > limit:
        raise RequestError(f"{what} is not a str")
    return value


def _quietly(call) -> None:
    try:
        call()
    except sqlite3.Error:
        pass


__all__ = ["DbHost", "RequestError", "ITER_CHUNK", "BUILTIN_ERRORS", "error_data", "COUNTER"]
