"""The statement gate of a target process's gated connections (the race's and the crash's
claimers, `children`): which of its connections are gated, the `WriteLockWatch` of each, and,
during a claim on one, the judge's statement callable asked before each of its statements (step,
sql, holds_write), whose answer ("go" or "free") lets it run. Split from target_client, whose
`TargetProcess` holds one `Gates` and calls `before` from its trace callback (in the judge's
process: the code under grade cannot run a statement the gate has not let through, nor hide
one from it). What the central loop answers: interleave, explore, children.

May import: the standard library, `grader.harness.wire` and the judge's own modules below
target_client (interleave; a call under way is target_fields' CallFrame). Never target_client.
"""

from __future__ import annotations

import time

from grader.harness import wire

from .interleave import WriteLockWatch, is_statement


class Gates:
    """The gated connections of one target process, by name."""

    def __init__(self):
        self.names: frozenset = frozenset()  # names of the connections opened gated
        self.watches: dict[str, WriteLockWatch] = {}  # the gated connections'

    def __contains__(self, name: str) -> bool:
        return name in self.names

    def open(self, name: str) -> None:
        """Connection `name` was opened gated: its claims ask before each statement."""
        self.names = self.names | {name}
        self.watches[name] = WriteLockWatch()

    def close(self, name: str) -> None:
        """Connection `name` is closed, or opened again (gated again only if `open` says)."""
        self.names = self.names - {name}
        self.watches.pop(name, None)

    def before(self, frame, name: str, sql: str, db, stopping: bool) -> BaseException | None:
        """Statement `sql`, traced on connection `name` of `db` (dbhost.DbHost) during the
        innermost call under way (`frame`, a CallFrame, or None), is about to run: on a gated
        connection its watch is told, and during a claim on it (not yet answered "free", no
        error kept: `stopping`) the claim's statement callable is asked, the wait at the gate
        counted as the judge's time. What that callable raised (or a wrong answer, as a
        TypeError) is returned, the statement interrupted first so that it changes nothing."""
        watch = self.watches.get(name)
        if watch is None or not is_statement(sql):
            return None
        holds_write = watch.before(sql, db.in_transaction(name))
        if frame is None or frame.op != "claim" or frame.conn != name or \
                frame.statement is None:
            return None
        frame.step += 1
        if frame.free or stopping:
            return None
        asked = time.monotonic()
        try:
            answer = frame.statement(frame.step, wire.bounded(sql, wire.MAX_SQL), holds_write)
            if type(answer) is not str or answer not in ("go", "free"):
                raise TypeError(f"the judge's statement callable answered {answer!r}: "
                                "only 'go' or 'free'")
        except BaseException as exc:  # stop here: the statement must not run
            db.interrupt(name)
            return exc
        finally:  # the wait at the gate is the judge's time, not the target's
            if db.deadline is not None:
                db.deadline += time.monotonic() - asked
        frame.free = answer == "free"
        return None
