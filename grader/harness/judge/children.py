"""Claimers in processes of their own, each calling the target's `claim` on a connection of its own.

Used by checks that need true concurrency or a real crash (grader/checks/test_race.py,
test_crash.py). Each claimer is a target process (`target_client.TargetProcess`: a fresh
interpreter that imports the code under grade; this module never does) handed a proxy of a
*gated* connection to the check's database, which the judge holds (`dbhost`): before each
statement of its claim runs, the judge's trace callback asks the central loop, which decides when
it may run (`interleave`, `explore`); a kill stops it before that statement and closes the connection as a
dead process would leave it. Nothing crosses a pipe but the target process's validated JSON
lines: no multiprocessing, no pickle.

A TargetProcess belongs to the thread that started it, so each claimer runs in a judge-side
thread of its own: it starts the target, opens the gated connection, says "ready", waits for
"start", then calls claim with a `statement` callable that hands (step, sql, holds_write) to the
one central loop (`race`, `run_to_kill`) through a queue.Queue and blocks on its own queue for the
answer. Only the central loop decides outcomes, answers and kills; the threads only report. Every
wait is bounded; `close` stops, kills and joins everything, so no thread or process outlives the
check.

A claimer's outcome is a plain dict: {"kind": "claim", "claim": {...}} | {"kind": "none"} |
{"kind": "raised", "error", "where", "locked"} | {"kind": "not-implemented"} |
{"kind": "wrong-type", "came_back", "type"} |
{"kind": "wrong-field-type", "came_back", "field", "value", "type", "wanted"} (a Claim whose field
is not of its exact type) | {"kind": "load-error", "error_kind", "params"} |
{"kind": "killed", "step", "sql"} | {"kind": "exited", "code", "signal"} (code: the return code,
negative for a signal) | {"kind": "no-answer"} |
{"kind": "protocol-error", "error"} (the target process broke the channel's rules: nothing it
said can be believed; a check reports it as errored) | {"kind": "own-connection", "paths",
"returned"} (claim opened a connection of its own to the check's database, whatever it returned
or raised: filewatch; a check fails with that diagnosis) | {"kind": "grader-error", "error"} (a bug
on the judge's side); the ones that ran claim to its end also carry
"statements": [[step, sql, tables], ...] (its statements on the gated connection, numbered from 1;
tables: what each reads or writes, as SQLite's authorizer told, None where not known).
"""

from __future__ import annotations

import dataclasses
import queue
import threading
import time
import traceback
from dataclasses import dataclass, field

from lab.store import Claim

from .explore import Schedule
from .interleave import ANSWER_WAIT, is_statement
from grader.harness.wire.values import Foreign, RaisedInTarget
from .target_errors import ProtocolError, TargetEnded, TargetLoadError, TargetTimeout
from .target_client import TargetProcess

#: How long claimers may take to start (a fresh interpreter on a loaded machine).
START_TIMEOUT = 20.0
#: The target process's own safety net for one call: a backstop only, `race` and `run_to_kill`
#: give up (and kill) first.
CALL_TIMEOUT = 60.0
#: How long `close` waits for a claimer's thread to end once its process is killed.
JOIN_TIMEOUT = 15.0
#: The name of a claimer's connection in its target process.
CONN = "claimer"


class _Stopped(Exception):
    """The central loop said "stop" (or never answered): the claimer's thread ends quietly."""


@dataclass
class Claimer:
    """One claimer: its target process (started and used by its own thread) and its queues."""

    spec: str
    path: str
    actor: str
    now: int
    lease_ms: int
    kill_at: int | None = None  # crash: kill the process when it is about to run this statement
    ready: bool = False
    outcome: dict | None = None  # decided by the central loop only
    pid: int | None = None  # the target process, once started
    target: TargetProcess | None = None  # touched by the claimer's thread only (kill() aside)
    thread: threading.Thread | None = None
    answers: queue.Queue = field(default_factory=queue.Queue)  # central loop -> thread
    stopped: threading.Event = field(default_factory=threading.Event)
    #: set once its target process is closed: its connection (in the judge: dbhost) closed with
    #: it, its uncommitted work rolled back and its locks released, as a crash would
    released: threading.Event = field(default_factory=threading.Event)


def spawn(spec: str, path, actor: str, now: int, lease_ms: int,
          kill_at: int | None = None) -> Claimer:
    """A claimer that will claim as `actor` on the database at `path` once told to start (its
    process starts with `race` or `run_to_kill`)."""
    return Claimer(spec, str(path), actor, now, lease_ms, kill_at)


# -- the claimer's thread --------------------------------------------------------------------------
def _run(c: Claimer, events: queue.Queue) -> None:
    """A claimer's thread: start the target, say ready, wait for start, claim, report."""
    try:
        outcome = _claim(c, events)
    except _Stopped:
        return
    except BaseException:  # a bug of the judge's: say so rather than leave the loop waiting
        outcome = {"kind": "grader-error", "error": traceback.format_exc()[-2000:]}
    finally:
        try:
            if c.target is not None:
                c.target.close()
        finally:
            c.released.set()
    events.put((c, ("done", outcome)))


def _claim(c: Claimer, events: queue.Queue) -> dict:
    try:
        c.target = TargetProcess(c.spec, timeout=CALL_TIMEOUT, start_timeout=START_TIMEOUT)
        c.pid = c.target.pid
        if c.stopped.is_set():
            raise _Stopped()
        c.target.open(CONN, c.path, gated=True)
    except TargetLoadError as exc:
        return {"kind": "load-error", "error_kind": exc.kind, "params": exc.params}
    except (TargetEnded, TargetTimeout, ProtocolError) as exc:
        return _ending(exc)
    events.put((c, ("ready",)))
    if _answer(c) != "start":
        raise _Stopped()

    def statement(step: int, sql: str, holds_write: bool) -> str:
        # called from the real connection's trace callback, on this thread: whether that
        # connection has a transaction open before the statement, and which of its cursors
        # still run a statement (each holds its lock): the explorer's lock model; and which
        # tables SQLite's authorizer says the statement touches (one touching none, SELECT 1,
        # conflicts with nothing)
        events.put((c, ("at", step, sql, holds_write, True, c.target.in_transaction(CONN),
                        c.target.unfinished(CONN), c.target.tables_read(CONN))))
        answer = _answer(c)
        if answer not in ("go", "free"):
            raise _Stopped()
        return answer

    try:
        outcome = claim_outcome(c.target.claim(CONN, c.actor, c.now, c.lease_ms,
                                               statement=statement))
    except RaisedInTarget as exc:
        if exc.not_implemented:
            outcome = {"kind": "not-implemented"}
        else:
            outcome = {"kind": "raised", "error": exc.message, "where": exc.where,
                       "locked": "database is locked" in exc.message}
    except (TargetEnded, TargetTimeout, ProtocolError) as exc:
        return _ending(exc)
    if c.target.own_connections:  # the contract broken, whatever came back
        outcome = {"kind": "own-connection", "paths": list(c.target.own_connections),
                   "returned": outcome}
    statements = steps(c.target.statements)
    try:
        c.target.sync()  # a reply the target forged on the channel shows up here, out of turn
    except (TargetEnded, TargetTimeout, ProtocolError) as exc:
        return _ending(exc)
    outcome["statements"] = statements
    return outcome


def _answer(c: Claimer) -> str:
    """The central loop's next answer to this claimer ("stop" if none comes in time)."""
    try:
        return c.answers.get(timeout=ANSWER_WAIT)
    except queue.Empty:
        return "stop"


def _ending(exc: Exception) -> dict:
    """How a target process that gave no answer to believe ended, as an outcome."""
    if isinstance(exc, ProtocolError):
        return {"kind": "protocol-error", "error": str(exc)[:300]}
    if isinstance(exc, TargetTimeout):
        return {"kind": "no-answer"}
    return {"kind": "exited", "code": exc.returncode, "signal": exc.signal}


def claim_outcome(result) -> dict:
    """What claim returned (a value rebuilt from the target's data), as an outcome dict."""
    if result is None:
        return {"kind": "none"}
    if type(result) is Claim:
        return {"kind": "claim", "claim": dataclasses.asdict(result)}
    if type(result) is Foreign:
        if result.wrong_field:
            return {"kind": "wrong-field-type", "came_back": result.repr, **result.wrong_field}
        return {"kind": "wrong-type", "came_back": result.repr,
                "type": result.type.rsplit(".", 1)[-1]}
    return {"kind": "wrong-type", "came_back": repr(result), "type": type(result).__name__}


def steps(statements: list[tuple[str, str, frozenset | None]]) -> list[list]:
    """[[step, sql, tables], ...]: the statements of the last call on the claimer's connection
    (TargetProcess.statements), numbered as the target numbered them (comment-only trace lines
    are no statements); tables as SQLite's authorizer told, None where not known."""
    traced = [(sql, tables) for conn, sql, tables in statements
              if conn == CONN and is_statement(sql)]
    return [[n, sql, tables] for n, (sql, tables) in enumerate(traced, 1)]


# -- the central loop ------------------------------------------------------------------------------
def race(claimers: list[Claimer], schedule: Schedule, timeout: float,
         start_timeout: float = START_TIMEOUT) -> None:
    """Start all claimers at the same instant and let their statements go as `schedule` says
    (explore.Schedule: one at a time); fill in outcomes."""
    clock = time.monotonic
    for c in claimers:
        schedule.join(c.actor)
    events = _start(claimers)
    _wait_ready(claimers, events, clock() + start_timeout)
    for c in claimers:
        if c.ready and c.outcome is None:
            c.answers.put("start")
    # is the claimer's statement running (SQLite has control), or its own code?
    schedule.inside = lambda actor: in_statement(_by_actor(claimers, actor))
    end_by = clock() + timeout
    while _live(claimers):
        # a wait that ran out first: what it frees (a claimer taken as stalled, the other let
        # go) is answered now, not after the next message (which the stalled one may never send)
        schedule.expire()
        for actor, answer in schedule.releasable():
            _by_actor(claimers, actor).answers.put(answer)
        left = end_by - clock()
        if left <= 0:
            break
        wait = schedule.next_timeout()
        for c, message in _messages(events, left if wait is None else min(wait, left)):
            if c.outcome is not None:
                continue  # too late: the loop has decided about this one
            if message[0] == "at":
                schedule.arrived(c.actor, *message[1:])
            elif message[0] == "done":
                # the statements it ran without asking (after "free"), in its order
                for step, sql, _ in message[1].get("statements", ()):
                    if step > schedule.positions.get(c.actor, 0):
                        schedule.arrived(c.actor, step, sql, False, asking=False)
                c.outcome = message[1]
                schedule.finished(c.actor)
    _give_up(claimers)


def in_statement(c: Claimer) -> bool:
    """Is one of the claimer's statements running now (its request being served by the judge,
    on the real connection: SQLite has control, not the target's own code)? Read from another
    thread: an attribute the target's database host sets for the time of each request."""
    target = c.target
    return target is not None and getattr(target.db, "deadline", None) is not None


def run_to_kill(claimers: list[Claimer], timeout: float,
                start_timeout: float = START_TIMEOUT) -> None:
    """Let each claimer run until it is about to run statement `kill_at`, then SIGKILL it."""
    events = _start(claimers)
    _wait_ready(claimers, events, time.monotonic() + start_timeout)
    for c in claimers:
        if c.ready and c.outcome is None:
            c.answers.put("start")
    end_by = time.monotonic() + timeout
    while _live(claimers) and time.monotonic() < end_by:
        for c, message in _messages(events, end_by - time.monotonic()):
            if c.outcome is not None:
                continue
            if message[0] == "done":
                c.outcome = message[1]
            elif message[0] != "at":
                continue
            elif c.kill_at is not None and message[1] >= c.kill_at:
                kill(c)  # before answering: statement `kill_at` never runs
                c.outcome = {"kind": "killed", "step": message[1], "sql": message[2]}
            else:
                c.answers.put("go")
    _give_up(claimers)


def kill(c: Claimer) -> None:
    """SIGKILL the claimer's target process and tell its thread to stop: like a crash, the
    statement it was about to run never runs, its connection (the judge's, dbhost) is closed and
    its uncommitted work rolled back by the time this returns (its locks are gone, as a dead
    process's are); the thread reaps the process (`close` waits for that)."""
    c.stopped.set()
    if c.target is not None:
        c.target.kill()
    c.answers.put("stop")
    if c.thread is not None and c.thread is not threading.current_thread():
        c.released.wait(JOIN_TIMEOUT)


def close(claimers: list[Claimer]) -> None:
    """Make sure nothing outlives the check: stop every claimer, kill what still runs, join."""
    for c in claimers:
        c.stopped.set()
        c.answers.put("stop")
    deadline = time.monotonic() + JOIN_TIMEOUT
    for c in claimers:
        if c.thread is None:
            continue
        c.thread.join(0.5 if c.outcome and c.outcome["kind"] != "no-answer" else 0)
        if c.thread.is_alive():  # it has reported (or never will): nothing left to lose
            kill(c)
            c.thread.join(max(0.0, deadline - time.monotonic()))


def _start(claimers: list[Claimer]) -> queue.Queue:
    """Start every claimer's thread (each starts its target process); their one event queue."""
    events: queue.Queue = queue.Queue()
    for c in claimers:
        c.thread = threading.Thread(target=_run, args=(c, events), name=f"claimer-{c.actor}",
                                    daemon=True)
        c.thread.start()
    return events


def _wait_ready(claimers: list[Claimer], events: queue.Queue, start_by: float) -> None:
    while any(not c.ready and c.outcome is None for c in claimers):
        left = start_by - time.monotonic()
        if left <= 0:
            break
        for c, message in _messages(events, left):
            if message[0] == "ready":
                c.ready = True
            elif message[0] == "done" and c.outcome is None:
                c.outcome = message[1]


def _give_up(claimers: list[Claimer]) -> None:
    for c in _live(claimers):
        kill(c)
        c.outcome = {"kind": "no-answer"}


def _live(claimers: list[Claimer]) -> list[Claimer]:
    return [c for c in claimers if c.outcome is None]


def _by_actor(claimers: list[Claimer], actor: str) -> Claimer:
    return next(c for c in claimers if c.actor == actor)


def _messages(events: queue.Queue, timeout: float):
    """(claimer, message) for what arrives within `timeout` s: the first one waited for, then
    whatever is already queued behind it."""
    try:
        yield events.get(timeout=max(0.0, timeout)) if timeout > 0 else events.get_nowait()
    except queue.Empty:
        return
    while True:
        try:
            yield events.get_nowait()
        except queue.Empty:
            return
