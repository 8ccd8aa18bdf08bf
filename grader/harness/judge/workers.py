"""Workers for the integration run, and the judge's handle on them (`Crew`).

Each worker is a thread of the judge that drives a target process of its own
(`target_client.TargetProcess`, created in that thread: a proxy belongs to the thread that started
it). The code under grade runs only in that process: the worker opens a connection there, by name,
on the check's database and calls `work_once` until it returns None. The loop itself (rounds,
waiting for "go", holding the first send, taking turns) and every event of the timeline are the
judge's, made from validated data: the target process cannot write an event, and nothing it sends
is unpickled (there is no pickle here at all, nor multiprocessing).

`send` and `clock` are the judge's own callables, called back from inside work_once. `send` POSTs
the claim to the receiver (a refusal becomes the target's own SendFailed, which work_once should
let propagate) and, for a worker planned to `hold_first_send`, waits inside the first send, after
the receiver answered, until the check says "release" (this is how its lease runs out in the
middle of a send, deterministically). `clock` reads the crew's shared logical clock, which only
the check moves.

Ordering is forced by commands, never by sleeping: "go", "release", "turn" (one more work_once,
for a worker that takes turns) go to a worker through `Crew.tell`. Events go the other way, in
arrival order: {"worker", "op", "t", ...}, where op is one of

    ready (pid: its target process's), sent (job, token, qty, lease_until, the receiver's status
    and result; in_transaction: true when the worker's connection had a transaction open as send
    was called), holding, released, returned, journal-mode (a
    statement of the target's that changed the journal mode, seen in the SQL traced during a
    call), raised (error, where, not_implemented), bad-claim (send was given something other
    than a Claim of exact field types: came_back, type, field [, value, wanted]), load-error,
    open-failed (the worker's connection could not be opened: error),
    exited (exitcode, or signal), timed-out (a call into the target that did not answer within
    `Plan.call_timeout`: timeout), protocol (the target process broke the channel's rules:
    error; nothing it said can be believed), crashed (the worker machinery itself failed),
    stopped (reason: empty, rounds, raised, bad-claim, no-go, no-turn, load-error, open-failed,
    exited, timed-out, protocol, crashed, closed)

(exited, timed-out and protocol also say `during`: start-up, open, work_once or sync; returned
and raised also carry `own_connections`, [path, ...], when that work_once opened connections of
its own to the check's database: filewatch). A worker's
last event is "stopped". After every work_once, before its outcome becomes an event, and before a
worker says it stopped, it makes a round trip with its target (`sync`): a reply the code under
grade forged on the channel shows up there as a protocol error, never as a result. Every wait is
bounded (`Plan.wait_s`, `Plan.call_timeout`): safety nets against hangs, not an order.
`Crew.close` ends every worker and every target process. """

from __future__ import annotations

import os
import queue
import signal
import threading
import time
import traceback
from dataclasses import dataclass
from typing import Any, Callable

from lab.store import Claim

from .claimtypes import shown
from .journal import switched_to
from .target_client import START_TIMEOUT, TargetProcess
from grader.harness.wire.values import Foreign, RaisedInTarget
from .target_errors import (ProtocolError, SendFailed, TargetEnded, TargetLoadError,
                            TargetProcessError, TargetTimeout)

#: Ops after which a worker sends nothing more.
ENDED = ("stopped", "exited")
#: The name of a worker's connection in its target process.
CONN = "worker"
FUNCTIONS = ("claim", "finish", "work_once")
CALL_TIMEOUT = 10.0  # seconds one call may keep control in the target (twice the busy timeout)
CLOSE_GRACE = 2.0  # seconds close() lets workers end on their own before killing their targets
KILL_WAIT = 5.0  # seconds close() then waits for each thread


@dataclass(frozen=True)
class Plan:
    """What one worker does."""

    owner: str
    target_spec: str
    db_path: str
    url: str
    lease_ms: int
    wait_for_go: bool = False  # start working only when the check says "go"
    hold_first_send: bool = False  # after the first delivery, wait for "release" inside send
    take_turns: bool = False  # after the first work_once, each next one waits for "turn"
    max_rounds: int = 100  # work_once calls before giving up (a target that never says None)
    wait_s: float = 20.0  # longest wait for the check's command (safety net)
    call_timeout: float = CALL_TIMEOUT  # longest a call may run in the target (safety net)
    start_timeout: float = START_TIMEOUT  # longest the target process may take to start


class _Stop(Exception):
    """Raised by the judge's send or clock to end the worker at once (the proxy then kills its
    target: a judge's exception never travels through the code under grade)."""

    def __init__(self, reason: str):
        super().__init__(reason)
        self.reason = reason


class _Done:
    """A worker thread's last word in the crew's inbox (after its last event)."""

    def __init__(self, owner: str):
        self.owner = owner


_CLOSE = object()  # the crew is closing: stop waiting


# -- a worker (a thread of the judge) -------------------------------------------------------------
class _Worker:
    def __init__(self, crew: "Crew", plan: Plan):
        self.crew = crew
        self.plan = plan
        self.commands: queue.Queue = queue.Queue()
        self.current: dict = {}  # the job and token being worked on (from send)
        self.doing = "start-up"  # what the target process was asked last
        self.hold = plan.hold_first_send
        self.journal_seen = False
        self.target: TargetProcess | None = None
        self.lock = threading.Lock()  # guards `target` against kill() from the crew's thread
        self.thread = threading.Thread(target=self.main, name=f"worker-{plan.owner}", daemon=True)

    def report(self, op: str, **fields) -> None:
        self.crew._inbox.put({"worker": self.plan.owner, "op": op, "t": self.crew.now, **fields})

    def main(self) -> None:
        try:
            self.run()
        except BaseException:  # a bug in the worker machinery itself, not in the target
            self.report("crashed", error=traceback.format_exc())
            self.report("stopped", reason="crashed")
        finally:
            self.release_target()
            self.crew._inbox.put(_Done(self.plan.owner))

    def run(self) -> None:
        plan = self.plan
        try:
            target = TargetProcess(plan.target_spec, timeout=plan.call_timeout,
                                   start_timeout=plan.start_timeout)
        except TargetLoadError as exc:
            self.report("load-error", error=f"{exc.kind}: {exc.params}")
            return self.report("stopped", reason="load-error")
        except TargetProcessError as exc:
            return self.lost(exc)
        with self.lock:
            self.target = target
        try:
            reason, fields = self.work(target)
        except _Stop as stop:  # the proxy has killed the target already
            return self.report("stopped", reason=stop.reason)
        except TargetProcessError as exc:
            return self.lost(exc)
        try:
            self.doing = "sync"
            target.sync()
        except TargetProcessError as exc:
            return self.lost(exc)
        self.report("stopped", reason=reason, **fields)

    def work(self, target: TargetProcess) -> tuple[str, dict]:
        """The worker's loop; returns why it stopped."""
        plan = self.plan
        self.doing = "open"
        try:
            target.open(CONN, plan.db_path)  # lab.store.connect, run by the target server
        except RaisedInTarget as exc:  # what the other worker's code did keeps it out (a lock)
            self.report("open-failed", error=exc.message)
            return "open-failed", {}
        self.report("ready", pid=target.pid)
        if plan.wait_for_go and not self.wait("go"):
            return "no-go", {}
        for round_ in range(plan.max_rounds):
            if plan.take_turns and round_ > 0 and not self.wait("turn"):
                return "no-turn", {}
            self.current.clear()
            self.doing = "work_once"
            try:
                result = target.work_once(CONN, plan.owner, self.send, self.clock, plan.lease_ms)
            except RaisedInTarget as exc:
                statements, own = target.statements, _own(target)
                self.doing = "sync"
                target.sync()
                self.journal(statements)
                self.report("raised", error=exc.message, where=exc.where,
                            not_implemented=_stub_name(exc), **own, **self.current)
                return "raised", {}
            statements, own = target.statements, _own(target)
            self.doing = "sync"
            target.sync()  # a reply forged on the channel shows up now, not at the next call
            self.journal(statements)
            self.report("returned", result=result if result is None or type(result) is bool
                        else shown(result), type=_type_name(result), **own, **self.current)
            if result is None:
                return "empty", {}
        return "rounds", {"rounds": plan.max_rounds}

    def lost(self, exc: TargetProcessError) -> None:
        """The target process can no longer be used: say how it ended."""
        fields = {"during": self.doing, **self.current}
        if isinstance(exc, TargetEnded):
            self.report("exited", exitcode=exc.code, signal=exc.signal, **fields)
            reason = "exited"
        elif isinstance(exc, TargetTimeout):
            self.report("timed-out", timeout=exc.timeout, **fields)
            reason = "timed-out"
        elif isinstance(exc, ProtocolError):
            self.report("protocol", error=str(exc)[:300], **fields)
            reason = "protocol"
        else:  # closed, or a request refused: the machinery's own mistake
            self.report("crashed", error=f"{type(exc).__name__}: {exc}")
            reason = "crashed"
        self.report("stopped", reason=reason)

    # -- the judge's callables, called back from inside work_once ------------------------------
    def send(self, claim: Any) -> None:
        self.check_claim(claim)
        if self.crew.closing:
            raise _Stop("closed")
        self.current.update(job=claim.id, token=claim.token)
        fields = {"job": claim.id, "token": claim.token, "qty": claim.qty,
                  "lease_until": claim.lease_until}
        if getattr(self.target, "sending_in_transaction", None):  # the contract: none open
            fields["in_transaction"] = True
        from .receiver import DeliveryRefused, deliver  # http: only where a crew delivers

        try:
            reply = deliver(self.plan.url, claim)
        except DeliveryRefused as refused:
            self.report("sent", status=refused.reply.status, result=refused.reply.result,
                        **fields)
            raise SendFailed(str(refused)) from None  # raised in the target, as its SendFailed
        self.report("sent", status=reply.status, result=reply.result, **fields)
        if self.hold:
            self.hold = False
            self.report("holding", **fields)
            on_time = self.wait("release")
            self.report("released", on_time=on_time, **fields)
        return None

    def clock(self) -> int:
        if self.crew.closing:
            raise _Stop("closed")
        return self.crew.now

    def check_claim(self, claim: Any) -> None:
        """What send was given must be a Claim with fields of the exact types (the check moves
        the shared clock with its lease_until, the receiver stores its qty): otherwise report it
        and end the worker at once, whatever the code under grade would do with an exception."""
        if type(claim) is Claim:
            return
        if type(claim) is Foreign and claim.wrong_field:
            self.report("bad-claim", came_back=claim.repr, **claim.wrong_field)
        else:
            self.report("bad-claim", came_back=shown(claim), type=_type_name(claim), field=None)
        raise _Stop("bad-claim")

    def journal(self, statements: list[tuple[str, str, frozenset | None]]) -> None:
        """Report, once, a statement of the target's that changed the journal mode (see
        grader.harness.judge.journal); `statements`: TargetProcess.statements."""
        if self.journal_seen:
            return
        for _, sql, _ in statements:
            mode = switched_to(sql)
            if mode:
                self.journal_seen = True
                self.report("journal-mode", mode=mode, sql=sql.strip()[:120])
                return

    def wait(self, command: str) -> bool:
        """Wait for `command` from the check; False if it did not come in time (or the crew is
        closing). Other commands meanwhile are not for this wait: they are dropped."""
        deadline = time.monotonic() + self.plan.wait_s
        while (left := deadline - time.monotonic()) > 0 and not self.crew.closing:
            try:
                got = self.commands.get(timeout=left)
            except queue.Empty:
                return False
            if got == command:
                return True
            if got is _CLOSE:
                return False
        return False

    # -- ending ----------------------------------------------------------------------------------
    def release_target(self) -> None:
        with self.lock:
            target, self.target = self.target, None
        if target is not None:
            target.close()

    def kill(self) -> None:
        """From the crew's thread: kill this worker's target process group, so that a call in
        flight ends at once (as TargetEnded) instead of at its timeout. The lock keeps the
        worker from reaping the process meanwhile, so the pid is still the target's."""
        with self.lock:
            if self.target is not None and self.target.returncode is None:
                if not hasattr(os, "killpg"):  # the portable path: Popen.kill, from any thread
                    self.target.kill()
                    return
                try:
                    os.killpg(self.target.pid, signal.SIGKILL)
                except (ProcessLookupError, PermissionError):
                    pass


def _own(target: TargetProcess) -> dict:
    """{"own_connections": [path, ...]} when the last work_once opened connections of its own
    to the database (filewatch), else {}: a field of its event."""
    own = list(target.own_connections)
    return {"own_connections": own} if own else {}


def _stub_name(exc: RaisedInTarget) -> str | None:
    """Which function is still a stub, if `exc` says one is (the stubs raise
    NotImplementedError("claim") etc.); None for any other exception."""
    if not exc.not_implemented:
        return None
    named = exc.message.partition(":")[2].strip()
    return named if named in FUNCTIONS else "work_once"


def _type_name(value: Any) -> str:
    """The short name of the value's type (a Foreign's type as the target process named it)."""
    if type(value) is Foreign:
        return value.type.rsplit(".", 1)[-1]
    return type(value).__name__


# -- the check's side ------------------------------------------------------------------------------
class Crew:
    """The check's handle on the workers: start them, move the shared clock, tell them to go on,
    and collect their events in arrival order (`on_event` is called in the check's thread).

        with Crew(on_event=print) as crew:
            crew.start(Plan("A", ...))
            crew.wait_for(lambda e: e["op"] == "holding", deadline)
    """

    def __init__(self, on_event: Callable[[dict], None] = lambda event: None, clock_start: int = 0):
        self._clock = clock_start  # one writer (the check), read by the workers: an int is atomic
        self.on_event = on_event
        self.events: list[dict] = []
        self._inbox: queue.Queue = queue.Queue()
        self._workers: dict[str, _Worker] = {}
        self._running: set[str] = set()
        self._closing = threading.Event()

    @property
    def now(self) -> int:
        return self._clock

    def set_clock(self, now: int) -> None:
        self._clock = now

    @property
    def closing(self) -> bool:
        return self._closing.is_set()

    def start(self, plan: Plan) -> None:
        if plan.owner in self._workers:
            raise ValueError(f"a worker named {plan.owner!r} was started already")
        worker = _Worker(self, plan)
        self._workers[plan.owner] = worker
        self._running.add(plan.owner)
        worker.thread.start()

    def tell(self, owner: str, command: str) -> None:
        worker = self._workers.get(owner)
        if worker is not None:  # a worker that has gone already ignores it; its events say why
            worker.commands.put(command)

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
            if not self._running or (left := deadline - time.monotonic()) <= 0:
                return None
            self._receive(left)

    def wait_all_ended(self, deadline: float) -> bool:
        while not all(self.ended(owner) for owner in self._workers):
            if not self._running or (left := deadline - time.monotonic()) <= 0:
                return False
            self._receive(left)
        return True

    def _receive(self, timeout: float) -> None:
        """Take what the workers have said: wait up to `timeout` for the first item."""
        try:
            item = self._inbox.get(timeout=timeout)
        except queue.Empty:
            return
        while True:
            self._take(item)
            try:
                item = self._inbox.get_nowait()
            except queue.Empty:
                return

    def _take(self, item) -> None:
        if isinstance(item, _Done):
            self._running.discard(item.owner)
            if not self.ended(item.owner):  # cannot happen: a worker always says it stopped
                self._add({"worker": item.owner, "op": "exited", "t": self.now, "exitcode": None,
                           "signal": None, "during": "?"})
            return
        self._add(item)

    def _add(self, event: dict) -> None:
        self.events.append(event)
        self.on_event(event)

    def close(self) -> None:
        """End every worker: waits and callbacks give up at once, a worker still in a call after
        a short grace has its target process killed; then wait (bounded) for every thread."""
        self._closing.set()
        for worker in self._workers.values():
            worker.commands.put(_CLOSE)
        deadline = time.monotonic() + CLOSE_GRACE
        for worker in self._workers.values():
            worker.thread.join(max(0.0, deadline - time.monotonic()))
        for worker in self._workers.values():
            if worker.thread.is_alive():
                worker.kill()
        for worker in self._workers.values():
            worker.thread.join(KILL_WAIT)

    def __enter__(self) -> "Crew":
        return self

    def __exit__(self, *exc) -> None:
        self.close()
