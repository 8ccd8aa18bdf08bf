"""Random timelines against the contract's model: the bugs no hand-picked scenario happens to show.

Many short random timelines (grader.checks.generate) are played against the code under grade (in
the check's target process, through `lab.target`, each timeline on a fresh database and a fresh
connection there) and against `model.QueueModel`; after every step the return value (its exact
type included), what send was given, every row (read on the judge's own connection) and the
connection's transaction state must be what the model says. The first timeline that differs
is shrunk to a minimal one that differs in the same way (grader.checks.shrink) and played once
more through the Lab, so the failure reads like every other: what was done, what came back vs
what was expected, the row current vs expected. What is shown differed in that replay (else the
timeline as drawn is shown). The seed is printed; `python -m grader --replay SEED -k
random-timelines` plays the same timelines.

After the 100 timelines come 14 late ones (generate.late): in each, another worker, or the
operator, acts from inside a work_once's send (re-claims the job once its lease ran out, finishes
it, takes it back and claims it again under the same name, moves its deadline), played on a
connection of its own in the same target process (timeline_db.Elsewhere); a work_once whose late
finish lands on the new holder's row differs there, and is shrunk to the fewest such steps.

Last comes a timeline at the domain's size (generate.scale): thousands of jobs set at once by the
operator, in one step that is one line of the timeline (held on valid leases with tokens past
2**31 and attempts past 256, due at once, free with counters at a 32-bit integer's edge), then
ordinary steps over them. It is compared as every timeline is, but only the rows the model
changed are read after a step (timeline_db.Database.agrees), so thousands of rows cost a step
what it changed.

The timelines are the same in every grade: drawn from the lesson's seed (so the bugs they catch
are caught for every student: a grade is never a lottery over which timelines a seed drew),
played in the world's values (its t0, quantities and job ids; the model numbers the jobs as the
world does). Only the shrunk failing timeline is ever shown, so their answers cannot be learned
from the reports.
"""

from __future__ import annotations

import dataclasses
import itertools
import shutil
import tempfile
from pathlib import Path

from grader.checkdef import check
from grader.harness.judge.outcomes import (CheckFailed, TargetRaised, error_line, judge_write,
                                           lost_target, show, stamp)
from grader.harness.judge.scenario import Lab
from grader.harness.judge.target_errors import (FunctionHung, ProtocolError, TargetEnded,
                                                TargetProcessError, TargetTimeout)
from grader.harness.judge.world import LESSON_SEED
from grader.results import Failure, Outcome as Verdict

from . import generate
from .model import QueueModel, lesson_ids
from .shrink import Found, Plain, shrink
from .timeline_db import insert_rows, rule_broken
from .timelines import (Checker, Difference, Outcome, Recorder, Step, compare,
                        first_difference, groups, how, play_step, send_duration, stamp_for,
                        stamps_after)

TIMELINES = 100  # about 1 s for a correct claim (about 1,300 round trips to its process)
#: Then this many late timelines (generate.late: another worker acts inside a work_once's send),
#: numbered after the others (100, 101, ...): every one of generate.SITUATIONS twice.
LATE = 14
#: Then this many timelines at the domain's size (generate.scale), numbered after the late ones.
SCALE = 1
#: All of them, in the order they are played.
ALL = TIMELINES + LATE + SCALE
#: The timelines run in this many parts, each with a target process of its own (at once, on
#: several cores): the result is the first failing part's, which holds the first failing timeline.
PARTS = 4


#: Each part's wall-clock safety net. A part takes about 0.3-0.8 s on a quiet 2-core machine (the
#: last holds the late timelines and the one at the domain's size); 30 s leaves room for a machine
#: loaded 30 times over (a CI grading beside other work timed a correct program out at 20 s).
#: A function that hangs from its first call is stopped at once (the preflight saw it hang).
TIMEOUT = 30.0
#: The longest one call of a timeline may run: a call that hangs only in some situation met on
#: a timeline is stopped after it, at its step, and not after the part's whole TIMEOUT (the
#: longest call of a correct program, a claim over the thousands of rows of the timeline at the
#: domain's size, takes milliseconds; the timelines' connections never wait for a lock).
CALL_TIMEOUT = 8.0


@check("random-timelines", points=10, timeout=TIMEOUT, parts=PARTS, call_timeout=CALL_TIMEOUT,
       oracle="grader/checks/model.py: the contract as plain Python, proven against the reference")
def test_random_timelines(lab, part):
    """Random timelines of enqueues, claims, finishes, work_once and operator edits: every
    return value and every row as the contract's model says (`part`: which of the timelines)."""
    # In the check's own folder (opened by the judge: grader.harness.judge.dbhost)
    scratch = Path(tempfile.mkdtemp(prefix=lab.world.label("scratch", "timelines") + "-",
                                    dir=lab.dir))
    index = part.of(ALL).start
    try:
        for index in part.of(ALL):
            ids = timeline_ids(lab.world, index)  # the model numbers the jobs as the world does
            steps = world_timeline(lab, index)
            found = first_difference(steps, lab.target, scratch / lab.world.file(str(index)),
                                     ids, playing(lab, index))
            if found is not None:
                small = steps  # a run whose failure is not shown (lab.detailed): as drawn
                if lab.detailed:
                    # each candidate on a file of its own: what the code keeps per database
                    # (a cache keyed by its file) never carries from one candidate to the next
                    paths = (scratch / lab.world.file(f"shrink-{n}") for n in itertools.count())
                    small = shrink(steps, lambda s: _how(s, lab.target, next(paths), ids,
                                                         playing(lab, index)),
                                   want=Found(how(steps, found), found.step),
                                   plain=plain_values(lab.world, ids))
                show_failing(lab, small, steps, index)
    except TargetProcessError as exc:  # not in a call through the Lab (those are its failures)
        _target_failed(lab, exc, index)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def timeline_ids(world, index: int):
    """How this world numbers the jobs of the `index`-th timeline: the timeline numbers them
    (mostly 1, 2, 3...; some with gaps, across 2**31 or past 2**40: generate.numbering) and the
    world gives the lesson's job of that id its own id (World.job_id)."""
    lesson = generate.numbering(LESSON_SEED, index)
    if lesson is lesson_ids:
        return world.job_id
    return lambda n: world.job_id(lesson(n))


def world_timeline(lab: Lab, index: int) -> list[Step]:
    """The `index`-th timeline as this world plays it: the same timelines in every grade (drawn
    from the lesson's seed, so a bug they catch is caught for every student, whatever seed a
    grade draws), in the world's values: moved to start at its t0, its quantities, its job
    ids (so the report's numbers are this world's, and the model's ids the database's)."""
    world = lab.world
    drawn = (generate.timeline(LESSON_SEED, index) if index < TIMELINES
             else generate.late(LESSON_SEED, index - TIMELINES) if index < TIMELINES + LATE
             else generate.scale(LESSON_SEED, index - TIMELINES - LATE))
    return generate.in_world(drawn, world.t0, world.qty, timeline_ids(world, index))


def plain_values(world, ids=None) -> Plain:
    """The plain values a shrink moves towards, in `world`: its quantity for 1, its lease,
    its start, a deadline as far away as its checks' (`far`), the timeline's job ids (`ids`,
    as timeline_ids gives them; the world's own by default)."""
    return Plain(qty=world.qty(1), lease_ms=world.lease_ms, t0=world.t0,
                 far=world.far - world.t0, ids=ids or world.job_id)


def playing(lab: Lab, index: int):
    """What `first_difference` tells before each step of the `index`-th timeline: the step a
    timeout is during, with how much the code printed before it (Lab.report_playing; the
    timelines call the target directly, not through the Lab's calls that say so)."""
    return lambda step: lab.report_playing("timeline.random.played", seed=lab.seed,
                                           index=index, step=step)


def _how(steps: list[Step], queue, path: Path, ids, playing=None) -> Found | None:
    """How and where `steps` differs, replayed on a fresh database at `path` (then removed)."""
    try:
        found = first_difference(steps, queue, path, ids, playing)
        return None if found is None else Found(how(steps, found), found.step)
    finally:
        for suffix in ("", "-journal"):
            Path(f"{path}{suffix}").unlink(missing_ok=True)


def show_failing(lab: Lab, small: list[Step], steps: list[Step], index: int) -> None:
    """Fail with the shrunk timeline, played once more through the Lab; if it does not differ
    there, with the timeline as drawn (on a fresh table): what a report shows is always a
    difference seen in that very replay, never one only the shrink saw. Only if the timeline
    as drawn does not differ either (the code does not answer the same calls the same way
    twice) is the failure that, with the steps as they were played."""
    mark = len(lab.timeline)
    alone = passes_alone(lab, small, index)
    if small != steps:
        replay(lab, small, index, shrunk=True, alone=alone)  # fails the check if it differs
        _rule_broken(lab)
        _start_over(lab, mark)
    replay(lab, steps, index, shrunk=False, alone=alone and small == steps)
    _rule_broken(lab)
    lab.fail("timeline-unreproduced", seed=lab.seed, index=index)


def _rule_broken(lab: Lab) -> None:
    """A replay whose steps did not differ, but one of whose calls broke a rule of every call
    (grader.harness.judge.invariants: the clock read while send still ran, a statement left
    running...): that rule is the failure, at that call, rather than a timeline that seemed not
    to reproduce (the fast play reads the clock on the target's side, where a reading taken
    during send cannot wait for it to return)."""
    broken = lab.broken_rule()
    if broken is not None:
        raise CheckFailed(broken)


def passes_alone(lab: Lab, steps: list[Step], index: int) -> bool:
    """Whether `steps` (a timeline that differs in the check's target process, after the
    timelines played there before it) shows no difference when played alone: in a fresh target
    process, on a fresh database. Then it fails only because of what the earlier timelines
    left in the code's module state (a global, a cache, a counter kept between calls), and the
    report says so (`timeline.random.carried-over`) instead of showing it as if it failed
    alone. False when it differs there too, or the fresh process cannot say (it ended, hung,
    broke the protocol: the replay in the check's own process tells its story)."""
    folder = Path(tempfile.mkdtemp(prefix=lab.world.label("scratch", "alone") + "-",
                                   dir=lab.dir))
    try:
        fresh = lab.fresh_target()
    except TargetProcessError:
        shutil.rmtree(folder, ignore_errors=True)
        return False
    try:
        return first_difference(steps, fresh, folder / lab.world.file(f"alone-{index}"),
                                timeline_ids(lab.world, index)) is None
    except TargetProcessError:
        return False
    finally:
        fresh.close()
        shutil.rmtree(folder, ignore_errors=True)


def _start_over(lab: Lab, mark: int) -> None:
    """The Lab's table empty and its timeline as at `mark`, for another replay. (A replay that
    did not differ left no transaction open on the Lab's connection: that would have
    differed.)"""
    del lab.timeline[mark:]
    with judge_write():  # found locked: a lock the code under grade still holds
        lab.observer.execute("DELETE FROM jobs")


def _target_failed(lab: Lab, exc: TargetProcessError, index: int) -> None:
    """The target process ended, hung or broke the protocol while a random timeline ran on it
    (outside the Lab's calls): the same failure as in a Lab call, at the step being played."""
    if isinstance(exc, FunctionHung):  # the grade saw it hang: not called, not waited for
        raise CheckFailed(lab.not_graded(exc.function, None))  # (the timeline is not shown)
    if not isinstance(exc, (TargetEnded, TargetTimeout, ProtocolError)):
        raise exc  # the proxy closed or a request refused: the judge's own bug
    event, played = None, getattr(exc, "timeline_step", None)
    if played is not None:  # else: in the replay's in_transaction (the Lab's timeline says)
        number, step, stamps = played
        lab.note("timeline.random.played", seed=lab.seed, index=index, step=number + 1)
        event = _event(step, stamps)
        lab.timeline.append(event)
        if isinstance(exc, TargetTimeout):  # a call past CALL_TIMEOUT: told as the part's safety
            # net tells a timeout (the timeline's step, what the code had printed before it),
            # the call that did not return last on the timeline
            during = lab.played_step("timeline.random.played", seed=lab.seed, index=index,
                                     step=number + 1)
            raise CheckFailed(Failure(Verdict.TIMED_OUT, step=during, timeout=exc.timeout,
                                      timeline=lab.timeline))
    raise CheckFailed(lost_target(exc, event, lab.timeline))


def _event(step: Step, stamps: list) -> dict:
    """A timeline step as the Lab records its call (what the reports show)."""
    if step.op == "finish":
        claim = stamp_for(step, stamps)
        return {"op": "finish", "actor": claim.owner, "t": step.now, "stamp": stamp(claim)}
    return {"op": step.op, "actor": step.owner, "t": step.now, "lease_ms": step.lease_ms}


# -- the shrunk timeline, once more through the Lab (recorded on its timeline) --------------------
class LabQueue:
    """claim / finish / work_once of the code under grade through the Lab's wrappers, which
    record each call on the timeline and check return types; on the Lab's connection, or
    (`elsewhere`) on the other worker's, which acts inside a work_once's send."""

    def __init__(self, lab: Lab, conn=None):
        self.lab, self.conn = lab, conn
        self.raised: TargetRaised | None = None  # what the last call raised, with its line
        self.actor: str | None = None  # who finishes: the stamp's real owner, if forged
        self._other: LabQueue | None = None

    def elsewhere(self) -> "LabQueue":
        if self._other is None:
            self._other = LabQueue(self.lab, other_conn(self.lab))
        return self._other

    def claim(self, owner, now, lease_ms):
        return self._through(lambda: self.lab.claim(owner, now=now, lease_ms=lease_ms,
                                                    conn=self.conn))

    def finish(self, claim, now):
        return self._through(lambda: self.lab.finish(claim, now=now, actor=self.actor,
                                                     conn=self.conn))

    def work_once(self, owner, send, clock, lease_ms):
        return self._through(lambda: self.lab.work_once(owner, send, clock, lease_ms))

    def _through(self, call):
        try:
            return call()
        except TargetRaised as raised:
            raised.event["raised"] = error_line(raised.exc)
            self.raised = raised
            raise raised.exc from None


def other_conn(lab: Lab):
    """The other worker's connection in a replay (opened once, at its first use): it waits for
    no lock, as in `timeline_db.Elsewhere`."""
    if getattr(lab, "other_conn", None) is None:
        lab.other_conn = lab.connect(busy_timeout_ms=0)
    return lab.other_conn


class LabOperator:
    """The operator's actions and the rows, on the Lab's own connection; jobs numbered as
    `ids` (the world) numbers them, with the timeline's quantities (the world's already). Its
    `elsewhere` is the same but for the connection whose transaction state is asked: the
    other worker's."""

    def __init__(self, lab: Lab, ids, conn=None):
        self.lab, self.conn, self.ids, self.enqueued = lab, conn or lab.conn, ids, 0
        self._other: LabOperator | None = None

    def elsewhere(self) -> "LabOperator":
        if self._other is None:
            self._other = _Elsewhere(self)
        return self._other

    def enqueue(self, qty, deadline, max_attempts):
        self.enqueued += 1
        return self.lab.enqueue_exactly(self.ids(self.enqueued), qty=qty, deadline=deadline,
                                        max_attempts=max_attempts)

    def next_ids(self, count: int) -> list[int]:
        """The ids the next `count` jobs set or enqueued get."""
        return [self.ids(self.enqueued + n) for n in range(1, count + 1)]

    def insert(self, rows: list[dict]) -> list[int]:
        """A bulk step's rows, set at once on the Lab's own connection (told before it, by
        `_narrate`: one line of the timeline)."""
        jobs = self.next_ids(len(rows))
        self.enqueued += len(rows)
        with judge_write():  # found locked: a lock the code under grade still holds
            insert_rows(self.lab.observer, jobs, rows)
        return jobs

    def requeue(self, job):
        self.lab.requeue(job)

    def set_row(self, job, **values):
        self.lab.set_row(job, **values)

    def row(self, job):
        return self.lab.row(job)

    def count(self) -> int:
        with judge_write(reading=True):  # found locked: a lock the code under grade holds
            return self.lab.observer.execute("SELECT count(*) FROM jobs").fetchone()[0]

    def in_transaction(self) -> bool:
        return self.conn.in_transaction

    def rule_broken(self, function: str) -> tuple[str, dict] | None:
        return rule_broken(self.lab.target, self.conn.name, function)

    def own_connections(self) -> list[str]:
        return []  # the Lab's calls fail on their own (Lab._invoke)


class _Elsewhere(LabOperator):
    """A LabOperator whose connection is the other worker's, sharing its numbering of jobs."""

    def __init__(self, operator: LabOperator):
        super().__init__(operator.lab, operator.ids, other_conn(operator.lab))
        self.operator = operator

    def enqueue(self, qty, deadline, max_attempts):
        return self.operator.enqueue(qty, deadline, max_attempts)

    def next_ids(self, count: int) -> list[int]:
        return self.operator.next_ids(count)

    def insert(self, rows: list[dict]) -> list[int]:
        return self.operator.insert(rows)


def replay(lab: Lab, steps: list[Step], index: int, shrunk: bool = True,
           alone: bool = False) -> None:
    """Play a timeline (`shrunk`, or as drawn) through the Lab and fail at the step that
    differs; return if none does. `alone`: it passed when played alone in a fresh target
    process (`passes_alone`): the timeline says so first."""
    lab.note("timeline.random.replay" if shrunk else "timeline.random.as-drawn",
             seed=lab.seed, index=index, steps=len(steps))
    if alone:
        lab.note("timeline.random.carried-over")
    ids = timeline_ids(lab.world, index)
    queue, operator, model = LabQueue(lab), LabOperator(lab, ids), QueueModel(ids)
    if any(step.inside for step in steps):  # the other worker connects first (timeline_db.Database)
        queue.elsewhere()
    stamps: list = []
    for number, step, inside in groups(steps):
        recorder = Recorder(model) if inside else None
        _narrate(lab, step, stamps, inside, operator)
        expected = play_step(step, model, model, stamps, inside=inside, watch=recorder)
        stamp = _prepare(queue, step, stamps)
        watch = _Explaining(lab, number, step, expected, recorder, operator, queue,
                            inside) if inside else None
        got = play_step(step, queue, operator, stamps, passthrough=(CheckFailed,),
                        inside=inside, watch=watch)
        difference = (watch and watch.difference) or compare(number, step, got, expected,
                                                             operator, model)
        if difference is not None:
            job = stamp.id if stamp else _job_of(step, got, expected)
            explain(lab, step, difference, got, expected, queue.raised, model, job)
        stamps_after(step, expected, stamps, inside)


def _prepare(queue: LabQueue, step: Step, stamps: list):
    """Before a step: what the last call raised is forgotten; a finish is shown as made by its
    stamp's real owner (forged or not). Returns that stamp (None for another step)."""
    stamp = stamps[step.ref] if step.op == "finish" and step.ref < len(stamps) else None
    queue.raised, queue.actor = None, stamp.owner if stamp else None
    return stamp


class _Explaining(Checker):
    """The replay's Checker: a step inside a send that differs is explained at once, from
    inside that send (the check stops there: its failure is about that step); a work_once
    whose send was given another stamp, or was never called, is explained once it returns."""

    def __init__(self, lab: Lab, number: int, step: Step, expected: Outcome, recorder: Recorder,
                 operator: LabOperator, queue: LabQueue, inside: list[Step]):
        super().__init__(number, step, expected, recorder, operator, found=self._explain)
        self.lab, self.queue, self.inside = lab, queue, inside

    def before(self, number: int, step: Step, stamps: list) -> None:
        _narrate(self.lab, step, stamps)
        self.stamp = _prepare(self.queue.elsewhere(), step, stamps)

    def _explain(self, difference: Difference, where: str, *context) -> None:
        if where == "inside" and difference.what != "locked":
            step, got, expected, model = context
            job = self.stamp.id if self.stamp else _job_of(step, got, expected)
            explain(self.lab, step, difference, got, expected, self.queue.elsewhere().raised,
                    model, job)
        elif where == "return":  # after the work_once returned, before the steps inside
            (got,) = context
            explain(self.lab, self.step, difference, got, self.expected, self.queue.raised,
                    self.recorder.at[0], _job_of(self.step, got, self.expected))


def _narrate(lab: Lab, step: Step, stamps: list, inside: list[Step] = (),
             operator: LabOperator | None = None) -> None:
    """What the timeline's own lines do not show: a forged field, how send behaves, and what
    happens inside it; the rows a bulk step sets (one line: `bulk_note`)."""
    if step.op == "bulk" and operator is not None:
        lab.note("timeline.random.bulk", **bulk_note(step, operator.next_ids(
            sum(run.count for run in step.rows))))
    if step.op == "finish" and step.forge and step.ref < len(stamps):
        name, value = step.forge
        lab.note("timeline.random.forged", field=name, value=show(value),
                 real=show(getattr(stamps[step.ref], name)))
    if step.op == "work_once":
        key = "timeline.random.send-raises" if step.send_error else "timeline.random.send-takes"
        lab.note(key, ms=send_duration(step, inside), error=step.send_error)
        if inside:
            lab.note("timeline.random.send-meanwhile", steps=len(inside))


def bulk_note(step: Step, jobs: list[int]) -> dict:
    """The parameters of a bulk step's one line (`timeline.random.bulk`), its jobs numbered
    `jobs`: how many, the first and last id, each run of rows in column terms (`runs`, the same
    in every language) and as data (`rows`: each run's `Rows` fields, and its first job)."""
    runs, rows, start = [], [], 0
    for run in step.rows:
        if not run.count:
            continue
        first, last = jobs[start], jobs[start + run.count - 1]
        which, tokens = ((f"job {first}", f"{run.token}") if run.count == 1 else
                         (f"jobs {first}..{last}", f"{run.token}..{run.token + run.count - 1}"))
        runs.append(f"{which}: status={run.status} owner={_sql(run.owner)}"
                    f" lease_until={_sql(run.lease_until)} token={tokens}"
                    f" attempts={run.attempts} max_attempts={run.max_attempts}"
                    f" deadline={run.deadline}")
        rows.append({**dataclasses.asdict(run), "first": first})
        start += run.count
    return {"count": start, "first": jobs[0] if jobs else None,
            "last": jobs[start - 1] if start else None, "qty": step.qty,
            "runs": "; ".join(runs), "rows": rows}


def _sql(value) -> str:
    """A column's value as the row tables show it: NULL for None."""
    return "NULL" if value is None else show(value)


def explain(lab: Lab, step: Step, difference: Difference, got: Outcome, expected: Outcome,
            raised: TargetRaised | None, model: QueueModel, job: int | None) -> None:
    """Fail the check with the standard report for what differed (`job`: the row to show)."""
    what = difference.what
    if what == "locked":  # explained at the work_once that held the lock across its send
        lab.fail("timeline-locked-in-send", error=difference.got, actor=step.owner)
    if what == "raised" and raised is not None and expected.raised is None:
        raise raised  # the code under grade raised: errored, with the line in its file
    if what == "raised":
        lab.fail("timeline-not-raised", error=expected.raised, came_back=show(got.returned))
    if what == "returned":
        lab.expect(got.returned, expected.returned, job=job,
                   row=model.row(job) if job is not None else None, detail="timeline-returned")
    if what == "sent":
        lab.fail("timeline-sent", sent=show(got.sent), expected=show(expected.sent))
    if what == "own-connection":  # seen on the fast path, not again through the Lab
        lab.fail_own_connection(step.op, difference.got)
    if what == "transaction":
        lab.fail("timeline-transaction-open", function=step.op)
    if what == "rule":  # the Lab held that call to the same rule (invariants)
        broken = lab.broken_rule()
        if broken is not None:
            raise CheckFailed(broken)
        rule, params = difference.got
        lab.fail(f"invariant-{rule}", **params)
    if what == "row":
        lab.expect_row(difference.job, difference.expected, detail="timeline-row",
                       number=difference.job)
    lab.fail("timeline-rows", count=difference.got, expected=difference.expected)


def _job_of(step: Step, got: Outcome, expected: Outcome) -> int | None:
    """The job whose row to show beside a wrong return value: a claim's, the one a
    work_once's send was given."""
    for value in (expected.returned, got.returned, *expected.sent[:1], *got.sent[:1]):
        if hasattr(value, "id") and isinstance(value.id, int):
            return value.id
    if step.op in ("requeue", "quarantine", "move_deadline"):
        return step.job
    return None
