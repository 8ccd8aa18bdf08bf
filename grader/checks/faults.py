"""Make a statement inside the target fail on purpose, and ask what the target left behind:
an open transaction on `lab.conn`, or a lock that keeps other connections from writing.

`injected_fault(lab, status)` adds a TEMP trigger on the graded connection (`lab.conn`) that
aborts every UPDATE of jobs that would set `status` to the given value (and every INSERT of a
row with it, for a target that rewrites rows whole with INSERT OR REPLACE), so the fault hits the
target's own statement whatever its SQL looks like (a separate quarantine UPDATE, a combined
one, an UPDATE ... RETURNING). RAISE(ABORT) undoes that one statement and leaves the
transaction open: what happens next is up to the target (roll back and re-raise, the contract
says). The trigger is TEMP, so it lives on `lab.conn` only and other connections never see it.
`injected_fault(lab, status, kind=ERROR)` makes the same writes fail otherwise: the trigger calls
harness_fail, a SQL function of the judge's whose body raises, so the real sqlite3 raises
`OperationalError: user-defined function raised exception`, a database error that is not about a
lock (as a full disk or an I/O error would be), and SQLite undoes that one statement as for
ABORT. A target that re-raises only "database is locked" and turns every other database error
into None/False passes the ABORT fault's IntegrityError through and meets this one. The
authorizer (grader/harness/judge/dbhost.py) lets only a trigger the judge created call harness_count
and harness_fail, and keeps the code from dropping or replacing the judge's triggers, so the
code can neither fake a firing nor switch the fault off.
It counts its firings (`fault.fired`, through harness_count in the target process), so a check can
tell "the target never ran such an UPDATE" from "the target swallowed the error". Never running it
is "nothing to inject into" only where the situation does not need that write: where it does (the
job is claimable, the stamp is current), a fault that never fired means the function wrote nothing
where it had to, and the check fails (test_transactions.expect_wrote), never passes.

`write_lock_held(lab)` takes the write lock on a connection of the grader's own (`BEGIN
IMMEDIATE`) and holds it until the block ends: a call made inside on a connection with a short
busy timeout surely meets "database is locked" (the lock is never released while it waits), so
the verdict does not depend on timing and nothing sleeps.

`others_can_write(lab)` opens a fresh connection with no busy timeout and takes the write lock
at once (`BEGIN IMMEDIATE`, then `ROLLBACK`): no waiting, so the answer does not depend on timing.
"""

from __future__ import annotations

import contextlib
import sqlite3

from . import txshape
from grader.harness.judge.lockdown import FAILER, FAILER_MESSAGE
from grader.harness.judge.outcomes import judge_write
from grader.harness.judge.scenario import Lab
from grader.harness.wire.values import RaisedInTarget, chained

#: The kinds of injected fault: SQLite's RAISE(ABORT) (an IntegrityError with the world's
#: message), or a judge's SQL function that raises (an OperationalError that is not a lock).
ABORT, ERROR = "abort", "error"
KINDS = (ABORT, ERROR)


class Fault:
    """How often the injected fault fired (0: the target never ran such an UPDATE), counted in
    the target process by the trigger's call of harness_count(). Its triggers' names, counter
    key and message are the world's (`leaselab_injected_fault...` in the lesson's), so nothing
    in the database says which check is running."""

    def __init__(self, lab: Lab, kind: str = ABORT) -> None:
        self.lab, self.kind = lab, kind
        self.trigger = lab.world.label("fault-trigger", "leaselab_injected_fault")
        self.key = lab.world.label("fault-key", "leaselab_fault_fired")
        self.base = lab.ask(lambda target: target.count(self.key))

    @property
    def fired(self) -> int:
        return self.lab.ask(lambda target: target.count(self.key)) - self.base


def fault_message(lab: Lab) -> str:
    """The error the injected fault raises (SQLite's ABORT with this message): the note that
    injects it names it (`message`), so that a report can say, wherever the error shows, that it
    is the grader's fault (grader.report.sentences.mark_faults), the world's letters saying nothing."""
    return lab.world.label("fault-message", "injected fault")


def fault_error(lab: Lab, kind: str) -> str:
    """What the error a fault of `kind` raises says (its message, or a piece of it)."""
    return FAILER_MESSAGE if kind == ERROR else fault_message(lab)


@contextlib.contextmanager
def injected_fault(lab: Lab, status: str, kind: str = ABORT):
    """While inside: any UPDATE on lab.conn that moves a job to `status` fails (`kind` ABORT:
    IntegrityError, SQLite's RAISE(ABORT); ERROR: OperationalError, harness_fail raised)."""
    if kind not in KINDS:
        raise ValueError(f"no fault of kind {kind!r}")
    fault = Fault(lab, kind)
    trigger = fault.trigger
    fail = (f"SELECT {FAILER}()" if kind == ERROR
            else f"SELECT RAISE(ABORT, '{fault_message(lab)}')")
    abort = f" AND harness_count('{fault.key}') BEGIN {fail}; END"
    lab.conn.execute(f"CREATE TEMP TRIGGER {trigger}_update BEFORE UPDATE ON jobs"
                     f" WHEN NEW.status = '{status}' AND OLD.status IS NOT '{status}'" + abort)
    # A row rewritten whole (INSERT OR REPLACE, DELETE then INSERT) fires no UPDATE trigger.
    lab.conn.execute(f"CREATE TEMP TRIGGER {trigger}_insert BEFORE INSERT ON jobs"
                     f" WHEN NEW.status = '{status}'" + abort)
    if kind == ERROR:
        lab.note("note.fault-injected-error", status=status, error=FAILER_MESSAGE)
    else:
        lab.note("note.fault-injected", status=status, message=fault_message(lab))
    try:
        yield fault
    finally:
        for kind in ("update", "insert"):
            lab.conn.execute(f"DROP TRIGGER IF EXISTS temp.{trigger}_{kind}")
        lab.note("note.fault-removed")


def attempt(lab: Lab, call) -> tuple[object, BaseException | None]:
    """Run `call` (a lambda over lab.claim/finish/work_once): (what it returned, what it raised)."""
    returned = []
    error = lab.raises(lambda: returned.append(call()))
    return (returned[0] if returned else None), error


def is_the_fault(lab: Lab, exc: BaseException | None, kind: str = ABORT) -> bool:
    """`exc` (what the target raised) is the injected error of a fault of `kind`, or wraps it
    (raise ... from it, or raised while handling it), as its traceback would show it."""
    if exc is None:
        return False
    return any(fault_error(lab, kind) in line for line in _lines(exc))


def hidden_fault(lab: Lab, exc: BaseException | None, kind: str = ABORT) -> str | None:
    """The line of the injected error of a fault of `kind` that `exc` hides (`raise ... from
    None` while handling it: its traceback no longer shows it), or None."""
    error = fault_error(lab, kind)
    return _hidden(exc, lambda line: error in line)


def _hidden(exc: BaseException | None, says) -> str | None:
    """The first line `exc` hides (`_hidden_lines`) for which `says(line)`, or None."""
    if exc is None:
        return None
    return next((line for line in _hidden_lines(exc) if says(line)), None)


def _lines(exc: BaseException) -> list[str]:
    """`Type: message` of the exception and of each one in its chain as Python's traceback
    shows it: its __cause__, else its __context__ unless __suppress_context__ hides it
    (`raise ... from None`)."""
    if isinstance(exc, RaisedInTarget):
        return [exc.message, *exc.chain]
    lines, seen = [], set()
    while exc is not None and id(exc) not in seen:
        seen.add(id(exc))
        lines.append(f"{type(exc).__name__}: {exc}")
        exc = chained(exc)
    return lines


def _hidden_lines(exc: BaseException) -> list[str]:
    """`Type: message` of the exception a `raise ... from None` in `exc`'s shown chain hid, and
    of its own shown chain; [] if nothing was hidden."""
    if isinstance(exc, RaisedInTarget):
        return list(exc.hidden)
    seen = set()
    while exc is not None and id(exc) not in seen:
        seen.add(id(exc))
        if exc.__cause__ is None and exc.__suppress_context__ and exc.__context__ is not None:
            return _lines(exc.__context__)
        exc = chained(exc)
    return []


@contextlib.contextmanager
def write_lock_held(lab: Lab, busy_ms: int):
    """While inside, another connection holds the write lock; `busy_ms` is what the connection
    given to the target waits (for the timeline)."""
    holder = sqlite3.connect(str(lab.path), timeout=0, isolation_level=None)
    try:
        with judge_write():  # refused at once: a lock the code under grade still holds
            holder.execute("BEGIN IMMEDIATE")
        lab.note("note.write-lock-held", busy_ms=busy_ms)
        lab.lock_held_busy_ms = busy_ms  # a call that hangs meanwhile says why it should not
        yield
    finally:
        lab.lock_held_busy_ms = None
        if holder.in_transaction:
            holder.execute("ROLLBACK")
            lab.note("note.write-lock-released")
        holder.close()


def is_locked_error(exc: BaseException | None) -> bool:
    """`exc` is SQLite's error saying the database is locked, or an error of another kind that
    wraps one (raise ... from). A sqlite3 error with another message is not: raised while
    handling "database is locked" (a ROLLBACK after a BEGIN that failed: "cannot rollback - no
    transaction is active"), it replaced the error the caller needed (`masked_locked_error`)."""
    if exc is None:
        return False
    lines = _lines(exc)
    if _is_sqlite_error(exc):
        return _says_locked(lines[0])
    return any(_says_locked(line) for line in lines[1:])


def hidden_locked_error(exc: BaseException | None) -> str | None:
    """The "database is locked" line `exc` hides (`raise ... from None`), or None."""
    return _hidden(exc, _says_locked)


def masked_locked_error(exc: BaseException | None) -> str | None:
    """The "database is locked" line a sqlite3 error of another message was raised while
    handling (it masks it), or None."""
    if exc is None or not _is_sqlite_error(exc):
        return None
    lines = _lines(exc)
    if _says_locked(lines[0]):
        return None
    return next((line for line in lines[1:] if _says_locked(line)), None)


def _is_sqlite_error(exc: BaseException) -> bool:
    if isinstance(exc, RaisedInTarget):
        return exc.sqlite_error is not None
    return isinstance(exc, sqlite3.Error)


def _says_locked(line: str) -> bool:
    """`Type: message` is SQLite's OperationalError saying a database (or table) is locked."""
    kind, _, message = line.partition(":")
    return kind == "OperationalError" and "locked" in message


@contextlib.contextmanager
def read_lock_held(lab: Lab, busy_ms: int):
    """While inside, another connection holds a read lock (a deferred transaction that has
    read): a write can start on the connection given to the target, but its COMMIT cannot
    (it needs every reader gone), so it surely meets "database is locked" after `busy_ms`."""
    reader = sqlite3.connect(str(lab.path), timeout=0, isolation_level=None)
    try:
        reader.execute("BEGIN")
        reader.execute("SELECT count(*) FROM jobs").fetchone()
        lab.note("note.read-lock-held", busy_ms=busy_ms)
        yield
    finally:
        if reader.in_transaction:
            reader.execute("ROLLBACK")
            lab.note("note.read-lock-released")
        reader.close()


def others_can_write(lab: Lab) -> str | None:
    """None if another connection can take the write lock right now, else SQLite's error."""
    # Plain sqlite3.connect: lab.connect would also set the journal mode, changing the file.
    probe = sqlite3.connect(str(lab.path), timeout=0, isolation_level=None)
    try:
        probe.execute("BEGIN IMMEDIATE")
        probe.execute("ROLLBACK")
        return None
    except sqlite3.OperationalError as exc:
        return str(exc)
    finally:
        probe.close()


def expect_no_transaction_left(lab: Lab, function: str) -> None:
    """After the last call returned: no transaction open on lab.conn."""
    if lab.conn.in_transaction:
        lab.fail("tx-left-open", function=function,
                 statements=txshape.listing(lab.statements_of(lab.calls)))


def expect_others_can_write(lab: Lab, function: str) -> None:
    """Right now another connection can take the write lock without waiting."""
    locked = others_can_write(lab)
    if locked:
        lab.fail("tx-locked-after-error", function=function, error=locked)
