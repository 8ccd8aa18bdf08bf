"""One real connection as the judge hosts it (`Hosted`): the cursors its proxy's requests use,
and what the judge knows of the code's statements on it: what SQLite's authorizer told of each
one prepared (the tables it reads or writes, whether it writes, a PRAGMA that sets), the texts
sqlite3's statement cache may run again without preparing them (and their tables), the state
its proxy holds, the functions the code registered on it. `grader.harness.judge.dbhost` holds
one target process's `Hosted` connections by name and serves the proxies' requests on them.

May import: the standard library, the lab's store, the wire and this package's `watched`,
`dbvalues` and `interleave`.
"""

from __future__ import annotations

import sqlite3
from typing import Callable

from lab.store import BUSY_TIMEOUT_MS

from . import watched
from .dbvalues import connection_state
from .interleave import verb


class Hosted:
    """One real connection and the cursors its proxies use."""

    def __init__(self, name: str, epoch: int, real: watched.WatchedConnection,
                 path: str, busy_timeout_ms: int = BUSY_TIMEOUT_MS):
        self.name, self.epoch, self.real, self.path = name, epoch, real, path
        self.cursors: dict[int, sqlite3.Cursor] = {}
        self.student_trace: list[str] | None = None  # collecting for a proxy's trace callback
        self.serving = False  # a proxy's request runs: the statements are the code's
        self.judge_ran = False  # the judge ran a statement here since the code's last request
        self.judge_triggers: set[str] = set()  # the triggers the judge created (lower case)
        # the code ran a statement that may change the database otherwise than row by row (its
        # schema, a PRAGMA that sets): its total_changes no longer tells every change (`changes`)
        self.reshaped = False
        # the code prepared a PRAGMA that sets (its busy timeout among them: `busy_lowered`), and
        # the busy timeout the connection was opened with, in ms
        self.settings_changed = False
        self.busy_timeout_ms = busy_timeout_ms
        # what SQLite's authorizer told of the statements prepared since the last one traced (the
        # tables they read or write, `lockdown.table_key`): `tables_read`, `traced`
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
        #: the state (`connection_state`) last sent to the target for this connection, in a
        #: reply or a call's request: what its proxy holds; a message whose state would be the
        #: same leaves it out (`DbHost.news`)
        self.sent_state: dict | None = None
        self.proxied = False  # a call on it was sent: the target made its proxy (`DbHost.news`)

    def news(self) -> dict | None:
        """This connection's state (`connection_state`) if it is not what its proxy holds (the
        state last sent), now recorded as sent; None when the proxy holds it already."""
        state = connection_state(self.real)
        if state == self.sent_state:
            return None
        self.sent_state = state
        return state

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
        """The tables (`lockdown.table_key`) of the statement SQLite traces now, its text `sql`: what the
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


#: How many texts' tables one connection remembers, and how many characters of text in all (a
#: statement run again from sqlite3's statement cache is not prepared again: the authorizer is
#: not asked). Beyond either, the oldest are dropped and every statement prepared again.
MAX_REMEMBERED = 512
MAX_REMEMBERED_CHARS = 1 << 20
#: The verbs of the statements that only open or end a transaction or a savepoint: no table.
_TRANSACTION_VERBS = frozenset(("BEGIN", "COMMIT", "END", "ROLLBACK", "SAVEPOINT", "RELEASE"))
