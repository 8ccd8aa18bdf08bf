"""What a check sees while it runs (inside the sandbox child, the judge): a fresh database, the
target's three functions wrapped so that every call is recorded on a timeline, its return type
checked and the rules after every call kept (invariants), and the verdicts (`expect`, `fail`...:
`verdicts.Verdicts`, which the Lab is made of): each raises a `grader.results.Failure` (how a
check stops: outcomes; its run: checkrun).

The judge never imports the code under grade. It runs in a target process of its own
(`target_client.TargetProcess`), started per check; `lab.target` is that proxy, `lab.conn` and
what `lab.connect()` returns are handles (`Conn`) on connections opened there, by name. Values
come back as checked data (a Claim rebuilt here, a `Foreign` for anything else), exceptions as
`RaisedInTarget`. Rows are read by the judge on a connection of its own (`lab.observer`).
"""

from __future__ import annotations

import contextlib
import sqlite3
from pathlib import Path
from typing import Any, Callable

from lab import store
from lab.store import Claim

from grader.results import Cause, Failure, Kind, Outcome, RowDiff

from grader.harness.processes import sandbox
from .interleave import is_statement
from .invariants import Broken, RowModel, Rules, WorkOnce
from .world import LESSON_SEED, World
from .outcomes import (CheckFailed, TargetRaised, error_line, judge_wait_ms, judge_write,
                       lost_target, show, stamp)
from .target_client import START_TIMEOUT, TargetProcess
from grader.harness.wire.values import Foreign, RaisedInTarget
from .target_errors import (FunctionHung, ProtocolError, SendFailed, TargetEnded,
                            TargetProcessError, TargetTimeout)
from .verdicts import Verdicts

#: The target's connection the checks call through (`lab.conn`).
MAIN = "main"


class ManualClock:
    """A logical clock for work_once: `clock()` reads it, the check moves it."""

    def __init__(self, start: int = 0):
        self.now = start
        self.readings: list[int] = []

    def __call__(self) -> int:
        self.readings.append(self.now)
        return self.now

    def advance(self, ms: int) -> None:
        self.now += ms


class Conn:
    """The judge's handle on a connection opened in the target process (by name): what a check
    hands to claim / finish / work_once, asks `in_transaction` of, or sets up (TEMP triggers).
    A target process that ends, hangs or breaks the channel while asked is the check's verdict
    (as during a call), never a grader error."""

    def __init__(self, lab: "Lab", name: str):
        self.lab, self.name = lab, name

    @property
    def in_transaction(self) -> bool:
        return self.lab.ask(lambda target: target.in_transaction(self.name))

    def unfinished(self) -> tuple[int, int] | None:
        """(reads, writes): this connection's statements still running, each holding its lock
        with no transaction open (TargetProcess.unfinished); None where that cannot be seen."""
        return self.lab.ask(lambda target: target.unfinished(self.name))

    def execute(self, sql: str, params: tuple = ()) -> None:
        """Setup SQL on this connection (run by the target process, not by the code under grade)."""
        self.lab.ask(lambda target: target.execute(self.name, sql, params))

    def journal_mode(self) -> str:
        return self.lab.ask(lambda target: target.journal_mode(self.name))

    def close(self) -> None:
        self.lab.ask(lambda target: target.close_conn(self.name))


class Lab(Verdicts):
    """One check's world: a fresh database file and the target under grade (in its process)."""

    _in_setup = 0  # > 0 inside `with lab.setup():`
    #: While a connection of the grader's holds the write lock (grader.checks.faults): the busy
    #: timeout, in ms, of the connection the check gives the target. Each call made meanwhile
    #: carries it on its event ("lock_held_busy_ms"), so a call that hangs says why it should
    #: not have (grader.report.view: kind.timed-out-lock-held).
    lock_held_busy_ms: int | None = None
    #: False for a run of which only the outcome is kept (a later run of a sweep or a repeat,
    #: after one that failed: the report tells the first failing run's story only). A check may
    #: then skip what only makes a failure easier to read (the random timelines' shrink); the
    #: outcome must be the same as when it is True.
    detailed = True

    def __init__(self, target_spec: str | None, workdir: str, seed: int = LESSON_SEED,
                 call_timeout: float = 10.0, check: str = "", hung: dict | None = None,
                 start_timeout: float = START_TIMEOUT, alone: bool = False,
                 model: type[RowModel] | None = None):
        self.target_spec = target_spec  # what --impl said: for checks that start processes
        #: how long the judge's own connections to the check's database wait for a lock
        #: (`judge_wait_ms`: none when this Lab's target is all the code under grade there is)
        self.wait_ms = judge_wait_ms(alone)
        #: the functions this grade saw hang before any check ran (grader.runner's probe), and
        #: the seconds it waited for each: a check stops at its first call of one, not graded
        self.hung: dict[str, float] = dict(hung or {})
        self.world = World(seed, check)  # times, lease length, names, ids, file names
        self.dir = Path(workdir)
        self.path = self.dir / self.world.db_name
        self.timeline: list[dict] = []
        #: (call number, SQL, tables) seen on conn; tables: what the statement reads or writes,
        #: as SQLite's authorizer told (TargetProcess.statements), None where not known
        self.statements: list[tuple[int | None, str, frozenset | None]] = []
        self._call: int | None = None
        self._calls = 0
        self.printed_chars = 0  # what the code's calls printed in this check, left-out included
        self._printed_told = 0  # the target's printed_total last said (`report_playing`)
        #: the statements the last call ran, on any connection (traced, and over the limit)
        self.last_ran = 0
        self._conns = 0
        self.cause: str | None = None  # a mistake seen (results.Cause): given to the failure
        #: connection name -> (the call since which it has been left unclean, a transaction
        #: open then): `left_open`
        self._left_open: dict[str, tuple[dict, bool]] = {}
        #: the first call after which the connection's isolation_level was no longer the
        #: autocommit it was handed in (None): Python's sqlite3 then opens a transaction before
        #: every plain write, which nobody commits (results.Cause.ISOLATION_LEVEL_CHANGED)
        self.isolation_changed_by: str | None = None
        self.observer = store.connect(self.path, busy_timeout_ms=self.wait_ms)
        self.observer.execute("PRAGMA synchronous = OFF")  # as the code's connections (DbHost.open)
        store.init_db(self.observer)
        #: the rules every call is held to (invariants); rows too, as the contract's `model`
        #: makes them (handed by the check run), where only the code writes
        self.rules = Rules(self.observer, model=model if alone else None)
        self._send_returns = self.world.send_returns()
        self.target: TargetProcess | None = None
        self.conn: Conn | None = None
        if target_spec is None:  # no code under grade (the project's tests of the verdicts)
            return
        self._timeouts = (call_timeout, start_timeout)  # for `fresh_target`
        try:
            self.target = TargetProcess(target_spec, timeout=call_timeout,
                                        start_timeout=start_timeout, hung=set(self.hung))
            self.conn = Conn(self, MAIN)  # the one whose statements are recorded
            self.target.open(MAIN, self.path)
        except BaseException:
            self.close()
            raise

    # -- the world -------------------------------------------------------------------------
    @property
    def seed(self) -> int:
        """What the check's world and its random timelines are drawn from (--replay SEED)."""
        return self.world.seed

    def connect(self, busy_timeout_ms: int = store.BUSY_TIMEOUT_MS) -> Conn:
        """A connection to the check's database, opened in the target process as
        lab.store.connect opens it, to hand to the target (traced by the grader)."""
        self._conns += 1
        conn = Conn(self, f"c{self._conns}")
        self.target.open(conn.name, self.path, busy_timeout_ms)
        return conn

    def note(self, key: str, **params) -> None:
        """Add a line of narration (a catalogue key) to the timeline."""
        self.timeline.append({"op": "note", "key": key, "params": params})

    def enqueue(self, qty: int = 1, deadline: int | None = None, max_attempts: int = 3) -> int:
        """Enqueue a job with the lesson's quantity `qty` (it gets the world's, `world.qty`),
        the id the world gives it next and `deadline` (default: one no step reaches)."""
        qty = self.world.qty(qty)
        deadline = self.world.far if deadline is None else deadline
        with judge_write():
            job = insert_job(self.observer, self.world.next_id(), qty, deadline, max_attempts)
        self.timeline.append({"op": "enqueue", "job": job, "qty": qty, "deadline": deadline,
                              "max_attempts": max_attempts})
        return job

    def enqueue_exactly(self, job: int, qty: int, deadline: int, max_attempts: int = 3) -> int:
        """Enqueue a job with exactly these values, which are the world's already (a random
        timeline's: its id as the world numbers jobs, its quantity as the world gives it)."""
        insert_job(self.observer, job, qty, deadline, max_attempts)
        self.timeline.append({"op": "enqueue", "job": job, "qty": qty, "deadline": deadline,
                              "max_attempts": max_attempts})
        return job

    def requeue(self, job: int) -> None:
        with judge_write():
            store.requeue(self.observer, job)
        self.timeline.append({"op": "requeue", "job": job})

    def row(self, job: int) -> dict | None:
        """The job's committed row, read on a connection of the grader's own."""
        try:
            return store.get_job(self.observer, job)
        except sqlite3.OperationalError as exc:
            self.fail("row-unreadable", job=job, error=str(exc))

    def remove_jobs(self) -> None:
        """Take every job out of the queue (setting up an empty queue after a first step)."""
        with judge_write():
            self.observer.execute("DELETE FROM jobs")
        self.note("note.jobs-removed")

    def set_row(self, job: int, **values) -> None:
        """Put a row into a given state directly (setting up a situation, not a target call)."""
        sets = ", ".join(f"{column} = ?" for column in values)
        with judge_write():
            self.observer.execute(f"UPDATE jobs SET {sets} WHERE id = ?",
                                  (*values.values(), job))
        self.timeline.append({"op": "set-row", "job": job, "values": values})

    @contextlib.contextmanager
    def setup(self):
        """Steps that prepare the situation the check is about, not the rule it tests: a
        failure inside is reported as a setup step that went wrong (`Failure.setup`), and the
        check stops there."""
        self._in_setup += 1
        try:
            yield
        except TargetRaised as raised:
            raised.setup = True
            raise
        finally:
            self._in_setup -= 1

    # -- calling the target ------------------------------------------------------------------
    def claim(self, owner: str, now: int, lease_ms: int, conn=None) -> Claim | None:
        event = {"op": "claim", "actor": owner, "t": now, "lease_ms": lease_ms}
        before = self.rules.snapshot()
        try:
            result = self._invoke("claim", conn or self.conn, owner, now, lease_ms, event=event)
        except TargetRaised:
            self.rules.after_claim(event, before, owner, now, lease_ms, raised=True)
            raise
        self.rules.after_claim(event, before, owner, now, lease_ms, raised=False)
        wrong = result.wrong_field if type(result) is Foreign else None
        if wrong:
            event["result"] = show(result)
            self.fail_wrong_field_type("claim", show(result), **wrong)
        if result is not None and type(result) is not Claim:
            self._wrong_type("claim", result, "Claim | None", event)
        event["result"] = stamp(result)
        return result

    def finish(self, claim: Claim, now: int, conn=None, actor: str | None = None) -> bool:
        event = {"op": "finish", "actor": actor or claim.owner, "t": now, "stamp": stamp(claim)}
        before = self.rules.snapshot()
        try:
            result = self._invoke("finish", conn or self.conn, claim, now, event=event)
        except TargetRaised:
            self.rules.after_finish(event, before, claim, now, raised=True)
            raise
        self.rules.after_finish(event, before, claim, now, raised=False)
        if type(result) is not bool:
            self._wrong_type("finish", result, "bool", event)
        event["result"] = result
        return result

    def work_once(self, owner: str, send: Callable, clock: Callable[[], int], lease_ms: int,
                  conn=None):
        start = getattr(clock, "now", None)
        event = {"op": "work_once", "actor": owner, "t": start, "lease_ms": lease_ms}
        first: dict = {}  # what the first send was given, and how long the timeline was then
        course = WorkOnce(self.rules, event, owner, lease_ms)
        returns = self._send_returns

        def sending(claim):
            if not first:
                first.update(sent=claim, mark=len(self.timeline))
            course.at_send(claim)
            try:
                value = send(claim)
            except SendFailed:  # send failing as the network would: work_once's to handle
                course.send_ended(raised=True)
                raise
            except BaseException:  # the check stopped inside send (a step there went wrong)
                first["stopped"] = True
                raise
            course.send_ended(raised=False)
            # what a real send returns means nothing (None, False, 0, a value): a send of the
            # check's that returns nothing returns one of those, drawn by the world
            return next(returns) if value is None else value

        def reading():
            ended = self.target.clock_ended if self.target is not None else None
            value = clock()
            course.read(ended, value)
            return value

        try:
            result = self._invoke("work_once", conn or self.conn, owner, sending, reading,
                                  lease_ms, event=event)
        except TargetRaised:
            course.ended(None, raised=True)
            self._around_send(event, first, clock)
            raise
        except BaseException:
            self._around_send(event, first, clock)
            raise
        course.ended(result, raised=False)
        self._around_send(event, first, clock)
        if result is not None and type(result) is not bool:
            self._wrong_type("work_once", result, "bool | None", event)
        event["result"] = result
        return result

    def _around_send(self, event: dict, first: dict, clock) -> None:
        """A work_once inside whose send something happened (another worker's calls, the
        operator's steps, a note: what the check did from inside send) is told as two steps
        around them: where it started, a note that it runs and calls send with what it was
        given; after them, the call itself, at the clock's reading once send returned, with
        what it returned (the step a failure of work_once is about, after what happened
        meanwhile). A check that stopped inside send (`first["stopped"]`: a step there went
        wrong, or raised) keeps only the note: its failure is about the last step inside."""
        if not first or len(self.timeline) <= first["mark"]:
            return
        at = next((i for i, e in enumerate(self.timeline) if e is event), None)
        if at is None:
            return
        self.timeline[at] = {"op": "note", "key": "timeline.work_once-sends", "t": event["t"],
                             "params": {"actor": event["actor"], "lease_ms": event["lease_ms"],
                                        "sent": show(first["sent"])}}
        if first.get("stopped"):  # the failure is about a step inside send: it ends there
            return
        now = getattr(clock, "now", None)
        event.update(start=event["t"], t=now if type(now) is int else None, returns=True)
        self.timeline.append(event)

    def _invoke(self, function: str, conn: Conn, *args, event: dict):
        # `event` is the caller's own dict: a call made from inside send (a nested call) adds its
        # event later on the timeline, so the result goes to `event`, never to timeline[-1].
        if self.lock_held_busy_ms is not None:
            event["lock_held_busy_ms"] = self.lock_held_busy_ms
        self.timeline.append(event)
        self._calls += 1
        outer, self._call = self._call, self._calls
        # a timeout's step says how much the check's calls printed before it (view: printing):
        # those through the Lab and those made on its target directly (random timelines)
        printed = max(self.printed_chars, self.target.printed_total)
        sandbox.report_step(dict(event, printed_before=printed) if printed else event)
        self.target.sends_held = []
        try:
            result = self.ask(lambda target: getattr(target, function)(conn.name, *args), event)
        except FunctionHung:
            raise CheckFailed(self.not_graded(function, event)) from None
        except RaisedInTarget as raised:
            self._own_connections(function, event, raised=error_line(raised))
            if raised.not_implemented:
                self.fail_not_implemented(function)
            self._send_rules(function, event)  # during the call: before what it left
            self._connection_rules(function, conn, event)
            raise TargetRaised(function, raised, raised.where, event) from None
        finally:
            printed, self.target.printed = self.target.printed, None
            if printed is not None:  # shown beside the call: [its lines, characters left out]
                body, lost = printed  # (each line made printable with the rest of the failure)
                self.printed_chars += len(body) + lost
                event["printed"] = [body[:-1].split("\n") if body.endswith("\n")
                                    else body.split("\n") if body else [], lost]
            self.statements.extend((self._call, sql, tables)
                                   for name, sql, tables in self.target.statements
                                   if name == MAIN)
            self.last_ran = len(self.target.statements) + self.target.dropped
            self.target.statements = []
            self._call = outer
            if function == "work_once" and any(self.target.sends_in_transaction):
                self.cause = self.cause or Cause.SEND_IN_TRANSACTION
        self._own_connections(function, event, result=result)
        self._send_rules(function, event)  # during the call: before what it left
        self._connection_rules(function, conn, event)
        return result

    def _send_rules(self, function: str, event: dict) -> None:
        """work_once called every send with no transaction open and no statement of its own
        running on its connection (invariants.Rules.sends; the first broken is kept)."""
        if function == "work_once":
            self.rules.sends(event, self.target.sends_held)

    def fresh_target(self) -> TargetProcess:
        """Another target process of the code under grade, started afresh (its module state new,
        nothing the check's calls left in it), with this check's timeouts: to learn whether a
        failure needs what earlier calls left there. The caller closes it."""
        call_timeout, start_timeout = self._timeouts
        return TargetProcess(self.target_spec, timeout=call_timeout,
                             start_timeout=start_timeout, hung=set(self.hung))

    def report_playing(self, key: str, **params) -> None:
        """Say what the check plays on its target outside the Lab's calls (a random timeline's
        step, called on the target directly), when the code has printed more since last said:
        a timeout there then says where it was and how much the code had printed before it
        (the note `key` with `params` is the step; grader.report.sentences.PRINTED_A_LOT)."""
        printed = 0 if self.target is None else self.target.printed_total
        if printed > self._printed_told:
            self._printed_told = printed
            sandbox.report_step(self.played_step(key, **params))

    def played_step(self, key: str, **params) -> dict:
        """The step `report_playing` says (the note `key` with `params`), with how much the code
        had printed before it: what a timeout during that step tells."""
        return {"op": "note", "key": key, "params": params, "printed_before": self._printed_told}

    def _connection_rules(self, function: str, conn: Conn, event: dict) -> None:
        """After every call: no transaction open on its connection, no statement of the code's
        running there (invariants.Rules.connection), its busy timeout not lowered
        (invariants.Rules.settings); the first broken is kept. Not asked of a
        target process the judge gave up on (its own send raised inside the call: the check
        stops with that)."""
        try:
            in_transaction = self.target.in_transaction(conn.name)
            unfinished = self.target.unfinished(conn.name)
            isolation = self.target.isolation_level(conn.name)
            lowered = self.target.db.busy_lowered(conn.name)
        except TargetProcessError:
            return
        if isolation is not None and self.isolation_changed_by is None:
            self.isolation_changed_by = function
        clean = self.rules.connection(function, event, in_transaction, unfinished)
        self.rules.settings(function, event, lowered)
        if clean:
            self._left_open.pop(conn.name, None)
        elif conn.name not in self._left_open:
            self._left_open[conn.name] = (event, bool(in_transaction))

    @property
    def left_open(self) -> dict | None:
        """The call since which a connection of the check has been left unclean (a transaction
        open or a statement running), no call on it cleaning it since: the step a lock the code
        still holds is about (its event; the earliest of several connections; None: all are
        clean)."""
        events = [event for event, _ in self._left_open.values()]
        return min(events, key=lambda e: self._event_index(e), default=None)

    @property
    def left_in_transaction(self) -> bool:
        """A transaction was left open at `left_open` (not only a statement)."""
        return any(event is self.left_open and tx for event, tx in self._left_open.values())

    def _event_index(self, event: dict) -> int:
        return next((i for i, e in enumerate(self.timeline) if e is event), len(self.timeline))

    def broken_rule(self) -> Failure | None:
        """The first rule a call of this check broke (invariants), as the check's failure:
        its timeline ends at that call."""
        broken: Broken | None = self.rules.broken
        if broken is None:
            return None
        at = next((i for i, e in enumerate(self.timeline) if e is broken.event), None)
        timeline = self.timeline if at is None else self.timeline[:at + 1]
        diff = None if broken.job is None else RowDiff(broken.job, broken.current,
                                                       broken.expected)
        return Failure(Outcome.FAILED, Kind.DETAIL, row=diff,
                       detail=f"invariant-{broken.rule}", params=broken.params,
                       timeline=timeline)

    def _own_connections(self, function: str, event: dict, **outcome) -> None:
        """The call opened a connection of its own to the check's database (the target process
        saw it: filewatch): that breaks the contract, whatever its SQL
        looked like, and what the check saw of it cannot be believed. The event shows what
        the call returned (or raised) all the same."""
        own, self.target.own_connections = self.target.own_connections, []
        if not own:
            return
        if "raised" in outcome:
            event["raised"] = outcome["raised"]
        else:
            result = outcome["result"]
            event["result"] = (stamp(result) if type(result) is Claim
                               else result if result is None or type(result) in (bool, int, str)
                               else show(result))
        self.fail_own_connection(function, own)

    def ask(self, question: Callable[[TargetProcess], Any], step: dict | None = None) -> Any:
        """`question(lab.target)`: a call of the code under grade (`step` is its event), or a
        request that is not one (setup SQL, in_transaction, a count: the step is the last
        event). The target ending, hanging or breaking the channel meanwhile fails the check
        (exited, resource limit, timed out, protocol error); RaisedInTarget passes through."""
        if step is None:
            step = self.timeline[-1] if self.timeline else None
        try:
            return question(self.target)
        except (TargetEnded, TargetTimeout, ProtocolError) as lost:
            raise CheckFailed(lost_target(lost, step, self.timeline)) from None

    def settle(self) -> None:
        """Before a check's pass is believed: one round trip with a fresh nonce, so a reply the
        code under grade forged on the channel shows up (out of turn) as a protocol error."""
        if self.target is None:
            return
        try:
            self.target.sync()
        except (TargetEnded, ProtocolError) as lost:
            raise CheckFailed(lost_target(lost, None, self.timeline)) from None

    def raises(self, call: Callable[[], Any]) -> BaseException | None:
        """Run `call` (a lambda over lab.claim/finish/work_once); return what the target raised."""
        try:
            call()
        except TargetRaised as raised:
            if raised.event is not None:
                raised.event["raised"] = error_line(raised.exc)
            return raised.exc
        return None

    def statements_of(self, call: int) -> list[str]:
        """The SQL the target ran on `conn` during its call number `call` (1 = first call); a
        statement whose text opens with a comment counts, text that is only comments does not."""
        return [sql for sql, _ in self.traced_of(call)]

    def traced_of(self, call: int) -> list[tuple[str, frozenset | None]]:
        """`statements_of(call)`, each with the tables it reads or writes as SQLite's authorizer
        told (None where not known): what grader.checks.txshape reads."""
        return [(sql, tables) for n, sql, tables in self.statements
                if n == call and is_statement(sql)]

    @property
    def calls(self) -> int:
        return self._calls

    def close(self) -> None:
        if self.target is not None:
            self.target.close()
        try:
            self.observer.close()
        except Exception:
            pass


def insert_job(conn: sqlite3.Connection, job: int, qty: int, deadline: int,
               max_attempts: int = 3) -> int:
    """A pending job with the id `job` (what lab.store.enqueue does, with the world's id)."""
    conn.execute("INSERT INTO jobs(id, qty, deadline, max_attempts) VALUES (?, ?, ?, ?)",
                 (job, qty, deadline, max_attempts))
    return job


