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

import itertools
import os
import sqlite3
import time
from typing import Callable

from lab.store import BUSY_TIMEOUT_MS

from . import callbacks, watched
from .dbvalues import (BUILTIN_ERRORS, MAX_CURSORS, TOO_BIG, connection_state, cursor_ids,
                       description_of, error_data, integer_of, params_data, quietly, row_data,
                       statement_runs, statements_seen, string_of, text_or_raw, too_long,
                       RequestError)
from .lockdown import (COUNTER, FAILER, PROGRESS_STEPS, authorize, fail_injected, lock_down)
from grader.harness import wire
from grader.harness.processes import stuck
from .hosted import Hosted

#: Rows a proxy asks for at a time while it is iterated (fetchone asks for 1).
ITER_CHUNK = wire.DB_ITER_CHUNK
_ATTRS = ("isolation_level", "autocommit")


class DbHost:
    """The real connections of one target process, by name."""

    def __init__(self, traced: Callable[[str, str], None] | None = None):
        #: called with (name, sql) for every statement traced on any connection here
        self.traced = traced
        self.conns: dict[str, Hosted] = {}
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
    def open(self, name: str, path: str, busy_timeout_ms: int = BUSY_TIMEOUT_MS) -> int:
        """Open (or open again) connection `name` as lab.store.connect would; its epoch. With
        PRAGMA synchronous = OFF: no check is about durability (a killed process, the only
        crash a check makes, loses nothing the system has been handed), and a commit then
        waits for no disk (about 1,100 fdatasync calls a full grade, each a wait)."""
        self.close(name)
        real = watched.connect(path, busy_timeout_ms=busy_timeout_ms)
        self._epochs += 1
        conn = Hosted(name, self._epochs, real, str(path), busy_timeout_ms)
        real.watch(lambda sql, conn=conn: self._trace(conn, sql))
        real.create_function(COUNTER, 1, self._count)
        real.create_function(FAILER, 0, fail_injected)
        # the code's SQL runs in the judge's process: locked down and bounded first (`lock_down`)
        lock_down(real)
        real.set_authorizer(lambda *args, conn=conn: authorize(conn, *args))
        real.set_progress_handler(self._progress, PROGRESS_STEPS)
        real.execute("PRAGMA synchronous = OFF")
        self.conns[name] = conn
        return conn.epoch

    def close(self, name: str) -> None:
        """Close connection `name` if it is open (its uncommitted work is rolled back)."""
        conn = self.conns.pop(name, None)
        if conn is not None:
            for cursor in conn.cursors.values():
                quietly(cursor.close)
            conn.cursors.clear()
            # a statement still referenced (an exception's traceback, say) would keep a closed
            # connection alive with its transaction and locks (sqlite3_close_v2): roll back first
            quietly(conn.real.rollback)
            quietly(conn.real.close)

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

    def busy_lowered(self, name: str) -> tuple[int, int] | None:
        """(now, opened): connection `name`'s busy timeout in ms, when the code has lowered it
        below the one the connection was opened with (read only once the code prepared a PRAGMA
        that sets: `Hosted.settings_changed`); None otherwise, or when it is not open."""
        conn = self.conns.get(name)
        if conn is None or not conn.settings_changed:
            return None
        try:
            row = conn.cached("PRAGMA busy_timeout",
                              lambda: conn.real.execute("PRAGMA busy_timeout").fetchone())
        except sqlite3.Error:  # closed by the code
            return None
        now = int(row[0]) if row else conn.busy_timeout_ms
        return (now, conn.busy_timeout_ms) if now < conn.busy_timeout_ms else None

    def count(self, key: str) -> int:
        """How often a trigger called harness_count(key) on any connection here."""
        return self.counts.get(key, 0)

    def changes(self, name: str) -> int | None:
        """The rows connection `name` has inserted, updated or deleted so far (triggers'
        included: SQLite's total_changes), a number that moves with every change it makes to
        the database; None where that is not known (not open, closed, or the code ran a
        statement that changes it otherwise: `Hosted.reshaped`)."""
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
        return connection_state(conn.real)

    def news(self, name: str) -> dict | None:
        """The state of connection `name` (`state`) if it is not what its proxy holds (the state
        last sent for it), now sent; None when the proxy holds it already: a call's request
        leaves it out."""
        conn = self.conns.get(name)
        return self.state(name) if conn is None else conn.news()

    def interrupt(self, name: str) -> None:
        """Stop the statement running on `name` before it changes anything (called from its
        trace callback: the crash check's kill point, a stopped gate)."""
        conn = self.conns.get(name)
        if conn is not None:
            conn.real.interrupt()

    def tables_read(self, name: str) -> frozenset | None:
        """The tables the statement traced last on connection `name` reads or writes, as SQLite's
        authorizer told when it was prepared (SQLITE_READ, INSERT, UPDATE, DELETE; a view or
        trigger it runs included): lower case, `temp.name` for a TEMP table (`lockdown.table_key`);
        frozenset() for one that touches no table (`SELECT 1`, `SELECT sqlite_version()`, a
        PRAGMA, BEGIN or COMMIT); None where that is not known (text that is only comments).
        A statement run again from sqlite3's statement cache, not prepared again, has the tables
        its text had when it was last prepared (`Hosted.cached`, `Hosted.traced`)."""
        conn = self.conns.get(name)
        return None if conn is None else conn.last_tables

    def held(self, name: str) -> tuple[bool, tuple[int, int] | None]:
        """What connection `name` holds now, each keeping a lock: a transaction open, and its
        statements still running ((reads, writes) as `unfinished` tells; None: not known). No
        such connection (its call closed it, or none was opened): nothing held."""
        if name not in self.conns:
            return False, None
        return self.in_transaction(name), self.unfinished(name)

    def unfinished(self, name: str) -> tuple[int, int] | None:
        """(reads, writes): how many cursors of connection `name` hold a statement still running
        (it returned a row and was neither read to its end, nor reset, nor closed), which keeps
        its lock as long as it runs: a read its SHARED lock (even in autocommit, even past
        COMMIT), a write (UPDATE ... RETURNING) its RESERVED lock and its changes unpublished.
        Asked from the connection's trace callback, a statement about to run is not counted (a
        real cursor resets what it ran before first). (0, 0) for a closed connection; None where
        this Python's sqlite3 does not let it be seen (`STATEMENTS_SEEN`): the lock is unknown.

        Read without running anything on the connection: a real cursor references its statement
        for as long as it runs (CPython's sqlite3 lets go of it at its end, reset or close), and
        a cursor that runs one has a description (it returned rows; one about to run has none)."""
        if not statements_seen():
            return None
        conn = self.conns.get(name)
        if conn is None:
            return 0, 0
        reads = writes = 0
        for cursor in conn.cursors.values():
            if cursor.description is not None and statement_runs(cursor):
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
        for cid in cursor_ids(ids):
            cursor = conn.cursors.pop(cid, None)
            if cursor is not None:
                quietly(cursor.close)

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
        name = string_of(request.get("conn"), "conn", wire.MAX_NAME)
        epoch = integer_of(request.get("epoch"), "epoch")
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
                conn.real.text_factory = text_or_raw
            mark = stuck.here()  # set while the code's SQL runs: a lane overdue then is its doing
            if mark is not None:
                mark.set(True)
            try:
                result = self._run(conn, op, request)
            finally:
                conn.serving = False
                if raw_text:
                    quietly(lambda: setattr(conn.real, "text_factory", str))
                if mark is not None:
                    mark.set(False)
        except RequestError:
            raise
        except wire.WireError as exc:
            raise RequestError(str(exc)) from None
        except Exception as exc:  # the real module's error: the proxy raises the same
            # (not a BaseException: the judge's own alarm, sandbox.TimeUp, ends the check)
            reply = {"error": error_data(exc)}
        else:
            reply = {"ok": result}
            if type(result) is dict and result.get("rows") and too_long(reply):
                # rows too long for one message on the channel: the fetch that would hand them
                # out raises what a request too long raises (they are read on the judge's side)
                too_big = {"class": "DataError", "message": TOO_BIG}
                if op == "fetch":
                    reply = {"error": too_big}
                else:
                    result.update(rows=[], done=True, later=too_big)
        if live:
            state = conn.news()
            if state is not None:  # else the proxy holds it: left out
                reply["state"] = state
            if conn.student_trace is not None:
                reply["trace"] = conn.student_trace
                conn.student_trace = None
        if self.closing and not self.calling:  # the target ended while a function of it ran
            self.closing = False
            self.close_all()
        return reply

    def _run(self, conn: Hosted, op, request: dict):
        real = conn.real
        if op in ("execute", "executemany", "executescript"):
            cursor = self._cursor(conn, request)
            sql = string_of(request.get("sql"), "sql", wire.MAX_LINE)
            if op == "execute":
                params = request.get("params")
                params = () if params is None else params_data(params)
                conn.cached(sql, lambda: cursor.execute(sql, params))
            elif op == "executemany":
                seq = request.get("seq")
                if type(seq) is not list:
                    raise RequestError("seq is not a list")
                seq = [params_data(p) for p in seq]
                conn.cached(sql, lambda: cursor.executemany(sql, seq))
            else:  # each statement prepared as it comes, none cached
                cursor.executescript(sql)
            result = {"description": description_of(cursor), "lastrowid": cursor.lastrowid,
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
                    result["rows"] = [] if row is None else [row_data(row)]
                    result["done"] = row is None
            result["rowcount"] = cursor.rowcount
            # what the proxy takes as given when it is left out: no rows read ahead (and so no
            # rowcount before the first), no description (docs/protocol.md)
            if not result["rows"]:
                del result["rows"], result["rowcount0"]
            if result["description"] is None:
                del result["description"]
            return result
        if op == "fetch":
            cursor = self._cursor(conn, request, create=False)
            n = integer_of(request.get("n"), "n")
            rows = _fetched(cursor, n)
            return {"rows": [row_data(row) for row in rows], "done": n < 0 or len(rows) < n,
                    "rowcount": cursor.rowcount}
        if op == "close_cursor":
            cursor = conn.cursors.pop(integer_of(request.get("cur"), "cur"), None)
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

    def _cursor(self, conn: Hosted, request: dict, create: bool = True) -> sqlite3.Cursor:
        cid = integer_of(request.get("cur"), "cur")
        cursor = conn.cursors.get(cid)
        if cursor is None:
            if not create:
                raise RequestError("fetch on a cursor that never executed")
            if len(conn.cursors) >= MAX_CURSORS:
                raise sqlite3.OperationalError("too many cursors open on this connection")
            cursor = conn.cursors[cid] = conn.real.cursor()
        return cursor

    # -- what the real connections tell ----------------------------------------------------------
    def _trace(self, conn: Hosted, sql: str) -> None:
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


def _fetched(cursor: sqlite3.Cursor, n: int) -> list:
    """fetchall (n < 0) or fetchmany(n), read a row at a time: rows that could not go back in
    one message (their text and blobs alone past wire.MAX_LINE) raise what a reply too long
    raises (DataError, TOO_BIG) as soon as they are past it, before the judge holds them all
    (a fetchall of a hundred 3 MB blobs would fill the judge's memory first)."""
    rows, size = [], 0
    for row in cursor if n < 0 else itertools.islice(cursor, n):
        rows.append(row)
        size += sum(len(v) if isinstance(v, (str, bytes)) else 8 for v in row)
        if size > wire.MAX_LINE:
            raise sqlite3.DataError(TOO_BIG)
    return rows


__all__ = ["DbHost", "RequestError", "ITER_CHUNK", "BUILTIN_ERRORS", "error_data", "COUNTER"]
