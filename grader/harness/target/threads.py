"""How the target server looks at the threads of the code under grade: which of them are idle,
read from their frames, never from timing.

Which of two threads reaches the channel first, or whether a send on a helper thread returns
before the call's thread reads the clock, must never depend on how the threads were scheduled.
A thread is idle when it waits in the server (`Threads.park`, or for the judge's answer:
`Threads.waiting_for_judge`) or in threading's waits (`blocked`: a join, an Event, a Condition, a
Queue, a Future's result, a selector); the server's waits end when the threads they are about
are idle, polled (a thread that starts to wait in threading tells nobody), with SETTLE_LIMIT as
the safety net for a thread that never becomes idle (a busy loop): then they go on as they are.
Lives here: `Threads` (`park`, `settled`, `hold`: a send answered on another thread held until
the call's own thread has read the clock or waits), `blocked`, SETTLE_LIMIT, SETTLE_POLL and
SERVER_THREADS. The server (`server.Server`) owns the channel, the calls and their callbacks, and
asks here when it may go on. docs/protocol.md, "The target process" (its threads).

It runs beside the code under grade, in the target process. May import: the standard library
only. Never the judge's side (`grader.harness.judge`).
"""

from __future__ import annotations

import sys
import threading
import time

#: seconds a wait for the code's threads to be idle lasts at most (`Threads.settled`, `hold`):
#: a safety net for a thread that never waits (a busy loop); and how often it looks meanwhile
SETTLE_LIMIT = 2.0
SETTLE_POLL = 0.001
#: the idents of the server's own threads (never the code's: `Threads.settled` ignores them)
SERVER_THREADS: set[int] = set()


class Threads:
    """The threads of the code's own, as the server waits for them: those waiting in `park`
    (`parked`) or for the judge's answer on the channel (`on_wire`) are idle. `turn` is the
    server's Condition (it guards the channel, the call stack and these sets): every method
    here is called with it held, but `waiting_for_judge`."""

    def __init__(self, turn: threading.Condition):
        self.turn = turn
        self.parked: set[int] = set()  # the threads waiting in `park` (idle)
        self.on_wire: set[int] = set()  # the threads waiting for the judge's answer (idle too)

    def park(self, ready) -> None:
        """Wait (with `turn` held) until `ready()`, this thread counted as idle meanwhile."""
        if ready():
            return
        me = threading.get_ident()
        self.parked.add(me)
        self.turn.notify_all()
        try:
            while not ready():
                self.turn.wait(SETTLE_POLL)
        finally:
            self.parked.discard(me)

    def settled(self, call, stack: list, limit: float) -> bool:
        """Every other thread of the code's is idle: it waits here (`parked`), for the judge
        (`on_wire`) or in threading's waits (`blocked`); a thread on its way to call send has
        called it. True too once `call` has ended (it is not on the server's `stack`: a
        callback of it is refused now) or at `limit` (time.monotonic(): the safety net)."""
        if call not in stack or time.monotonic() > limit:
            return True
        me = threading.get_ident()
        frames = sys._current_frames()
        return all(ident in self.parked or ident in self.on_wire
                   or blocked(frame, frames, self.turn)
                   for ident, frame in frames.items()
                   if ident != me and ident not in SERVER_THREADS)

    def hold(self, call, stack: list, reads: int) -> None:
        """With `turn` held: sending takes time. A send answered on a thread other than its
        call's ends (returns or raises to the code) once the call's thread has read the clock
        since it was called (`reads`: that reading was taken while it ran), waits in
        threading's waits (for it, say: `blocked`) or is at the call's end; or SETTLE_LIMIT
        has passed. Each of these is where that thread is in its own course, never how fast
        it got there: what a reading says never depends on the threads' luck."""
        limit = time.monotonic() + SETTLE_LIMIT

        def ends() -> bool:
            if call.ending or call.reads > reads or call not in stack:
                return True
            frames = sys._current_frames()
            frame = frames.get(call.thread)
            return (frame is None or time.monotonic() > limit
                    or blocked(frame, frames, self.turn))
        self.park(ends)

    def waiting_for_judge(self) -> "_OnWire":
        """This thread waits for the judge on the channel (idle, as `settled` counts it), but
        while it serves a nested call (the server takes it off `on_wire` meanwhile): a context
        manager (each request's)."""
        return _OnWire(self.on_wire)


class _OnWire:
    """`Threads.waiting_for_judge`: this thread is in `on_wire` while the block runs. A class,
    not a generator's context manager: it is entered at every request of the code's."""

    __slots__ = ("on_wire", "me")

    def __init__(self, on_wire: set):
        self.on_wire = on_wire

    def __enter__(self) -> None:
        self.me = threading.get_ident()
        self.on_wire.add(self.me)

    def __exit__(self, *exc) -> bool:
        self.on_wire.discard(self.me)
        return False


def _waits_codes() -> tuple:
    """The code objects of threading's waits (`blocked`)."""
    condition = {threading.Condition.wait.__code__}
    join = {threading.Thread.join.__code__}
    if hasattr(threading.Thread, "_wait_for_tstate_lock"):  # up to 3.12
        join.add(threading.Thread._wait_for_tstate_lock.__code__)
    return frozenset(condition), frozenset(join)


_CONDITION_WAIT, _JOIN = _waits_codes()
_select_codes: frozenset | None = None


def _selector_waits() -> frozenset:
    """The code objects of selectors' waits (`blocked`: asyncio's loop waits there), once
    `selectors` is imported. The server does not import it: a thread of the code under grade
    can wait in one only after the code (asyncio) imported it, and a target that never does
    spares the import (a fresh interpreter's start, on the portable path)."""
    global _select_codes
    if _select_codes is None:
        selectors = sys.modules.get("selectors")
        if selectors is None:
            return frozenset()
        _select_codes = frozenset(
            cls.select.__code__ for cls in vars(selectors).values()
            if isinstance(cls, type) and issubclass(cls, selectors.BaseSelector)
            and "select" in vars(cls))
    return _select_codes


def blocked(frame, frames: dict, ours) -> bool:
    """Whether the thread whose innermost frame is `frame` waits, and cannot go on by itself:
    in a Condition's wait not notified yet (Event, Queue, Future, Barrier and Semaphore wait
    there), in a join of a thread that still runs, in a selector's select (asyncio's loop), a
    thread pool's worker with nothing to do.
    Read from its frames, never from timing; anything else (a lock of its own, sleep) counts
    as running. A wait on `ours` (the server's own Condition) is the server's to tell."""
    try:
        code = frame.f_code
        if code in _CONDITION_WAIT:
            local = frame.f_locals
            waiter, condition = local.get("waiter"), local.get("self")
            return (condition is not ours and waiter is not None
                    and any(w is waiter for w in condition._waiters))
        if code in _JOIN:
            local = frame.f_locals
            joined = local.get("self")
            return (local.get("block", True) is True and joined is not None
                    and joined.ident in frames)
        if code in _selector_waits():
            return True
        pool = sys.modules.get("concurrent.futures.thread")
        if pool is not None and code is getattr(getattr(pool, "_worker", None), "__code__", 0):
            # a ThreadPoolExecutor's idle worker: no item in hand, none to take (it waits in
            # the queue's get, in C)
            local = frame.f_locals
            return local.get("work_item") is None and local["work_queue"].empty()
        return False
    except Exception:  # noqa: BLE001 - a frame the code changed under us: not known to wait
        return False
