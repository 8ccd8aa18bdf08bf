"""Worker child processes for the integration run, and the parent's handle on them (`Crew`).

Each worker is a real process (multiprocessing, spawn start method: a fresh interpreter, nothing
inherited from the grader) that loads the target itself, opens its own connection to the queue
and calls `work_once` until it returns None. Its `send` POSTs the claim to the receiver.

Time is logical and shared: every worker's clock reads one shared integer that only the parent
moves. Ordering is forced by messages, never by sleeping: a worker planned to `wait_for_go` does
nothing until the parent says "go"; one planned to `hold_first_send` stops inside its first send,
after the receiver answered, until the parent says "release" (this is how its lease runs out in
the middle of a send, deterministically).

Parent and worker talk over one duplex Pipe each:
    worker -> parent   events {"worker", "op", "t", ...} as they happen: the run's timeline
    parent -> worker   "go", "release", "turn" (one more work_once, for a worker that takes turns)
Every wait on either side is bounded (`Plan.wait_s`): a safety net against hangs, not an order.
"""

from __future__ import annotations

import multiprocessing
import multiprocessing.connection
import os
import time
import traceback
from dataclasses import dataclass
from typing import Callable

from lab.store import Claim

from . import target as targets
from . import watched
from .claimtypes import shown, wrong_field
from .receiver import DeliveryRefused, deliver
from .journal import switched_to
from .scenario import error_line, where

#: Ops after which a worker sends nothing more.
ENDED = ("stopped", "exited")


@dataclass(frozen=True)
class Plan:
    """What one worker process does."""

    owner: str
    target_spec: str
    db_path: str
    url: str
    lease_ms: int
    wait_for_go: bool = False  # start working only when the parent says "go"
    hold_first_send: bool = False  # after the first delivery, wait for "release" inside send
    take_turns: bool = False  # after the first work_once, each next one waits for "turn"
    max_rounds: int = 100  # work_once calls before giving up (a target that never says None)
    wait_s: float = 20.0  # longest wait for the parent (safety net)


class SharedClock:
    """The logical clock a worker hands to work_once: it reads the shared integer."""

    def __init__(self, value):
        self._value = value

    def __call__(self) -> int:
        return int(self._value.value)


# -- worker side (runs in the child) ---------------------------------------------------------------
def worker_main(plan: Plan, clock_value, pipe) -> None:
    """Entry point of a worker process: report every step over `pipe`, end with 'stopped'."""
    clock = SharedClock(clock_value)

    def report(op: str, **fields) -> None:
        try:
            pipe.send({"worker": plan.owner, "op": op, "t": clock(), **fields})
        except OSError:
            pass  # the parent has stopped listening (it gave up on the run): nobody to tell

    try:
        _work(plan, clock, pipe, report)
    except BaseException:  # a bug in the worker machinery itself, not in the target
        report("crashed", error=traceback.format_exc())
        report("stopped", reason="crashed")
    finally:
        pipe.close()


def _work(plan: Plan, clock: SharedClock, pipe, report: Callable) -> None:
    try:
        module = targets.load(plan.target_spec)
    except targets.TargetError as exc:
        report("load-error", error=f"{exc.kind}: {exc.params}")
        return report("stopped", reason="load-error")
    conn = watched.connect(plan.db_path)
    conn.watch(_journal_watch(report))  # the target's own trace callback cannot replace it
    report("ready")
    if plan.wait_for_go and not _await(pipe, "go", plan.wait_s):
        return report("stopped", reason="no-go")
    hold = [plan.hold_first_send]
    current: dict = {}

    def send(claim):
        _check_claim(claim, report)
        current.update(job=claim.id, token=claim.token)
        fields = {"job": claim.id, "token": claim.token, "qty": claim.qty,
                  "lease_until": claim.lease_until}
        try:
            reply = deliver(plan.url, claim)
        except DeliveryRefused as refused:
            report("sent", status=refused.reply.status, result=refused.reply.result, **fields)
            raise
        report("sent", status=reply.status, result=reply.result, **fields)
        if hold[0]:
            hold[0] = False
            report("holding", **fields)
            on_time = _await(pipe, "release", plan.wait_s)
            report("released", on_time=on_time, **fields)

    try:
        for round_ in range(plan.max_rounds):
            if plan.take_turns and round_ > 0 and not _await(pipe, "turn", plan.wait_s):
                return report("stopped", reason="no-turn")
            current.clear()
            try:
                result = module.work_once(conn, plan.owner, send, clock, plan.lease_ms)
            except BaseException as exc:
                report("raised", error=error_line(exc), where=where(exc),
                       not_implemented=_stub_name(exc), **current)
                return report("stopped", reason="raised")
            report("returned", result=result if result is None or type(result) is bool
                   else shown(result), type=type(result).__name__, **current)
            if result is None:
                return report("stopped", reason="empty")
        report("stopped", reason="rounds", rounds=plan.max_rounds)
    finally:
        conn.close()


def _check_claim(claim, report: Callable) -> None:
    """What send was given must be a Claim with fields of the exact types (the parent moves the
    shared clock with its lease_until, the receiver stores its qty): otherwise report it and end
    the worker at once, whatever the code under grade would do with an exception."""
    if not isinstance(claim, Claim):
        report("bad-claim", came_back=shown(claim), type=type(claim).__name__, field=None)
    elif wrong := wrong_field(claim):
        report("bad-claim", came_back=shown(claim), **wrong)
    else:
        return
    report("stopped", reason="bad-claim")
    os._exit(0)


def _journal_watch(report: Callable) -> Callable[[str], None]:
    """A trace callback that reports, once, a statement of the target's that changes the
    journal mode (see grader.harness.journal)."""
    seen = []

    def watch(sql: str) -> None:
        mode = switched_to(sql)
        if mode and not seen:
            seen.append(sql)
            report("journal-mode", mode=mode, sql=sql.strip()[:120])

    return watch


def _stub_name(exc: BaseException) -> str | None:
    """Which function is still a stub, if `exc` says one is (the stubs raise
    NotImplementedError("claim") etc.); None for any other exception."""
    if not isinstance(exc, NotImplementedError):
        return None
    named = exc.args[0] if exc.args else None
    return named if named in targets.FUNCTIONS else "work_once"


def _await(pipe, command: str, wait_s: float) -> bool:
    """Wait for `command` from the parent; False if it did not come in time."""
    deadline = time.monotonic() + wait_s
    while (left := deadline - time.monotonic()) > 0:
        if pipe.poll(left):
            try:
                if pipe.recv() == command:
                    return True
            except EOFError:
                return False
    return False


# -- parent side -----------------------------------------------------------------------------------
class Crew:
    """The parent's handle on the worker processes: start them, move the shared clock, tell
    them to go on, and collect their events in arrival order.

        with Crew(on_event=print) as crew:
            crew.start(Plan("A", ...))
            crew.wait_for(lambda e: e["op"] == "holding", deadline)
    """

    def __init__(self, on_event: Callable[[dict], None] = lambda event: None, clock_start: int = 0):
        self._ctx = multiprocessing.get_context("spawn")
        self._clock = self._ctx.RawValue("q", clock_start)  # shared memory, no lock needed:
        self.on_event = on_event                              # one writer, aligned 8 bytes
        self.events: list[dict] = []
        self._procs: dict[str, multiprocessing.Process] = {}
        self._pipes: dict[str, multiprocessing.connection.Connection] = {}

    @property
    def now(self) -> int:
        return int(self._clock.value)

    def set_clock(self, now: int) -> None:
        self._clock.value = now

    def start(self, plan: Plan) -> None:
        mine, theirs = self._ctx.Pipe(duplex=True)
        proc = self._ctx.Process(target=worker_main, args=(plan, self._clock, theirs),
                                 name=f"worker-{plan.owner}", daemon=True)
        proc.start()
        theirs.close()
        self._procs[plan.owner] = proc
        self._pipes[plan.owner] = mine

    def tell(self, owner: str, command: str) -> None:
        try:
            self._pipes[owner].send(command)
        except (KeyError, OSError):
            pass  # the worker has gone already; its events say why

    def ended(self, owner: str) -> bool:
        return any(e["worker"] == owner and e["op"] in ENDED for e in self.events)

    def wait_for(self, predicate: Callable[[dict], bool], deadline: float,
                 after: int = 0) -> dict | None:
        """The first event from number `after` on (already received or still to come) that
        satisfies `predicate`; None if the deadline (time.monotonic) passes or every worker ends
        without one."""
        seen = after
        while True:
            for event in self.events[seen:]:
                if predicate(event):
                    return event
            seen = len(self.events)
            if not self._pipes or (left := deadline - time.monotonic()) <= 0:
                return None
            self._receive(left)

    def wait_all_ended(self, deadline: float) -> bool:
        while not all(self.ended(owner) for owner in self._procs):
            if not self._pipes or (left := deadline - time.monotonic()) <= 0:
                return False
            self._receive(left)
        return True

    def _receive(self, timeout: float) -> None:
        by_pipe = {pipe: owner for owner, pipe in self._pipes.items()}
        for pipe in multiprocessing.connection.wait(list(by_pipe), timeout):
            owner = by_pipe[pipe]
            try:
                self._add(pipe.recv())
            except (EOFError, OSError):
                del self._pipes[owner]
                pipe.close()
                self._closed(owner)

    def _closed(self, owner: str) -> None:
        proc = self._procs[owner]
        proc.join(timeout=5)
        if not self.ended(owner) or proc.exitcode != 0:
            self._add({"worker": owner, "op": "exited", "t": self.now, "exitcode": proc.exitcode})

    def _add(self, event: dict) -> None:
        self.events.append(event)
        self.on_event(event)

    def close(self) -> None:
        """Let every worker go on (a held send returns, a wait for "go" sees the pipe close),
        give it a moment to end, then kill what is left."""
        for owner, pipe in self._pipes.items():
            self.tell(owner, "release")
            pipe.close()
        self._pipes.clear()
        for proc in self._procs.values():
            proc.join(timeout=5)
            if proc.is_alive():
                proc.kill()
                proc.join(timeout=5)

    def __enter__(self) -> "Crew":
        return self

    def __exit__(self, *exc) -> None:
        self.close()
