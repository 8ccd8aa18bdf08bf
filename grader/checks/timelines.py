"""Random timelines, played against the code under grade and against the contract's model.

A timeline is a list of `Step`s (plain data): jobs enqueued, claims by several workers, finishes
with current, stale and forged stamps, work_once with a send that succeeds or fails, operator
edits (requeue, quarantine by hand, a deadline moved earlier), on a logical clock that never runs
backwards and often lands exactly before, at or after a lease's end or a job's deadline.

`first_difference` plays a timeline on a fresh database and on `model.QueueModel` side by side
and stops at the first step where a return value, a row, or the connection's transaction state
differs. The code under grade is driven by connection name: through the check's
`TargetProcess` (the judge never imports the code under grade), or `Direct`, the same calls on
an imported module (the project's own tests prove the model against the reference with it).
Values compare as data (a `Foreign` is never a model value), exceptions by their type's name;
rows are read on the judge's own connection; jobs are numbered as the world numbers them
(`ids`), on both sides. `shrink` makes a differing timeline minimal (fewer steps, then simpler
values) while it still differs the same way (`how`). Everything is determined by the seed: the
same seed gives the same timelines, the same verdict and the same shrunk timeline.
"""

from __future__ import annotations

import builtins
import dataclasses
import sqlite3
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from lab import store
from lab.store import Claim

from grader.harness import target_client, watched
from grader.harness.scenario import insert_job, judge_wait_ms, judge_write
from grader.harness.target_client import RaisedInTarget, TargetProcessError

from .model import LEASED, PENDING, QUARANTINED, QueueModel, lesson_ids

#: Worker names from a wide alphabet: case, SQL wildcards, quotes, spaces, non-ASCII, SQL text.
OWNERS = ("A", "B", "C", "a", "worker-1", "worker_1", "o'brien", 'say "hi"', "50%", "%", "_",
          "A ", " A", "Ａ", "名前", "Ünïcode", "NULL", "0", "1; DROP TABLE jobs; --", "x" * 64)
FORGEABLE = ("id", "owner", "token", "attempt", "lease_until")


class SendFailed(target_client.SendFailed):
    """The grader's send failing, as a lost connection to the receiver would (in a target
    process, send raises the target's own SendFailed)."""


#: How a timeline's send fails, by name (generate draws these names). Each is a target_client
#: SendFailed: in a target process, send raises the target's own SendFailed, which for the last
#: two is also that builtin and named as it (code that catches ConnectionError catches it).
SEND_ERRORS = {"SendFailed": SendFailed,
               **{name: type(name, (SendFailed, getattr(builtins, name)),
                             {"__module__": __name__, "__doc__": f"send failing with a {name}."})
                  for name in ("ConnectionError", "TimeoutError")}}


@dataclass(frozen=True)
class Step:
    """One step of a timeline. `op` says which fields matter:
    enqueue(qty, deadline, max_attempts) · claim(owner, now, lease_ms) ·
    finish(ref, now, forge): the `ref`-th stamp handed out so far, one field changed by `forge` ·
    work_once(owner, now, lease_ms, send_ms, send_error) · requeue(job) · quarantine(job) ·
    move_deadline(job, deadline)."""

    op: str
    now: int = 0
    owner: str = ""
    lease_ms: int = 0
    qty: int = 0
    deadline: int = 0
    max_attempts: int = 3
    ref: int = 0
    forge: tuple = ()
    job: int = 0
    send_ms: int = 0
    send_error: str = ""


@dataclass
class Outcome:
    """What one step did: the value returned or the exception's type, what send was given."""

    returned: Any = None
    raised: str | None = None
    sent: list = field(default_factory=list)
    skipped: bool = False


@dataclass
class Difference:
    """The first step at which the code under grade and the model part."""

    step: int
    what: str  # returned | raised | sent | row | rows | transaction | own-connection
    got: Any
    expected: Any
    job: int | None = None


# -- playing one step ---------------------------------------------------------------------------
class Clock:
    """work_once's clock: reads `now`; each send takes `send_ms` of it (`sent`)."""

    def __init__(self, now: int, send_ms: int = 0):
        self.now, self.send_ms = now, send_ms

    def __call__(self) -> int:
        return self.now

    def sent(self) -> None:
        self.now += self.send_ms

    def script(self) -> tuple[int, int]:
        """(now, per send): what a target process needs to read this clock itself, as
        TargetProcess.work_once's `clock_script` (it is read there without a round trip)."""
        return self.now, self.send_ms


def stamp_for(step: Step, stamps: list[Claim]) -> Claim | None:
    """The stamp a finish step hands in: an earlier claim's, maybe with one field forged."""
    if step.ref >= len(stamps):
        return None
    stamp = stamps[step.ref]
    if step.forge:
        name, value = step.forge
        stamp = dataclasses.replace(stamp, **{name: value})
    return stamp


def play_step(step: Step, queue, operator, stamps: list[Claim],
              passthrough: tuple[type[BaseException], ...] = ()) -> Outcome:
    """Run `step` with `queue` (claim/finish/work_once) and `operator` (the store's actions).
    What the queue raises is the step's outcome, except `passthrough` exceptions (and those
    that are not an Exception, e.g. SystemExit), which propagate.

    Steps whose precondition does not hold any more (a stamp or job a shrink removed, a job
    that is not quarantined) are skipped, the same way on both sides."""
    if step.op == "enqueue":
        return Outcome(operator.enqueue(step.qty, step.deadline, step.max_attempts))
    if step.op in ("requeue", "quarantine", "move_deadline"):
        return _operator_step(step, operator)
    if step.op == "claim":
        return _call(lambda: queue.claim(step.owner, step.now, step.lease_ms), passthrough)
    if step.op == "finish":
        stamp = stamp_for(step, stamps)
        return Outcome(skipped=True) if stamp is None else _call(
            lambda: queue.finish(stamp, step.now), passthrough)
    return _work_once(step, queue, passthrough)


def _operator_step(step: Step, operator) -> Outcome:
    row = operator.row(step.job)
    if step.op == "requeue" and row and row["status"] == QUARANTINED:
        operator.requeue(step.job)
    elif step.op == "quarantine" and row and row["status"] in (PENDING, LEASED):
        operator.set_row(step.job, status=QUARANTINED)
    elif step.op == "move_deadline" and row and step.deadline < row["deadline"]:
        operator.set_row(step.job, deadline=step.deadline)
    else:
        return Outcome(skipped=True)
    return Outcome()


def _work_once(step: Step, queue, passthrough: tuple) -> Outcome:
    clock = Clock(step.now, step.send_ms)
    sent: list = []

    def send(claim):
        sent.append(claim)
        clock.sent()
        if step.send_error:
            raise SEND_ERRORS[step.send_error]("the receiver did not answer")

    outcome = _call(lambda: queue.work_once(step.owner, send, clock, step.lease_ms), passthrough)
    outcome.sent = sent
    return outcome


def _call(call: Callable[[], Any], passthrough: tuple) -> Outcome:
    try:
        return Outcome(call())
    except passthrough:
        raise
    except Exception as exc:  # noqa: BLE001 - the code under grade may raise anything
        return Outcome(raised=raised_name(exc))


def raised_name(exc: BaseException) -> str:
    """The name an outcome gives an exception: its type's (for one raised in a target process,
    the name of the type it had there)."""
    if isinstance(exc, RaisedInTarget):
        return exc.type.rsplit(".", 1)[-1]
    return type(exc).__name__


def stamps_after(step: Step, outcome: Outcome, stamps: list[Claim]) -> None:
    """Claims handed out become stamps later finishes may use (the model's, which are right)."""
    for value in ([outcome.returned] if step.op == "claim" else outcome.sent):
        if isinstance(value, Claim):
            stamps.append(value)


# -- the two sides ------------------------------------------------------------------------------
class Direct:
    """The calls of a `TargetProcess` (open, execute, claim, finish, work_once, in_transaction,
    close_conn: by connection name) on an imported module, in this process. For the project's
    own tests of the model (against the reference, the alternatives, the mutants); a check never
    uses it: it drives the code under grade through its target process only."""

    def __init__(self, module):
        self.module = module
        self.conns: dict[str, sqlite3.Connection] = {}

    def open(self, name: str, path, busy_timeout_ms: int = store.BUSY_TIMEOUT_MS,
             synchronous_off: bool = False) -> None:
        old = self.conns.pop(name, None)
        if old is not None:
            old.close()
        self.conns[name] = watched.connect(path, busy_timeout_ms)  # as the target server does
        if synchronous_off:
            self.conns[name].execute("PRAGMA synchronous = OFF")

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


class Database:
    """The code under grade's side: a fresh database, a connection of its own on it in `queue`
    (a TargetProcess or `Direct`), named after the database's file, and an operator's
    connection of the judge's own (the operator's actions, the rows)."""

    def __init__(self, path: Path, queue, ids: Callable[[int], int] | None = None):
        self.queue = queue
        self.ids, self.enqueued = ids, 0  # None: lab.store.enqueue numbers the jobs
        self._agreed: tuple | None = None  # (what changes moved, the model's table) when the
        # table last agreed with the model (`agrees`)
        # the timelines are played on one target process, on this thread: no lock is waited for
        self.operator = store.connect(path, busy_timeout_ms=judge_wait_ms(alone=True))
        self.operator.execute("PRAGMA synchronous = OFF")  # no check here is about durability
        store.init_db(self.operator)
        # Named by its file: the same in every run of a check, whatever ran before it in the
        # same judge's lane (a counter would differ with --jobs).
        self.name = f"timeline-{Path(path).name}"
        try:
            queue.open(self.name, path, synchronous_off=True)  # no check here is about durability
        except BaseException:
            self.operator.close()
            raise

    def enqueue(self, qty, deadline, max_attempts):
        """The provided store's enqueue, or, in a world that numbers its jobs (`ids`), the
        same insert with the world's id for the job (as the Lab enqueues)."""
        self.enqueued += 1
        with judge_write():  # found locked: a lock the code under grade still holds
            if self.ids is None:
                return store.enqueue(self.operator, qty, deadline, max_attempts)
            return insert_job(self.operator, self.ids(self.enqueued), qty, deadline,
                              max_attempts)

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
        """Whether the table holds exactly the model's rows (`QueueModel.table`). Not read again
        when nothing can have changed since it last agreed: no connection to it changed a row
        (the operator's, the code's: their total_changes), nor did the model."""
        wanted = model.table()
        marker = self._marker()
        if marker is not None and self._agreed == (marker, wanted):
            return True
        self._agreed = (marker, wanted) if self._table() == wanted else None
        return self._agreed is not None

    def _table(self) -> list[tuple]:
        """Every row as a tuple of `store.COLUMNS`, by id, read in one statement."""
        with judge_write(reading=True):
            return self.operator.execute(
                f"SELECT {', '.join(store.COLUMNS)} FROM jobs ORDER BY id").fetchall()

    def _marker(self) -> tuple | None:
        """What moves whenever a connection to the table changes it (None: not known)."""
        db = getattr(self.queue, "db", None)  # a TargetProcess's real connections
        changes = db.changes(self.name) if db is not None else None
        return None if changes is None else (self.operator.total_changes, changes)

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

    def work_once(self, owner, send, clock: Clock, lease_ms):
        # a target process reads this clock itself (clock_script): no round trip per reading
        return self.queue.work_once(self.name, owner, send, clock, lease_ms,
                                    clock_script=clock.script())

    def close(self) -> None:
        try:
            self.queue.close_conn(self.name)
        except (sqlite3.Error, TargetProcessError):  # a target process that is gone already
            pass
        try:
            self.operator.close()
        except sqlite3.Error:
            pass


def same(got: Any, expected: Any) -> bool:
    """Equal and of exactly the same types (a Claim's fields included): 1 is not True."""
    if type(got) is not type(expected):
        return False
    if isinstance(expected, Claim):
        return all(same(getattr(got, f.name), getattr(expected, f.name))
                   for f in dataclasses.fields(Claim))
    if isinstance(expected, list):
        return len(got) == len(expected) and all(map(same, got, expected))
    return got == expected


def compare(index: int, step: Step, got: Outcome, expected: Outcome, db,
            model: QueueModel) -> Difference | None:
    """The first thing that differs after step `index` (`db`: the rows, and the transaction
    state of the code under grade's connection), or None."""
    if got.raised != expected.raised:
        return Difference(index, "raised", got.raised, expected.raised)
    if expected.raised is None and not same(got.returned, expected.returned):
        return Difference(index, "returned", got.returned, expected.returned)
    if not same(got.sent, expected.sent):
        return Difference(index, "sent", got.sent, expected.sent)
    # A call that opened a connection of its own to the database (the target process saw
    # it): whatever else it did, it broke the contract.
    own = db.own_connections() if step.op in ("claim", "finish", "work_once") else []
    if own and not got.skipped:
        return Difference(index, "own-connection", own, [])
    # Only a call of the code under grade can leave its connection in a transaction (the
    # operator's steps run on a connection of the judge's): asked after those alone.
    if step.op in ("claim", "finish", "work_once") and not got.skipped and db.in_transaction():
        return Difference(index, "transaction", True, False)
    # A Database reads the whole table at once (and, where it agrees, no more); the Lab's
    # operator (the replay) row by row.
    if isinstance(db, Database) and db.agrees(model):
        return None
    table = db.rows() if isinstance(db, Database) else None
    for job in sorted(model.rows):
        current = table.get(job) if table is not None else db.row(job)
        wanted = model.row(job)
        if current != wanted:
            return Difference(index, "row", current, wanted, job=job)
    count = len(table) if table is not None else db.count()
    if count != len(model.rows):
        return Difference(index, "rows", count, len(model.rows))
    return None


def how(steps: list[Step], difference: Difference | None) -> tuple | None:
    """How a timeline differs from the model, for a shrink to keep: the step's function (or
    the operator's action) where they part, what differs there and, for an exception, which
    one came back (None: it does not differ)."""
    if difference is None:
        return None
    raised = difference.got if difference.what == "raised" else None
    return steps[difference.step].op, difference.what, raised


def first_difference(steps: list[Step], queue, path: Path,
                     ids: Callable[[int], int] | None = None) -> Difference | None:
    """Play `steps` on a fresh database at `path` through `queue` (a TargetProcess, or `Direct`
    over a module) and on the model, side by side; `ids`: how the world numbers the jobs (None:
    as lab.store.enqueue does). A TargetProcessError (the target process ended, hung, broke the
    protocol) is no step's outcome: it propagates."""
    db, model = Database(path, queue, ids), QueueModel(ids or lesson_ids)
    stamps: list[Claim] = []
    try:
        for index, step in enumerate(steps):
            expected = play_step(step, model, model, stamps)
            try:
                got = play_step(step, db, db, stamps, passthrough=(TargetProcessError,))
                difference = compare(index, step, got, expected, db, model)
            except TargetProcessError as exc:  # which step it was, for the report
                exc.timeline_step = (index, step, list(stamps))
                raise
            if difference is not None:
                return difference
            stamps_after(step, expected, stamps)
        return None
    finally:
        db.close()
