"""The connection handed to the code under grade: the grader's trace callback stays on it.

sqlite3 allows one trace callback per connection, and the grader watches the code under grade
through one (the transaction shape, the race barrier, the crash points, the journal-mode watch).
A student who calls `conn.set_trace_callback(log)` (a debugging aid) would replace it and blind
the grader. So the target is never handed a plain connection but a `WatchedConnection`:
- `watch(callback)` installs the grader's callback (None removes it);
- `set_trace_callback(callback)`, the sqlite3 API the student knows, installs the student's own,
  called for every statement right after the grader's; `set_trace_callback(None)` removes only
  the student's. The grader's observation cannot be switched off through it.

It also remembers the authorizer it was given, so that `expire()` can set that very authorizer
again: SQLite then marks every statement prepared on the connection expired, and prepares each
one again (asking the authorizer again) before its next run, even one sqlite3 keeps in its
statement cache (the judge's `dbhost` uses it to learn which tables such a statement touches).

`connect(path, busy_timeout_ms)` opens one with exactly the settings of `lab.store.connect`
(the students' store, which the grader does not change).
"""

from __future__ import annotations

import sqlite3
from typing import Callable, Optional

from lab import store

Trace = Optional[Callable[[str], object]]


class WatchedConnection(sqlite3.Connection):
    """A sqlite3 connection whose trace callback is the grader's, followed by the student's."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        # [grader's, student's]: the chain below holds this list, not the connection (no cycle)
        self._traces: list[Trace] = [None, None]
        # the arguments of the last set_authorizer (sqlite3 holds that callable too: no new cycle)
        self._authorizer: tuple | None = None

    def set_authorizer(self, *args, **kwargs) -> None:
        super().set_authorizer(*args, **kwargs)
        self._authorizer = (args, kwargs)

    def expire(self) -> None:
        """Make SQLite prepare every statement of this connection again before its next run,
        its authorizer asked again (sqlite3_set_authorizer expires them): setting the same
        authorizer again. A statement running now runs on. Nothing without an authorizer."""
        if self._authorizer is not None:
            args, kwargs = self._authorizer
            super().set_authorizer(*args, **kwargs)

    def watch(self, callback: Trace) -> None:
        """The grader's callback (None: none); the student's, if any, stays."""
        self._traces[0] = callback
        self._install()

    def set_trace_callback(self, trace_callback: Trace) -> None:
        """The student's callback, called after the grader's (None removes only the student's)."""
        self._traces[1] = trace_callback
        self._install()

    def _install(self) -> None:
        traces = self._traces
        if not any(traces):
            super().set_trace_callback(None)
            return

        def chain(sql: str) -> None:
            for trace in list(traces):
                if trace is not None:
                    trace(sql)

        super().set_trace_callback(chain)


def connect(path, busy_timeout_ms: int = store.BUSY_TIMEOUT_MS) -> WatchedConnection:
    """`lab.store.connect(path, busy_timeout_ms)`, as a WatchedConnection."""
    conn = sqlite3.connect(str(path), timeout=busy_timeout_ms / 1000, isolation_level=None,
                           check_same_thread=False, factory=WatchedConnection)
    conn.execute(f"PRAGMA busy_timeout = {int(busy_timeout_ms)}")
    conn.execute("PRAGMA journal_mode = DELETE")
    return conn
