"""Real child processes that each call the target's `claim` on a connection of their own.

Used by checks that need true concurrency or a real crash (grader/checks/test_race.py,
test_crash.py). Children are started with multiprocessing's *spawn* context: a fresh interpreter
that loads the target from its spec (`grader.harness.target.load`), opens its own connection as
`lab.store.connect` does (a `grader.harness.watched.WatchedConnection`, so the target's own
trace callback cannot replace the grader's) and installs a
`grader.harness.interleave.StatementGate`, so the parent decides when each of its SQL statements
may run. Every wait here is bounded; a child that does not answer in
time is killed, never waited for forever.

A child's outcome is a plain dict: {"kind": "claim", "claim": {...}} | {"kind": "none"} |
{"kind": "raised", "error", "where", "locked"} | {"kind": "not-implemented"} |
{"kind": "wrong-type", "came_back", "type"} |
{"kind": "wrong-field-type", "came_back", "field", "value", "type", "wanted"} (a Claim whose field
is not of its exact type, see grader.harness.claimtypes) | {"kind": "load-error", "error_kind", "params"} |
{"kind": "killed", "step", "sql"} | {"kind": "exited", "code"} | {"kind": "no-answer"};
the ones that ran claim also carry "statements": [[step, sql], ...].
"""

from __future__ import annotations

import contextlib
import dataclasses
import multiprocessing
import os
import signal
import sys
import time
import types
from dataclasses import dataclass
from multiprocessing import connection

from lab.store import Claim

from . import watched
from .interleave import ANSWER_WAIT, Lockstep, StatementGate

#: How long spawned children may take to start (a fresh interpreter on a loaded machine).
START_TIMEOUT = 20.0


# -- child side ----------------------------------------------------------------------------------
def claimer_main(spec: str, path: str, actor: str, now: int, lease_ms: int, channel) -> None:
    """Entry point of a spawned child: load the target, wait for "start", claim, report."""
    from . import target as targets
    from .scenario import error_line, where

    try:
        module = targets.load(spec)
    except targets.TargetError as exc:
        channel.send(("done", {"kind": "load-error", "error_kind": exc.kind, "params": exc.params}))
        return
    conn = watched.connect(path)
    gate = StatementGate(channel, conn)
    conn.watch(gate)  # the target's own trace callback, if it sets one, runs after the gate
    channel.send(("ready",))
    if not (channel.poll(ANSWER_WAIT) and channel.recv()[0] == "start"):
        return  # the parent is gone
    gate.active = True
    try:
        outcome = claim_outcome(module.claim(conn, actor, now, lease_ms))
    except NotImplementedError:
        outcome = {"kind": "not-implemented"}
    except Exception as exc:
        outcome = {"kind": "raised", "error": error_line(exc), "where": where(exc),
                   "locked": "database is locked" in str(exc)}
    finally:
        gate.active = False
    outcome["statements"] = gate.statements
    channel.send(("done", outcome))
    conn.close()


def claim_outcome(result) -> dict:
    """What claim returned, as an outcome dict."""
    from .claimtypes import wrong_field
    from .scenario import show

    if result is None:
        return {"kind": "none"}
    if isinstance(result, Claim):
        wrong = wrong_field(result)
        if wrong:
            return {"kind": "wrong-field-type", "came_back": show(result), **wrong}
        return {"kind": "claim", "claim": dataclasses.asdict(result)}
    return {"kind": "wrong-type", "came_back": show(result), "type": type(result).__name__}


# -- parent side ---------------------------------------------------------------------------------
@dataclass
class Claimer:
    """One child process and the parent's end of its channel."""

    actor: str
    path: str
    process: multiprocessing.Process
    channel: connection.Connection
    kill_at: int | None = None  # crash: kill the child when it is about to run this statement
    ready: bool = False
    outcome: dict | None = None


def spawn(spec: str, path, actor: str, now: int, lease_ms: int,
          kill_at: int | None = None) -> Claimer:
    """Start a child that will claim as `actor` on the database at `path` once told to start."""
    ctx = multiprocessing.get_context("spawn")
    parent_end, child_end = ctx.Pipe()
    process = ctx.Process(target=claimer_main, name=f"claimer-{actor}",
                          args=(spec, str(path), actor, now, lease_ms, child_end))
    with _bare_main():
        process.start()
    child_end.close()
    return Claimer(actor, str(path), process, parent_end, kill_at)


def race(claimers: list[Claimer], lockstep: Lockstep, timeout: float,
         start_timeout: float = START_TIMEOUT) -> None:
    """Start all claimers at the same instant and run them in lockstep; fill in outcomes."""
    clock = time.monotonic
    for c in claimers:
        lockstep.join(c.actor)
    _wait_ready(claimers, clock() + start_timeout)
    for c in claimers:
        if c.ready and c.outcome is None:
            _send(c, "start")
    end_by = clock() + timeout
    while _live(claimers):
        for actor, answer in lockstep.releasable():
            _send(_by_actor(claimers, actor), answer)
        lockstep.expire()
        left = end_by - clock()
        if left <= 0:
            break
        wait = lockstep.next_timeout()
        for c, message in _messages(_live(claimers), left if wait is None else min(wait, left)):
            if message[0] == "at":
                lockstep.arrived(c.actor, *message[1:])
            else:
                _end(c, message)
                lockstep.finished(c.actor)
    _give_up(claimers)


def run_to_kill(claimers: list[Claimer], timeout: float,
                start_timeout: float = START_TIMEOUT) -> None:
    """Let each claimer run until it is about to run statement `kill_at`, then SIGKILL it."""
    _wait_ready(claimers, time.monotonic() + start_timeout)
    for c in claimers:
        if c.ready and c.outcome is None:
            _send(c, "start")
    end_by = time.monotonic() + timeout
    while _live(claimers) and time.monotonic() < end_by:
        for c, message in _messages(_live(claimers), end_by - time.monotonic()):
            if message[0] != "at":
                _end(c, message)
            elif message[1] >= c.kill_at:
                kill(c)
                c.outcome = {"kind": "killed", "step": message[1], "sql": message[2]}
            elif message[4]:  # the child asks
                _send(c, "go")
    _give_up(claimers)


def kill(c: Claimer) -> None:
    """SIGKILL the child (no cleanup, no rollback: like a crash) and reap it."""
    with contextlib.suppress(ProcessLookupError):
        os.kill(c.process.pid, signal.SIGKILL)
    c.process.join(5.0)


def close(claimers: list[Claimer]) -> None:
    """Make sure no child outlives the check: kill what still runs, reap, close channels."""
    for c in claimers:
        if c.process.is_alive():
            c.process.join(0.2 if c.outcome and c.outcome["kind"] != "no-answer" else 0)
        if c.process.is_alive():  # it has reported (or never will): nothing left to lose
            kill(c)
        c.channel.close()


def _wait_ready(claimers: list[Claimer], start_by: float) -> None:
    while any(not c.ready and c.outcome is None for c in claimers):
        left = start_by - time.monotonic()
        if left <= 0:
            break
        waiting = [c for c in claimers if not c.ready and c.outcome is None]
        for c, message in _messages(waiting, left):
            if message[0] == "ready":
                c.ready = True
            else:
                _end(c, message)


def _give_up(claimers: list[Claimer]) -> None:
    for c in _live(claimers):
        kill(c)
        c.outcome = {"kind": "no-answer"}


def _end(c: Claimer, message: tuple) -> None:
    if message[0] == "done":
        c.outcome = message[1]
    else:  # the channel closed without a result: the process ended on its own
        c.process.join(5.0)
        c.outcome = {"kind": "exited", "code": c.process.exitcode}


def _live(claimers: list[Claimer]) -> list[Claimer]:
    return [c for c in claimers if c.outcome is None]


def _by_actor(claimers: list[Claimer], actor: str) -> Claimer:
    return next(c for c in claimers if c.actor == actor)


def _send(c: Claimer, answer: str) -> None:
    with contextlib.suppress(OSError):
        c.channel.send((answer,))


def _messages(claimers: list[Claimer], timeout: float):
    """(claimer, message) for what arrived within `timeout` s; a closed channel gives ("gone",)."""
    by_channel = {c.channel: c for c in claimers}
    for channel in connection.wait(list(by_channel), max(0.0, timeout)):
        c = by_channel[channel]
        try:
            yield c, channel.recv()
        except (EOFError, OSError):
            yield c, ("gone",)


@contextlib.contextmanager
def _bare_main():
    """Spawn re-runs the parent's `__main__` script in the child unless it is a package's
    __main__; hide it while starting, so a grader driven from any script starts clean children."""
    main = sys.modules.get("__main__")
    sys.modules["__main__"] = types.ModuleType("__main__")
    try:
        yield
    finally:
        if main is not None:
            sys.modules["__main__"] = main
