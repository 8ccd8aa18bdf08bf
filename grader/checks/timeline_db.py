"""Where a random timeline is played on the code's side: `Database`, a fresh database with the
code under grade's connection on it (in a `TargetProcess`, or `Direct`), named after its file,
and an operator's connection of the judge's own (the operator's actions, the rows, read in one
statement and not again while nothing can have changed them); `Elsewhere`, the other worker
acting inside a work_once's send, on a connection of its own in the same target process; and
`Direct`, a TargetProcess's calls on a module imported here, for the project's own tests of the
model (a check never uses it).

How a step is played and compared with the model is `timelines`', which uses these; nothing
here knows a step. May import: `lab`, `grader.harness.judge` (the target process's errors, the
judge's writes and waits, a watched connection) and `model` (the QueueModel a table agrees with).
Never `timelines`, which imports this module.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Callable

from lab import store

from grader.harness.judge import watched
from grader.harness.judge.invariants import busy_broke, send_broke
from grader.harness.judge.outcomes import judge_wait_ms, judge_write
from grader.harness.judge.scenario import insert_job
from grader.harness.judge.target_errors import TargetProcessError

from .model import QueueModel


#: Rows `Database.agrees` reads by id in one statement (SQLite before 3.32 allows 999 parameters).
IN_CHUNK = 500


class Direct:
    """The calls of a `TargetProcess` (open, execute, claim, finish, work_once, in_transaction,
    close_conn: by connection name) on an imported module, in this process. For the project's
    own tests of the model (against the reference, the alternatives, the mutants); a check never
    uses it: it drives the code under grade through its target process only."""

    def __init__(self, module):
        self.module = module
        self.conns: dict[str, sqlite3.Connection] = {}

    def open(self, name: str, path, busy_timeout_ms: int = store.BUSY_TIMEOUT_MS) -> None:
        old = self.conns.pop(name, None)
        if old is not None:
            old.close()
        self.conns[name] = watched.connect(path, busy_timeout_ms)  # as the target server does
        self.conns[name].execute("PRAGMA synchronous = OFF")  # as the judge's DbHost opens one

    def execute(self, name: str, sql: str, params: tuple = ()) -> None:
        self.conns[name].execute(sql, params)

    def claim(self, name, owner, now, lease_ms):
        return self.module.claim(self.conns[name], owner, now, lease_ms)

    def finish(self, name, claim, now):
        return self.module.finish(self.conns[name], claim, now)

    def work_once(self, name, owner, send, clock, lease_ms, *, clock_script=None):
        """`clock_script`, as TargetProcess takes it: here the clock itself is called."""
        return self.module.work_once(self.conns[name], owner, send, clock, lease_ms)

    def in_transaction(self, name: str) -> bool:
        return self.conns[name].in_transaction

    def close_conn(self, name: str) -> None:
        self.conns.pop(name).close()


def rule_broken(queue, name: str, function: str) -> tuple[str, dict] | None:
    """After a call of `function` on connection `name` of `queue` (a TargetProcess): the rule
    of every call it broke that is read on the judge's real connection, and its parameters: a
    send of a work_once that held a lock (invariants.send_broke), then the busy timeout left
    lowered (invariants.busy_broke), as the Lab's rules take them; None if it broke neither (or
    a `Direct` queue: not known)."""
    if function == "work_once":
        broke = send_broke(getattr(queue, "sends_held", None) or [])
        if broke is not None:
            return broke
    db = getattr(queue, "db", None)  # a TargetProcess's DbHost
    return busy_broke(function, db.busy_lowered(name) if db is not None else None)


class Database:
    """The code under grade's side: a fresh database, a connection of its own on it in `queue`
    (a TargetProcess or `Direct`), named after the database's file, and an operator's
    connection of the judge's own (the operator's actions, the rows)."""

    def __init__(self, path: Path, queue, ids: Callable[[int], int] | None = None,
                 other: bool = False):
        self.queue = queue
        self.ids, self.enqueued = ids, 0  # None: lab.store.enqueue numbers the jobs
        #: when the table last agreed with the model (`agrees`): the connections' changes then
        #: (`_marker`) and how far the model's `changes` had gone (their number, the last one)
        self._agreed: tuple | None = None
        # the timelines are played on one target process, on this thread: no lock is waited for
        self.operator = store.connect(path, busy_timeout_ms=judge_wait_ms(alone=True))
        self.operator.execute("PRAGMA synchronous = OFF")  # no check here is about durability
        # the operator's writes (enqueue, requeue, edits: about 1,000 short write transactions
        # a check) keep their rollback journal in memory: no journal file made and removed for
        # each. A connection's own setting: the code's connection keeps lab.store's DELETE, and
        # the file, its locks and what every connection reads are as before
        self.operator.execute("PRAGMA journal_mode = MEMORY")
        store.init_db(self.operator)
        # Named by its file: the same in every run of a check, whatever ran before it in the
        # same judge's lane (a counter would differ with --jobs).
        self.name = f"timeline-{Path(path).name}"
        self.path = path
        self._other: Elsewhere | None = None  # the other worker's connection, once used
        try:
            queue.open(self.name, path)
        except BaseException:
            self.operator.close()
            raise
        if other:  # opened with the database, as a worker starting with the queue would
            try:
                self.elsewhere().connect()
            except BaseException:
                self.close()
                raise

    def elsewhere(self) -> "Elsewhere":
        """The other worker, acting inside a work_once's send: claim and finish on a
        connection of its own to the same database (opened at its first use)."""
        if self._other is None:
            self._other = Elsewhere(self)
        return self._other

    def enqueue(self, qty, deadline, max_attempts):
        """The provided store's enqueue, or, in a world that numbers its jobs (`ids`), the
        same insert with the world's id for the job (as the Lab enqueues)."""
        self.enqueued += 1
        with judge_write():  # found locked: a lock the code under grade still holds
            if self.ids is None:
                return store.enqueue(self.operator, qty, deadline, max_attempts)
            return insert_job(self.operator, self.ids(self.enqueued), qty, deadline,
                              max_attempts)

    def insert(self, rows: list[dict]) -> list[int]:
        """Rows set at once (`QueueModel.insert`: all columns but the id, which the numbering
        gives, as `enqueue` numbers the next jobs), in one transaction of the operator's."""
        ids = self.ids or (lambda n: n)  # lab.store.enqueue's numbering on a fresh table: n
        jobs = [ids(self.enqueued + n) for n in range(1, len(rows) + 1)]
        self.enqueued += len(rows)
        with judge_write():  # found locked: a lock the code under grade still holds
            insert_rows(self.operator, jobs, rows)
        return jobs

    def requeue(self, job):
        with judge_write():
            store.requeue(self.operator, job)

    def set_row(self, job, **values):
        sets = ", ".join(f"{column} = ?" for column in values)
        with judge_write():
            self.operator.execute(f"UPDATE jobs SET {sets} WHERE id = ?",
                                  (*values.values(), job))

    def row(self, job):
        with judge_write(reading=True):
            return store.get_job(self.operator, job)

    def agrees(self, model: QueueModel) -> bool:
        """Whether the table holds exactly the model's rows (`QueueModel.table`). Since it last
        agreed, only the rows the model changed are read (`QueueModel.changes`: a table of
        thousands of rows costs a step what it changed), when the connections to it made
        exactly as many changes as that (SQLite's total_changes, a trigger's included: the
        operator's, the code's, the other worker's): each row the model changed and that now
        holds the model's values took one of them, so no other row can have changed. Otherwise
        (more changes: a row written twice, or to the same values, or one the model did not
        change; a connection whose changes are not known: `DbHost.changes`) the whole table is
        read in one statement."""
        marker = self._marker()
        moved = self._moved(marker, model)
        if moved is not None:
            if moved and self._rows_of(moved) != [model.values(job) for job in moved]:
                self._agreed = None
                return False
            agreed = True
        else:
            agreed = self._table() == model.table()
        self._agreed = (marker, len(model.changes), model.changes[-1:]) if agreed else None
        return agreed

    def _moved(self, marker: tuple | None, model: QueueModel) -> list[int] | None:
        """The jobs whose rows the model changed since the table last agreed with it, in the
        order of their ids, if the connections made exactly as many changes since; else None
        (the whole table is to be read)."""
        if marker is None or self._agreed is None:
            return None
        then, count, last = self._agreed
        changes = model.changes
        # the same model's history (or a copy of it, a Recorder's), gone on from there
        if len(changes) < count or changes[count - 1:count] != last:
            return None
        if [key for key, _ in marker] != [key for key, _ in then]:
            return None  # a connection opened or closed since: its counts start again
        made = [now - before for (_, now), (_, before) in zip(marker, then)]
        if any(n < 0 for n in made):
            return None
        before: dict[int, dict | None] = {}
        for _, job, row in changes[count:]:
            before.setdefault(job, row)
        moved = sorted(job for job, row in before.items() if model.rows.get(job) != row)
        return moved if sum(made) == len(moved) else None

    def _rows_of(self, jobs: list[int]) -> list[dict | None]:
        """The rows of `jobs` (in that order, each a tuple of `store.COLUMNS`, None for one not
        there), read IN_CHUNK at a time (below any SQLite's limit on a statement's
        parameters)."""
        found = []
        with judge_write(reading=True):
            for start in range(0, len(jobs), IN_CHUNK):
                chunk = jobs[start:start + IN_CHUNK]
                found += self.operator.execute(
                    f"SELECT {', '.join(store.COLUMNS)} FROM jobs"
                    f" WHERE id IN ({', '.join('?' * len(chunk))})", chunk).fetchall()
        by_id = {row[0]: row for row in found}
        return [by_id.get(job) for job in jobs]

    def _table(self) -> list[tuple]:
        """Every row as a tuple of `store.COLUMNS`, by id, read in one statement."""
        with judge_write(reading=True):
            return self.operator.execute(
                f"SELECT {', '.join(store.COLUMNS)} FROM jobs ORDER BY id").fetchall()

    def _marker(self) -> tuple | None:
        """How many rows each connection to the table has changed so far (None: not known),
        by connection: the operator's, the code's, the other worker's (while it is open: each
        time it opens, its count starts from 0 again)."""
        db = getattr(self.queue, "db", None)  # a TargetProcess's real connections
        names = [self.name] + ([self._other.name] if self._other and self._other.open else [])
        changes = [db.changes(name) if db is not None else None for name in names]
        if None in changes:
            return None
        opened = self._other.opened if self._other else 0
        return (("operator", self.operator.total_changes), ((self.name, 0), changes[0]),
                *(((name, opened), n) for name, n in zip(names[1:], changes[1:])))

    def rows(self) -> dict[int, dict]:
        """Every row by id, read in one statement: for each job what `row` gives (None for one
        not there), and as many as `count` says."""
        return {row[0]: dict(zip(store.COLUMNS, row)) for row in self._table()}

    def count(self) -> int:
        with judge_write(reading=True):
            return self.operator.execute("SELECT count(*) FROM jobs").fetchone()[0]

    def in_transaction(self) -> bool:
        """After a call: as the target process reported it with its reply (no round trip of its
        own), or asked."""
        after = getattr(self.queue, "in_transaction_after", None)
        return self.queue.in_transaction(self.name) if after is None else after

    def rule_broken(self, function: str) -> tuple[str, dict] | None:
        """After a call of `function`: `rule_broken(self.queue, ...)` on its connection."""
        return rule_broken(self.queue, self.name, function)

    def own_connections(self) -> list[str]:
        """After a call: the connections it opened of its own to the database, as the target
        process reported them with its reply (none for a `Direct` queue); taken, so that a
        later step that makes no call (or the next timeline) does not see them again."""
        own = list(getattr(self.queue, "own_connections", None) or [])
        if own:
            self.queue.own_connections = []
        return own

    def claim(self, owner, now, lease_ms):
        return self.queue.claim(self.name, owner, now, lease_ms)

    def finish(self, claim, now):
        return self.queue.finish(self.name, claim, now)

    def work_once(self, owner, send, clock, lease_ms):
        # `clock`: a timelines.Clock, which a target process reads itself (clock_script): no
        # round trip per reading
        return self.queue.work_once(self.name, owner, send, clock, lease_ms,
                                    clock_script=clock.script())

    def close(self) -> None:
        if self._other is not None:
            self._other.release()
        try:
            self.queue.close_conn(self.name)
        except (sqlite3.Error, TargetProcessError):  # a target process that is gone already
            pass
        try:
            self.operator.close()
        except sqlite3.Error:
            pass


def insert_rows(conn: sqlite3.Connection, jobs: list[int], rows: list[dict]) -> None:
    """Insert `rows` (all columns but the id) as jobs `jobs` on `conn` (which commits each
    statement on its own: lab.store's), in one transaction: committed, or rolled back if it
    raised."""
    columns = store.COLUMNS
    conn.execute("BEGIN IMMEDIATE")
    try:
        conn.executemany(f"INSERT INTO jobs({', '.join(columns)})"
                         f" VALUES ({', '.join('?' * len(columns))})",
                         [[job if column == "id" else row[column] for column in columns]
                          for job, row in zip(jobs, rows)])
        conn.execute("COMMIT")
    except BaseException:
        if conn.in_transaction:
            conn.execute("ROLLBACK")
        raise


class Elsewhere:
    """Another worker on the same database as a `Database`: its claims and finishes on a
    connection of its own (in the same `queue`: the same target process), with the store's
    rows and the operator's actions of that Database. Its connection waits for no lock: a
    lock another connection holds (the work_once whose send it acts in) cannot be let go of
    while it waits, the one thread that answers both being the judge's."""

    def __init__(self, db: Database):
        self.db, self.queue, self.name, self.open = db, db.queue, f"{db.name}-other", False
        self.opened = 0  # how many times its connection was opened

    def __getattr__(self, name: str):
        # the operator's actions and the rows (enqueue, requeue, set_row, row, rows, count,
        # agrees): the Database's
        return getattr(self.db, name)

    def rule_broken(self, function: str) -> tuple[str, dict] | None:
        """After a call of `function` on its own connection: `rule_broken` there."""
        return rule_broken(self.queue, self.name, function) if self.open else None

    def connect(self) -> str:
        """Its connection, opened as lab.store.connect opens one (if it is not open)."""
        if not self.open:
            self.queue.open(self.name, self.db.path, busy_timeout_ms=0)
            self.open = True
            self.opened += 1
        return self.name

    def claim(self, owner, now, lease_ms):
        return self.queue.claim(self.connect(), owner, now, lease_ms)

    def finish(self, claim, now):
        return self.queue.finish(self.connect(), claim, now)

    def in_transaction(self) -> bool:
        return self.open and self.queue.in_transaction(self.name)

    def own_connections(self) -> list[str]:
        return self.db.own_connections()

    def release(self) -> None:
        """Close its connection (a transaction it left open is rolled back: its lock must not
        hold up the work_once it acted inside); opened again at its next use."""
        if self.open:
            self.open = False
            try:
                self.queue.close_conn(self.name)
            except (sqlite3.Error, TargetProcessError):
                pass
