"""Random timelines, played against the code under grade and against the contract's model.

A timeline is a list of `Step`s (plain data): jobs enqueued, claims by several workers, finishes
with current, stale and forged stamps, work_once with a send that succeeds or fails, operator
edits (requeue, quarantine by hand, a deadline moved earlier), on a logical clock that never runs
backwards and often lands exactly before, at or after a lease's end or a job's deadline.

`first_difference` plays a timeline on a fresh database and on `model.QueueModel` side by side
and stops at the first step where a return value, a row, or the connection's transaction state
differs. `shrink` makes a differing timeline minimal (fewer steps, then simpler values) while it
still differs. Everything is determined by the seed: the same seed gives the same timelines,
the same verdict and the same shrunk timeline.
"""

from __future__ import annotations

import dataclasses
import random
import sqlite3
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from lab import store
from lab.store import Claim

from grader.harness import watched

from .model import LEASED, PENDING, QUARANTINED, QueueModel

#: Worker names from a wide alphabet: case, SQL wildcards, quotes, spaces, non-ASCII, SQL text.
OWNERS = ("A", "B", "C", "a", "worker-1", "worker_1", "o'brien", 'say "hi"', "50%", "%", "_",
          "A ", " A", "Ａ", "名前", "Ünïcode", "NULL", "0", "1; DROP TABLE jobs; --", "x" * 64)
SEND_ERRORS = {"SendFailed": None, "ConnectionError": ConnectionError,
               "TimeoutError": TimeoutError}
FORGEABLE = ("id", "owner", "token", "attempt", "lease_until")


class SendFailed(Exception):
    """The grader's send failing, as a lost connection to the receiver would."""


SEND_ERRORS["SendFailed"] = SendFailed


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
    what: str  # returned | raised | sent | row | rows | transaction
    got: Any
    expected: Any
    job: int | None = None


# -- playing one step ---------------------------------------------------------------------------
class Clock:
    """work_once's clock: reads `now`; the send takes `send_ms` of it."""

    def __init__(self, now: int):
        self.now = now

    def __call__(self) -> int:
        return self.now


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
    clock = Clock(step.now)
    sent: list = []

    def send(claim):
        sent.append(claim)
        clock.now += step.send_ms
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
        return Outcome(raised=type(exc).__name__)


def stamps_after(step: Step, outcome: Outcome, stamps: list[Claim]) -> None:
    """Claims handed out become stamps later finishes may use (the model's, which are right)."""
    for value in ([outcome.returned] if step.op == "claim" else outcome.sent):
        if isinstance(value, Claim):
            stamps.append(value)


# -- the two sides ------------------------------------------------------------------------------
class Database:
    """The code under grade's side: a fresh database, the target's connection and an operator's."""

    def __init__(self, path: Path, module):
        self.module = module
        self.conn = watched.connect(path)  # as the other checks hand it to the target
        store.init_db(self.conn)
        self.operator = store.connect(path, busy_timeout_ms=1000)
        for conn in (self.conn, self.operator):  # no check here is about durability
            conn.execute("PRAGMA synchronous = OFF")

    def enqueue(self, qty, deadline, max_attempts):
        return store.enqueue(self.operator, qty, deadline, max_attempts)

    def requeue(self, job):
        store.requeue(self.operator, job)

    def set_row(self, job, **values):
        sets = ", ".join(f"{column} = ?" for column in values)
        self.operator.execute(f"UPDATE jobs SET {sets} WHERE id = ?", (*values.values(), job))

    def row(self, job):
        return store.get_job(self.operator, job)

    def count(self) -> int:
        return self.operator.execute("SELECT count(*) FROM jobs").fetchone()[0]

    def claim(self, owner, now, lease_ms):
        return self.module.claim(self.conn, owner, now, lease_ms)

    def finish(self, claim, now):
        return self.module.finish(self.conn, claim, now)

    def work_once(self, owner, send, clock, lease_ms):
        return self.module.work_once(self.conn, owner, send, clock, lease_ms)

    def close(self) -> None:
        for conn in (self.conn, self.operator):
            try:
                conn.close()
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


def compare(index: int, got: Outcome, expected: Outcome, db: Database,
            model: QueueModel) -> Difference | None:
    """The first thing that differs after step `index`, or None."""
    if got.raised != expected.raised:
        return Difference(index, "raised", got.raised, expected.raised)
    if expected.raised is None and not same(got.returned, expected.returned):
        return Difference(index, "returned", got.returned, expected.returned)
    if not same(got.sent, expected.sent):
        return Difference(index, "sent", got.sent, expected.sent)
    if db.conn.in_transaction:
        return Difference(index, "transaction", True, False)
    for job in sorted(model.rows):
        current, wanted = db.row(job), model.row(job)
        if current != wanted:
            return Difference(index, "row", current, wanted, job=job)
    if db.count() != len(model.rows):
        return Difference(index, "rows", db.count(), len(model.rows))
    return None


def first_difference(steps: list[Step], module, path: Path) -> Difference | None:
    """Play `steps` on a fresh database at `path` with `module` and on the model, side by side."""
    db, model = Database(path, module), QueueModel()
    stamps: list[Claim] = []
    try:
        for index, step in enumerate(steps):
            expected = play_step(step, model, model, stamps)
            got = play_step(step, db, db, stamps)
            difference = compare(index, got, expected, db, model)
            if difference is not None:
                return difference
            stamps_after(step, expected, stamps)
        return None
    finally:
        db.close()
