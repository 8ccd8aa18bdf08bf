"""Random timelines, played against the code under grade and against the contract's model.

A timeline is a list of `Step`s (plain data): jobs enqueued, claims by several workers, finishes
with current, stale and forged stamps, work_once with a send that succeeds or fails, operator
edits (requeue, quarantine by hand, a deadline moved earlier), on a logical clock that never runs
backwards and often lands exactly before, at or after a lease's end or a job's deadline.

Another worker may act while a work_once waits inside its send: the steps marked `inside` right
after a work_once step are played from inside its send (its first call), by another worker on a
connection of its own (its claims and finishes) and by the operator, on the same logical clock;
the send returns once they are done (`send_duration`). That is the lesson's late courier: A's
send returns after B re-claimed, finished or the operator moved the job on, and A's finish must
not land.

`first_difference` plays a timeline on a fresh database and on `model.QueueModel` side by side
and stops at the first step where a return value, a row, or the connection's transaction state
differs (a step inside a send is compared when it returns, inside that send). The code under
grade is driven by connection name: through the check's `TargetProcess` (the judge never imports
the code under grade), or `timeline_db.Direct`, the same calls on an imported module (the
project's own tests prove the model against the reference with it). The database it is played on
(`timeline_db.Database`, its other worker `Elsewhere`) is timeline_db's.
Values compare as data (a `Foreign` is never a model value), exceptions by their type's name;
rows are read on the judge's own connection; jobs are numbered as the world numbers them
(`ids`), on both sides. `shrink` makes a differing timeline minimal (fewer steps, then simpler
values) while it still differs the same way (`how`). Everything is determined by the seed: the
same seed gives the same timelines, the same verdict and the same shrunk timeline.
"""

from __future__ import annotations

import builtins
import copy
import dataclasses
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from lab.store import Claim

from grader.harness.judge import target_errors
from grader.harness.judge.outcomes import WriteLocked
from grader.harness.judge.target_errors import TargetProcessError
from grader.harness.wire.values import RaisedInTarget

from .model import LEASED, PENDING, QUARANTINED, QueueModel, lesson_ids
from .timeline_db import Database, Elsewhere

#: Worker names from a wide alphabet: case, SQL wildcards (LIKE's and GLOB's: a name compared as
#: a pattern matches others, or not itself), quotes (both kinds in one name, with a backslash: a
#: name put into SQL text by repr() or by hand is stored otherwise, or breaks the statement),
#: spaces, non-ASCII, a NUL (a str may hold one: a name put into SQL text breaks the statement,
#: a bound one is stored whole), SQL text, a long one (past 64 characters: a name cut to a
#: column width is another name) and the empty name (a string like any other: the contract
#: grades every str owner). Replaced in place, never appended: generate draws by index.
OWNERS = ("A", "B", "C", "a", "worker-1", "worker_1", "o'brien", 'say "hi", it\'s C:\\new',
          "50%", "%", "_", "A ", " A", "", "名\x00前", "Ünï[c]*?", "NULL", "0",
          "1; DROP TABLE jobs; --", "x" * 100)
FORGEABLE = ("id", "owner", "token", "attempt", "lease_until")


class SendFailed(target_errors.SendFailed):
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
class Rows:
    """A run of `count` jobs a `bulk` step sets at once, in the order of their ids: the k-th
    (from 0) has token `token + k`, the other columns as given (a row's own history: a queue
    that ran for years)."""

    count: int
    status: str
    owner: str | None
    lease_until: int | None
    token: int
    attempts: int
    max_attempts: int
    deadline: int

    def moved(self, delta: int) -> "Rows":
        """These rows with their instants `delta` ms later (earlier when negative): a deadline of
        0 (the epoch) stays 0, as a step's does."""
        return dataclasses.replace(
            self, lease_until=None if self.lease_until is None else self.lease_until + delta,
            deadline=self.deadline + delta if self.deadline != 0 else 0)

    def values(self, qty: int) -> list[dict]:
        """The rows' columns but their ids (`QueueModel.insert`), each of quantity `qty`."""
        return [{"qty": qty, "status": self.status, "owner": self.owner,
                 "lease_until": self.lease_until, "token": self.token + k,
                 "attempts": self.attempts, "max_attempts": self.max_attempts,
                 "deadline": self.deadline, "finished_at": None} for k in range(self.count)]


@dataclass(frozen=True)
class Step:
    """One step of a timeline. `op` says which fields matter:
    enqueue(qty, deadline, max_attempts) · claim(owner, now, lease_ms) ·
    finish(ref, now, forge): the `ref`-th stamp handed out so far, one field changed by `forge` ·
    work_once(owner, now, lease_ms, send_ms, send_error) · requeue(job) · quarantine(job) ·
    move_deadline(job, deadline) · bulk(qty, rows): the runs of jobs `rows` (`Rows`), each of
    quantity `qty`, set at once by the operator (the queue at the domain's size, thousands of
    jobs: one step, one line of the timeline, however many rows). `inside`: played inside the
    send of the work_once step that heads its run of inside steps (another worker, or the
    operator, acting while that send waits; see `group`); with no work_once heading it, an
    ordinary step."""

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
    inside: bool = False
    rows: tuple = ()

    def bulk_rows(self) -> list[dict]:
        """A bulk step's rows, in the order of their ids (their columns but the id)."""
        return [row for run in self.rows for row in run.values(self.qty)]


@dataclass
class Outcome:
    """What one step did: the value returned or the exception's type, what send was given;
    for a work_once, what each step played inside its send did (`inside`, in order)."""

    returned: Any = None
    raised: str | None = None
    sent: list = field(default_factory=list)
    skipped: bool = False
    inside: list = field(default_factory=list)
    #: an operator's step inside a send found the database locked (the error): the code held
    #: a lock across send (outcomes.WriteLocked)
    locked: str | None = None


@dataclass
class Difference:
    """The first step at which the code under grade and the model part."""

    step: int
    what: str  # returned | raised | sent | row | rows | transaction | rule
    #            | own-connection | locked
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


def group(steps: list[Step], index: int) -> list[Step]:
    """The steps played inside the send of the work_once at `index`: the run of `inside` steps
    right after it (none when the step is not a work_once; a work_once ends a run)."""
    if steps[index].op != "work_once":
        return []
    end = index + 1
    while end < len(steps) and steps[end].inside and steps[end].op != "work_once":
        end += 1
    return steps[index + 1:end]


def played_with(steps: list[Step], index: int) -> int:
    """The index of the last step played with step `index`: its own, or the last inside its
    send (a timeline that differs at `index` is cut after it: what comes later plays no
    part)."""
    return index + len(group(steps, index))


def groups(steps: list[Step]):
    """(index, step, inside) for each step played on its own, with the steps played inside its
    send (`group`): the timeline as it is played."""
    index = 0
    while index < len(steps):
        inside = group(steps, index)
        yield index, steps[index], inside
        index += 1 + len(inside)


def send_duration(step: Step, inside: list[Step] = ()) -> int:
    """How long a work_once's send takes: its send_ms, and at least until the last step inside
    it (the send returns once the other worker's steps are done)."""
    return max([step.send_ms] + [sub.now - step.now for sub in inside])


def play_step(step: Step, queue, operator, stamps: list[Claim],
              passthrough: tuple[type[BaseException], ...] = (), inside: list[Step] = (),
              watch=None) -> Outcome:
    """Run `step` with `queue` (claim/finish/work_once) and `operator` (the store's actions).
    What the queue raises is the step's outcome, except `passthrough` exceptions (and those
    that are not an Exception, e.g. SystemExit), which propagate. A work_once plays `inside`
    from inside its first send (`watch`, if given, is told: `Watch`).

    Steps whose precondition does not hold any more (a stamp or job a shrink removed, a job
    that is not quarantined) are skipped, the same way on both sides."""
    if step.op == "enqueue":
        return Outcome(operator.enqueue(step.qty, step.deadline, step.max_attempts))
    if step.op == "bulk":  # the jobs it numbered: the first and the last
        jobs = operator.insert(step.bulk_rows())
        return Outcome([jobs[0], jobs[-1]] if jobs else [])
    if step.op in ("requeue", "quarantine", "move_deadline"):
        return _operator_step(step, operator)
    if step.op == "claim":
        return _call(lambda: queue.claim(step.owner, step.now, step.lease_ms), passthrough)
    if step.op == "finish":
        stamp = stamp_for(step, stamps)
        return Outcome(skipped=True) if stamp is None else _call(
            lambda: queue.finish(stamp, step.now), passthrough)
    return _work_once(step, queue, operator, stamps, passthrough, inside, watch)


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


class Watch:
    """What a work_once with steps inside its send tells whoever plays it (`play_step`'s
    `watch`): where those steps start (`at_send`: inside its first send, given what it was
    given; `at_return`: after it returned, send never called), each step before and after it
    is played; `stopped` ends the steps inside (a difference was found)."""

    stopped = False

    def at_send(self, sent: list) -> None:
        pass

    def at_return(self, outcome: Outcome) -> None:
        pass

    def before(self, number: int, step: Step, stamps: list[Claim]) -> None:
        pass

    def after(self, number: int, step: Step, outcome: Outcome) -> None:
        pass


def _work_once(step: Step, queue, operator, stamps: list[Claim], passthrough: tuple,
               inside: list[Step] = (), watch: Watch | None = None) -> Outcome:
    clock = Clock(step.now, send_duration(step, inside))
    watch = watch or Watch()
    sent: list = []
    played: list[Outcome] = []
    judge: list[BaseException] = []  # what the steps inside raised of the judge's own

    def meanwhile() -> None:
        """The steps inside: another worker on a connection of its own (`elsewhere`), the
        operator; the stamps they hand in are those handed out so far, what send was given
        included."""
        other = queue.elsewhere() if hasattr(queue, "elsewhere") else queue
        known = list(stamps) + [c for c in sent[:1] if isinstance(c, Claim)]
        for number, sub in enumerate(inside):
            if watch.stopped:
                return
            watch.before(number, sub, known)
            try:
                outcome = play_step(sub, other, operator, known, passthrough)
            except WriteLocked as locked:  # a lock the work_once holds across its send
                outcome = Outcome(locked=locked.error)
            stamps_after(sub, outcome, known)
            played.append(outcome)
            watch.after(number, sub, outcome)

    def send(claim):
        sent.append(claim)
        if inside and len(sent) == 1:
            try:
                watch.at_send(sent)
                meanwhile()
            except BaseException as exc:  # the judge's: never taken for what work_once raised
                judge.append(exc)
                raise
        clock.sent()
        if step.send_error:
            raise SEND_ERRORS[step.send_error]("the receiver did not answer")

    outcome = _call(lambda: queue.work_once(step.owner, send, clock, step.lease_ms), passthrough)
    if judge:
        raise judge[0]
    outcome.sent = sent
    if inside and not sent:  # send never called: the others act all the same, afterwards
        watch.at_return(outcome)
        meanwhile()
    outcome.inside = played
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


def stamps_after(step: Step, outcome: Outcome, stamps: list[Claim],
                 inside: list[Step] = ()) -> None:
    """Claims handed out become stamps later finishes may use (the model's, which are right):
    a claim's, what a work_once's send was given, then the claims made inside that send."""
    values = [outcome.returned] if step.op == "claim" else list(outcome.sent)
    values += [o.returned for sub, o in zip(inside, outcome.inside) if sub.op == "claim"]
    for value in values:
        if isinstance(value, Claim):
            stamps.append(value)


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
    if got.locked is not None:
        return Difference(index, "locked", got.locked, None)
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
    # As work_once calls send, its connection holds no lock: no transaction open, no statement
    # of the code's running; and every call leaves the busy timeout it was handed
    # (grader.harness.judge.invariants; read on the judge's real connection). A statement
    # still running after a call is met by the operator's next write, which finds the
    # database locked (judge_write), as before this rule.
    if step.op in ("claim", "finish", "work_once") and not got.skipped \
            and hasattr(db, "rule_broken"):
        broke = db.rule_broken(step.op)  # (the rule, its parameters)
        if broke is not None:
            return Difference(index, "rule", broke, None)
    # A Database reads the whole table at once (and, where it agrees, no more); the Lab's
    # operator (the replay) row by row.
    whole = isinstance(db, (Database, Elsewhere))
    if whole and db.agrees(model):
        return None
    table = db.rows() if whole else None
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
                     ids: Callable[[int], int] | None = None,
                     playing: Callable[[int], None] | None = None) -> Difference | None:
    """Play `steps` on a fresh database at `path` through `queue` (a TargetProcess, or `Direct`
    over a module) and on the model, side by side; `ids`: how the world numbers the jobs (None:
    as lab.store.enqueue does); `playing(n)` is told before the n-th step (1-based: what a
    timeout then was during). A TargetProcessError (the target process ended, hung, broke the
    protocol) is no step's outcome: it propagates."""
    # The other worker connects with the database, before the code under grade ran anything
    # on it: what the code does to the file later (a journal mode it switches to) meets a
    # worker already there, as it would in a real deployment.
    db = Database(path, queue, ids, other=any(step.inside for step in steps))
    model = QueueModel(ids or lesson_ids)
    stamps: list[Claim] = []
    try:
        for index, step, inside in groups(steps):
            if playing is not None:
                playing(index + 1)
            recorder = Recorder(model) if inside else None
            expected = play_step(step, model, model, stamps, inside=inside, watch=recorder)
            checker = Checker(index, step, expected, recorder, db) if inside else None
            try:
                got = play_step(step, db, db, stamps, passthrough=(TargetProcessError,),
                                inside=inside, watch=checker)
                difference = ((checker and checker.difference)
                              or compare(index, step, got, expected, db, model))
            except TargetProcessError as exc:  # which step it was, for the report
                exc.timeline_step = (index, step, list(stamps))
                raise
            if difference is not None:
                return difference
            stamps_after(step, expected, stamps, inside)
        return None
    finally:
        db.close()


class Recorder(Watch):
    """The model's side of a work_once with steps inside its send: the model as it stands
    where those steps start and after each of them (`at`), to compare the code's with at the
    same points; `start`: where they started ("send", or "return": send never called)."""

    def __init__(self, model: QueueModel):
        self.model, self.at, self.start = model, [], None

    def _keep(self) -> None:
        self.at.append(copy.deepcopy(self.model))

    def at_send(self, sent: list) -> None:
        self.start = "send"
        self._keep()

    def at_return(self, outcome: Outcome) -> None:
        self.start = "return"
        self._keep()

    def after(self, number: int, step: Step, outcome: Outcome) -> None:
        self._keep()


class Checker(Watch):
    """The code's side of a work_once with steps inside its send, compared with the model's
    (`expected`, `recorder`) as it goes: what send was given as it is called; each step
    inside as it returns (its value, what its connection holds open, every row), at its own
    index. The first difference stops the steps inside (`difference`); the other worker's
    connection is then let go of, so that a transaction it left open does not hold up the
    finish (which no longer matters). `found(difference, ...)`: told of it (the replay
    explains it at once)."""

    def __init__(self, index: int, step: Step, expected: Outcome, recorder: Recorder, db,
                 found=None):
        self.index, self.step, self.expected, self.recorder = index, step, expected, recorder
        self.db, self.found = db, found
        self.difference: Difference | None = None

    @property
    def stopped(self) -> bool:
        return self.difference is not None

    def _stop(self, difference: Difference | None, *context) -> None:
        if difference is None:
            return
        self.difference = difference
        other = self.db.elsewhere() if hasattr(self.db, "elsewhere") else None
        if hasattr(other, "release") and other.in_transaction():
            other.release()
        if self.found is not None:
            self.found(difference, *context)

    def at_send(self, sent: list) -> None:
        if self.recorder.start != "send" or not same(sent[:1], self.expected.sent[:1]):
            self._stop(Difference(self.index, "sent", list(sent), self.expected.sent),
                       "send")

    def at_return(self, outcome: Outcome) -> None:
        if self.recorder.start != "return":
            self._stop(Difference(self.index, "sent", outcome.sent, self.expected.sent),
                       "return", outcome)
        else:
            self._stop(compare(self.index, self.step, outcome, self.expected, self.db,
                               self.recorder.at[0]), "return", outcome)

    def after(self, number: int, step: Step, outcome: Outcome) -> None:
        other = self.db.elsewhere() if hasattr(self.db, "elsewhere") else self.db
        expected = self.expected.inside[number]
        self._stop(compare(self.index + 1 + number, step, outcome, expected, other,
                           self.recorder.at[number + 1]), "inside", step, outcome, expected,
                   self.recorder.at[number + 1])
