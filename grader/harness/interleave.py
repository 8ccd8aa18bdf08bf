"""Force an interleaving of SQL statements between processes, through SQLite's trace callback.

Each claimer is a target process (`target_client.TargetProcess`) whose connection was opened
*gated*: the real connection is the judge's (`dbhost`), and during the claim its trace callback,
in the judge's process, asks before each statement runs (step, sql, holds_write, see
`target_client`) and blocks until the central loop answers "go" or "free": the code under grade
cannot run a statement the gate has not let through, nor hide one from it. `holds_write` is
worked out there by a `WriteLockWatch`. On the judge side each claimer's calls run in a thread of
their own (`children`), which hands every statement to one central loop and waits for its answer.
That loop
decides who goes on:

- `Lockstep` (the race's policy before `explore.Schedule`): statement number k of one process
  runs only once every other process has reached its statement k too (or finished). Two claims
  that read before they write therefore both read before either writes, on every run.
- the crash check (grader/checks/test_crash.py) needs no policy object: `children.run_to_kill`
  answers "go" to each statement of a claimer spawned with `kill_at=k` until it reports it is
  about to run statement k, then kills its process there with SIGKILL (statement k never runs).

Why the lockstep never waits on a correct claim: a process that holds the write lock may be
waited for by the other, which is then blocked *inside* SQLite (busy handler) and can never reach
the barrier. The parent knows when that is so, without any clock: the holder reported its
statement from inside a transaction that took the write lock, and the other was let go at a
statement that needs that lock (BEGIN IMMEDIATE, a write) and has not been heard from since. It
cannot get past that statement before the holder's transaction ends, so the holder runs on at
once (recorded in `passes`), and the barrier holds again from the holder's next statement outside
its transaction: the blocked process then runs its whole transaction before the holder goes on.
So a claim written as two transactions (the second one outside BEGIN IMMEDIATE) is caught on
every run too: the other claim always runs between them.

The clocks are only safety nets: a process that may hold the write lock waits at most `short`
seconds for a situation the rule above does not recognise, a process that holds none at most
`long` (a loaded machine); then the lockstep gives up for good (`gave_up`) and both run freely.
Giving up is recorded (`gave_up`), and the race check fails on it with a diagnosis of its own
(a lockstep that was not completed forced nothing: such a run is never a pass).

Messages inside the judge (plain tuples on queues, never on a pipe), claimer thread -> central
loop: ("ready",), ("at", step, sql, holds_write, asking, in_transaction, unfinished),
("done", outcome) (`unfinished`: dbhost.DbHost.unfinished of its connection);
central loop -> claimer thread: "start", "go", "free" (free: the target stops asking for the
rest of the claim; the statements it then runs come back with the claim's reply and are logged
when it ends), "stop". The race check now runs `explore.Schedule` (the same interface: every
order that can matter, one statement at a time) rather than a Lockstep.
"""

from __future__ import annotations

import re
import time
from dataclasses import dataclass, field

#: How long a process that may hold the write lock waits for the other at a barrier.
SHORT_WAIT = 0.3
#: How long a process holding no write lock waits for the other (only a safety net).
LONG_WAIT = 5.0
#: How long a claimer's thread waits for the central loop's answer (a safety net: the loop
#: always answers, or says "stop").
ANSWER_WAIT = 30.0


#: Whitespace and comments (`-- ...` to the end of the line, `/* ... */`) at the start of a
#: statement; SQLite skips them, and so does every reading of a statement here. An unclosed one
#: runs to the end of the text, as in SQLite.
_LEADING_COMMENTS = re.compile(r"\A(?:\s+|--[^\n]*(?:\n|\Z)|/\*.*?(?:\*/|\Z))*", re.S)


def bare(sql: str) -> str:
    """`sql` without the whitespace and comments it opens with: the statement SQLite runs."""
    return _LEADING_COMMENTS.sub("", sql, count=1)


def is_statement(sql: str) -> bool:
    """True for a statement the target ran itself, even one whose text opens with a comment;
    False for text that is only comments (SQLite traces a trigger program as '-- TRIGGER name')."""
    return bare(sql) != ""


def sql_line(sql: str, width: int = 90) -> str:
    """A statement on one line, cut to `width` characters (for reports)."""
    text = " ".join(sql.split())
    return text if len(text) <= width else text[: width - 1] + "…"


def verb(sql: str) -> str:
    """The statement's first word after its leading comments, upper-case ("" for none)."""
    words = bare(sql).split(None, 1)
    return words[0].upper() if words else ""


def takes_write_lock(sql: str) -> bool:
    """May this statement leave its connection holding the write (RESERVED) lock?

    Errs on the side of yes (anything but a plain read or a deferred BEGIN): a wrong yes only
    shortens a wait, a wrong no could make a blocked process wait for the other forever."""
    words = bare(sql).upper().split(None, 2)
    if not words:
        return False
    if words[0] == "BEGIN":
        return len(words) > 1 and words[1] in ("IMMEDIATE", "EXCLUSIVE")
    return words[0] not in ("SELECT", "VALUES", "EXPLAIN")


def changes_database(sql: str) -> bool:
    """May this statement change what is stored (a write or a COMMIT)? Reads cannot, nor can a
    BEGIN of any kind (BEGIN IMMEDIATE takes the write lock but stores nothing). The crash check
    kills a claim only after such a statement."""
    return verb(sql) != "BEGIN" and takes_write_lock(sql)


def waits_for_write_lock(sql: str, holds_write: bool) -> bool:
    """Does this statement wait while another connection holds the write lock?

    True for BEGIN IMMEDIATE/EXCLUSIVE and for a write by a connection that holds no write lock
    yet; False for reads (a RESERVED lock lets readers in), for ending a transaction (a read-only
    COMMIT needs no write lock; ROLLBACK never waits) and for a connection that holds the lock."""
    if holds_write or verb(sql) in ("", "COMMIT", "END", "ROLLBACK", "RELEASE"):
        return False
    return takes_write_lock(sql)


class WriteLockWatch:
    """Does a connection surely hold the write (RESERVED) lock when a statement is about to run?

    One per gated connection, in the judge (`target_client`), told of every statement
    traced on it, in order: `before(sql, in_transaction)` answers for `sql` (True: it runs in a
    transaction in which a statement that may take the write lock already ran), then counts it.
    Outside a transaction no lock is held between statements."""

    def __init__(self):
        self.wrote = False  # a statement that may take the write lock ran in this transaction

    def before(self, sql: str, in_transaction: bool) -> bool:
        if not in_transaction:
            self.wrote = False  # autocommit between statements: no lock is held
        holds = in_transaction and self.wrote
        if takes_write_lock(sql):
            self.wrote = True
        return holds


@dataclass
class Waiting:
    step: int
    since: float
    holds_write: bool
    sql: str = ""


@dataclass
class GaveUp:
    """The lockstep stopped: `actor` waited `waited` s at `step` for the others."""

    actor: str
    step: int
    waited: float  # the limit that ran out (short or long), not the measured time
    holds_write: bool


@dataclass
class Lockstep:
    """Parent side policy: statement k of each process runs once all have reached k (or ended)."""

    short: float = SHORT_WAIT
    long: float = LONG_WAIT
    clock: object = time.monotonic
    positions: dict = field(default_factory=dict)  # actor -> last step reported
    reported: dict = field(default_factory=dict)  # actor -> (sql, holds_write) of that step
    waiting: dict = field(default_factory=dict)  # actor -> Waiting
    done: set = field(default_factory=set)
    gave_up: GaveUp | None = None
    #: (actor, step, sql) in the order the statements were let go (or reported, once free)
    log: list = field(default_factory=list)
    #: (actor, step, [others]): actor held the write lock at `step` and ran on while the others
    #: waited inside SQLite for that lock.
    passes: list = field(default_factory=list)

    def join(self, actor: str) -> None:
        self.positions[actor] = 0

    def arrived(self, actor: str, step: int, sql: str, holds_write: bool,
                asking: bool = True, in_transaction: bool | None = None,
                unfinished: tuple[int, int] | None = None) -> None:
        self.positions[actor] = step
        self.reported[actor] = (sql, holds_write)
        if asking:
            self.waiting[actor] = Waiting(step, self.clock(), holds_write, sql)
        else:
            self.log.append((actor, step, sql))

    def finished(self, actor: str) -> None:
        self.done.add(actor)
        self.waiting.pop(actor, None)

    def releasable(self) -> list[tuple[str, str]]:
        """(actor, answer) for every waiting process that may go on now; forgets them."""
        released = []
        for actor, w in list(self.waiting.items()):
            if self.gave_up is not None:
                self._release(released, actor, "free")
                continue
            behind = [other for other, pos in self.positions.items()
                      if other != actor and other not in self.done and pos < w.step]
            blocked = [other for other in behind if self.holds_write(w) and self.blocked(other)]
            if blocked != behind:
                continue
            if blocked:
                self.passes.append((actor, w.step, blocked))
            self._release(released, actor, "go")
        return released

    def _release(self, released: list, actor: str, answer: str) -> None:
        w = self.waiting.pop(actor)
        self.log.append((actor, w.step, w.sql))
        released.append((actor, answer))

    @staticmethod
    def holds_write(w: Waiting) -> bool:
        """Does the waiting process surely hold the write lock? The gate's flag says a write was
        let go in this transaction; a ROLLBACK is where a write that failed (SQLITE_BUSY) ends
        up, so it is not taken as proof. (A rollback waits at the barrier as any statement.)"""
        return w.holds_write and verb(w.sql) not in ("", "ROLLBACK")

    def blocked(self, actor: str) -> bool:
        """Was `actor` let go at a statement that waits for a write lock, and not heard from
        since? While another process holds that lock, it is inside SQLite's busy handler."""
        if actor in self.waiting or actor in self.done or actor not in self.reported:
            return False
        return waits_for_write_lock(*self.reported[actor])

    def next_timeout(self) -> float | None:
        """Seconds until some waiting process's wait runs out (None: nobody waits)."""
        if not self.waiting:
            return None
        now = self.clock()
        return max(0.0, min(self._limit(w) - now for w in self.waiting.values()))

    def expire(self) -> None:
        """Give up the lockstep if some wait has run out."""
        now = self.clock()
        for actor, w in self.waiting.items():
            if self.gave_up is None and now >= self._limit(w):
                self.gave_up = GaveUp(actor, w.step, self._limit(w) - w.since, w.holds_write)

    def _limit(self, w: Waiting) -> float:
        return w.since + (self.short if w.holds_write else self.long)
