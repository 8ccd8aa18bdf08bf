"""Every interleaving of two claims' statements whose order can matter, one schedule per run.

The race check (grader/checks/test_race.py) runs two claimers (`children`), each on a gated
connection: before each statement of a claim runs, the judge's trace callback asks the central
loop (`children.race`), which here is a `Schedule`. A Schedule lets exactly one statement run at
a time, and decides which only once every claimer still running is waiting at its gate: a run is
a sequence of role letters, the *schedule* ("AABAB...": A's statement, A's next, then B's...),
and the same schedule on a fresh database gives the same run, every time.

Which statement would wait inside SQLite for the other's lock is known without a clock: both
real connections are the judge's, and each gate reports its statement, whether its connection
has a transaction open, whether that transaction already took the write lock, and which of its
cursors still run a statement (`unfinished`: rows left unread; dbhost.DbHost.unfinished reads
it off the real cursors). The lock each claimer holds between statements follows from that
(rollback journal): RESERVED once a transaction took the write lock, SHARED in a transaction
that has run a statement since its BEGIN, none otherwise; and at least SHARED while a cursor
of its runs a read, in autocommit or past its COMMIT too (RESERVED while one runs a write,
UPDATE ... RETURNING read in part). A statement that needs the write lock (BEGIN IMMEDIATE, a
first write) waits while the other holds RESERVED, unless its own connection already reads (a
transaction that read, or a cursor left running: then SQLite answers SQLITE_BUSY at once, a
lock upgrade that could deadlock); BEGIN EXCLUSIVE, a COMMIT that publishes writes and a write
outside a transaction also wait while the other holds SHARED. Such a statement is not
*enabled*: it is never let go while the lock it waits for is held, so a schedule never leaves a
claimer waiting inside SQLite. The clock is only a safety net for a wait this reasoning does
not know (a lock kept by `PRAGMA locking_mode = EXCLUSIVE`; an unfinished statement on a Python
whose sqlite3 does not let the judge see it): a claimer let go that is not heard from within
`STALL_WAIT` s while its statement runs (the central loop tells, `inside`) is taken as waiting
(recorded in `stalls`), and the other goes on at once. One that runs code of its own for
`PAUSE_WAIT` s between statements (not waiting for the database: a pause meant to let the
other claim alone) stops the schedule: that run forced nothing and is never a pass.

Which schedules are run (`explore`): a first one by the default rule (the claimer that ran last
goes on while it can, A first), then, as in dynamic partial-order reduction, for every
statement of a run the latest statement of the other claimer it *conflicts* with and does not
already follow (happens-before: conflicts, and a write lock let go before the other takes it),
at which its claimer could have gone: the schedule that lets that claimer go there instead is
run next, unless a run already started that way; the claimer passed over there sleeps until a
statement conflicting with its own runs (sleep sets: no two runs differ only in the order of
statements that do not conflict).
Statements conflict when their order can change what either sees: one publishes writes (a
COMMIT of a transaction that wrote, or a write outside any transaction) and the other reads or
writes the database, or both take the write lock (whoever takes it first goes first). Whether a
statement reads a table is what SQLite says: the judge's connection runs it, and its authorizer
names every table the statement reads or writes when it is prepared (`Pending.tables`); one
that touches none (`SELECT 1`, `SELECT sqlite_version()`, a PRAGMA) conflicts with nothing, so
a claim may run such statements anywhere and still have 2 schedules. Reads
never conflict with reads, nor BEGIN, ROLLBACK or a read-only COMMIT with anything: SQLite's
locks decide the rest. Two claims that each run in one BEGIN IMMEDIATE transaction have two
schedules (A's whole claim first, or B's); a claim that reads before its transaction has one
more per read and write that can land in the other's window. Exploring stops at the first run
the caller judges wrong, or after `MAX_SCHEDULES` runs (reported as `capped`, never a pass).

The crash check's kill points are the same idea with one claimer (`kill_points`): a kill just
before each statement boundary of a rehearsed claim, reduced to the boundaries where what a
crash leaves can differ (after a statement that may change the database file), all of them up
to `MAX_KILL_POINTS`; more is reported (`KillPoints.capped`), never silently skipped.

Why a kill point is not also raced (one claimer killed at a boundary while the other runs
through a schedule), although issue 28 asked whether it should be: it would show nothing the two
checks do not show apart, and it costs more than the budget. To the other connection a process
killed before statement k is a ROLLBACK at that boundary (rollback journal: its uncommitted
writes were never visible, its locks go with it, a hot journal is played back by SQLite before
anyone reads), so every outcome of "A killed at k, B racing" is an outcome of a race in which A
ends at k: B's statements against A's first k - 1 are the race's schedules (which already
reorder B's against each of A's that conflict), and what A's death leaves on the file is the
crash check's kill point k, alone. The one event the product adds, B let go past a lock freed
by the death rather than by COMMIT or ROLLBACK, is the same event for B (dbhost.DbHost.crash
closes the connection). And each raced kill point is a pair of target processes per schedule:
the reference's two kill points by its two schedules are 8 processes more, where the race's
4 already cost about 0.4 s of wall time on 2 cores (`-k race-one-winner` 0.9 to 1.1 s, `-k
crash` 0.8 to 1.0 s, a grade of no check 0.5 to 0.7 s; measured 2026-12-05 under a load
average of 12), and the whole grade may grow by 50 ms.

This module imports the standard library and `interleave` only; it runs nothing itself.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Callable

from .interleave import (GaveUp, changes_database, takes_write_lock, verb, waits_for_write_lock,
                         words)

#: How many schedules one exploration runs at most (a correct claim needs 2).
MAX_SCHEDULES = 12
#: How many statements one run lets go before giving up (a claim that retries for ever).
MAX_STEPS = 200
#: How long a claimer let go may stay unheard of, inside a statement, before it is taken as
#: waiting inside SQLite for a lock the model does not know of (only a safety net).
STALL_WAIT = 0.5
#: How long a claimer may run code of its own (not a statement) between two statements before
#: the schedule is given up (only a safety net: a run given up is never a pass).
PAUSE_WAIT = 5.0
#: How many kill points the crash check runs at most (each is a process of its own).
MAX_KILL_POINTS = 24
#: The role letters of a schedule, in the order the claimers joined.
LETTERS = "AB"

NONE, SHARED, RESERVED = 0, 1, 2

_ENDS = ("COMMIT", "END", "ROLLBACK", "RELEASE")
_NO_DATA = ("", "BEGIN", "COMMIT", "END", "ROLLBACK", "RELEASE", "SAVEPOINT", "PRAGMA")


@dataclass
class Pending:
    """A claimer waiting at its gate: the statement it is about to run and its connection's
    state before it."""

    step: int
    sql: str
    holds_write: bool
    in_transaction: bool
    #: the lock its connection's unfinished statements hold (a cursor whose rows were not all
    #: read): SHARED for a read, RESERVED for a write (UPDATE ... RETURNING); NONE for none,
    #: or where the judge cannot tell (then only the safety net knows of such a lock)
    unfinished: int = NONE
    #: the tables the statement reads or writes, as SQLite's authorizer told when the judge's
    #: connection prepared it (dbhost.DbHost.tables_read); None where that is not known
    tables: frozenset | None = None


@dataclass
class Step:
    """One statement let go, in schedule order."""

    letter: str
    actor: str
    step: int
    sql: str
    enabled: str  # the letters that could have gone instead (this one included), sorted
    lock: bool  # takes the write lock (it held none)
    touches: bool  # reads or writes the database's data
    publishes: bool  # makes writes visible to the other connection
    releases: bool = False  # ends a transaction that held the write lock
    asleep: str = ""  # the letter that was asleep here (its orders from here were run already)


def effect(sql: str, in_transaction: bool, holds_write: bool,
           tables: frozenset | None = None) -> tuple[bool, bool, bool, bool]:
    """(lock, touches, publishes, releases) of `sql`, run on a connection in this state.

    `tables`: the tables it reads or writes, as SQLite's authorizer told (None: not known).
    A statement that touches no table (`SELECT 1`, `SELECT sqlite_version()`, `SELECT
    total_changes()`) reads nothing another connection's COMMIT can change: it conflicts with
    nothing, wherever it runs (the contract lets such statements run anywhere)."""
    v = verb(sql)
    lock = v != "PRAGMA" and waits_for_write_lock(sql, holds_write) and \
        not (v == "BEGIN" and in_transaction)
    touches = v not in _NO_DATA and (tables is None or bool(tables) or takes_write_lock(sql))
    publishes = (v in ("COMMIT", "END") and holds_write) or \
        (not in_transaction and touches and takes_write_lock(sql))
    releases = v in _ENDS and holds_write
    return lock, touches, publishes, releases


def ordered(a: Step, b: Step) -> bool:
    """Does `a`, run first, order `b` after it (a conflict, or `b` waits for the write lock `a`
    lets go of)? The happens-before of a run."""
    return conflict(a, b) or (a.releases and b.lock)


def conflict(a: Step, b: Step) -> bool:
    """Can the order of statements `a` and `b` (of different claimers) change the outcome?"""
    return (a.lock and b.lock) or (a.publishes and b.touches) or (b.publishes and a.touches)


@dataclass
class Schedule:
    """The central loop's policy (what `children.race` drives): follow `prefix` (role letters)
    while it can, then the default rule; one statement at a time."""

    prefix: str = ""
    #: (letter, its statement) asleep from the last position of `prefix`: that claimer's
    #: statement going first there was explored already; it sleeps until a statement
    #: conflicting with it runs (a sleep set: orders that only swap independent statements are
    #: not run twice)
    sleeper: tuple | None = None
    clock: Callable[[], float] = time.monotonic
    stall: float = STALL_WAIT
    pause: float = PAUSE_WAIT
    #: actor -> is its statement running (in the judge: the request being served)? Set by the
    #: central loop (children.race); None: taken as yes.
    inside: Callable[[str], bool] | None = None
    max_steps: int = MAX_STEPS
    order: list = field(default_factory=list)  # actors in join order: A, B
    positions: dict = field(default_factory=dict)  # actor -> last step reported
    waiting: dict = field(default_factory=dict)  # actor -> Pending
    done: set = field(default_factory=set)
    heard: dict = field(default_factory=dict)  # actor -> when it was last let go (or joined)
    stalled: set = field(default_factory=set)
    since_begin: dict = field(default_factory=dict)  # statements let go since the last BEGIN
    last_run: dict = field(default_factory=dict)  # actor -> (sql, in_transaction, holds_write)
    kept: dict = field(default_factory=dict)  # actor -> `Pending.unfinished` when last let go
    steps: list = field(default_factory=list)
    #: (actor, step, sql) in the order the statements were let go (or ran, once free)
    log: list = field(default_factory=list)
    stalls: list = field(default_factory=list)  # (actor, step): taken as waiting, on the clock
    diverged: int | None = None  # the position where `prefix` could not be followed
    gave_up: GaveUp | None = None
    why: str = ""  # why it gave up: "steps" (MAX_STEPS) or "paused" (code of its own too long)

    # -- the central loop's interface ---------------------------------------------------------
    def join(self, actor: str) -> None:
        self.order.append(actor)
        self.positions[actor] = 0
        self.since_begin[actor] = 0
        self.heard[actor] = self.clock()

    def letter(self, actor: str) -> str:
        return LETTERS[self.order.index(actor)]

    @property
    def schedule(self) -> str:
        """The run so far as role letters: replayable as a prefix."""
        return "".join(s.letter for s in self.steps)

    def arrived(self, actor: str, step: int, sql: str, holds_write: bool, asking: bool = True,
                in_transaction: bool | None = None,
                unfinished: tuple[int, int] | None = None,
                tables: frozenset | None = None) -> None:
        """`actor` waits at its gate before statement `step` (`asking`; otherwise it ran without
        asking, after "free": logged). `in_transaction`: its connection has a transaction open;
        `unfinished`: (reads, writes), its cursors whose statement still runs (each keeps its
        lock; dbhost.DbHost.unfinished), None where the judge cannot tell; `tables`: the tables
        the statement touches, as SQLite's authorizer told (dbhost.DbHost.tables_read), None
        where not known."""
        self.positions[actor] = step
        self.stalled.discard(actor)
        if not asking:  # after "free": logged as it ran
            self.log.append((actor, step, sql))
            return
        in_tx = bool(holds_write) if in_transaction is None else bool(in_transaction)
        if not in_tx:
            self.since_begin[actor] = 0
        reads, writes = unfinished if unfinished is not None else (0, 0)
        kept = RESERVED if writes else SHARED if reads else NONE
        self.waiting[actor] = Pending(step, sql, bool(holds_write), in_tx, kept,
                                      None if tables is None else frozenset(tables))

    def finished(self, actor: str) -> None:
        self.done.add(actor)
        self.waiting.pop(actor, None)
        self.stalled.discard(actor)

    def releasable(self) -> list[tuple[str, str]]:
        """The one claimer that runs its next statement now, once nobody else is under way."""
        if self.gave_up is not None:
            return [(actor, "free") for actor in self._pop_all()]
        if self._under_way():
            return []
        candidates = [a for a in self.order if a in self.waiting]
        if not candidates:
            return []
        if len(self.steps) >= self.max_steps:
            actor = candidates[0]
            w = self.waiting[actor]
            self.gave_up = GaveUp(actor, w.step, 0.0, w.holds_write)
            self.why = "steps"
            return [(a, "free") for a in self._pop_all()]
        enabled = [a for a in candidates if not self.blocked(a)] or candidates
        asleep = self._asleep()
        awake = [a for a in enabled if self.letter(a) != asleep] or enabled
        actor = self._choose(awake)
        self._let_go(actor, enabled, asleep)
        return [(actor, "go")]

    def next_timeout(self) -> float | None:
        """Seconds until a claimer under way counts as stalled (None: no one else waits)."""
        if not self.waiting or self.gave_up is not None:
            return None
        now = self.clock()
        limits = [self.heard[a] + (self.stall if now < self.heard[a] + self.stall else self.pause)
                  - now for a in self._moving()]
        return max(0.0, min(limits)) if limits else None

    def expire(self) -> None:
        """A claimer under way for `stall` s inside a statement is taken as waiting for a lock
        (the others go on); one that has run code of its own for `pause` s, not a statement,
        stops the schedule for good (`gave_up`: nothing more is forced, never a pass)."""
        if not self.waiting or self.gave_up is not None:
            return
        now = self.clock()
        for actor in self._moving():
            if now < self.heard[actor] + self.stall:
                continue
            if self.inside is None or self.inside(actor):
                self.stalled.add(actor)
                self.stalls.append((actor, self.positions.get(actor, 0)))
            elif now >= self.heard[actor] + self.pause:
                self.gave_up = GaveUp(actor, self.positions.get(actor, 0), self.pause, False)
                self.why = "paused"
                return

    # -- the lock model -----------------------------------------------------------------------
    def lock_of(self, actor: str) -> int:
        """The lock `actor`'s connection holds now (as far as the gates tell)."""
        if actor in self.done:
            return NONE  # its connection is closed by the time it is done
        w = self.waiting.get(actor)
        if w is not None:
            if w.holds_write:
                return RESERVED
            read = SHARED if w.in_transaction and self.since_begin[actor] > 0 else NONE
            return max(read, w.unfinished)
        if actor not in self.last_run:  # not at its first statement yet
            return NONE
        sql, in_tx, holds = self.last_run[actor]  # under way (stalled): what it last ran
        v = verb(sql)
        if v in _ENDS:
            return self.kept[actor]  # a cursor left running keeps its lock past COMMIT
        if holds or (v != "PRAGMA" and takes_write_lock(sql)):
            return RESERVED
        return max(SHARED if in_tx or v != "BEGIN" else NONE, self.kept[actor])

    def blocked(self, actor: str) -> bool:
        """Would `actor`'s waiting statement wait inside SQLite for another claimer's lock?"""
        w = self.waiting[actor]
        others = max((self.lock_of(o) for o in self.order if o != actor), default=NONE)
        if others == NONE:
            return False
        v = verb(w.sql)
        # its connection reads already (a transaction that ran a statement, or a cursor left
        # running): taking the write lock while the other holds it is SQLITE_BUSY at once, no
        # wait (an upgrade that could deadlock)
        reads = (w.in_transaction and (w.holds_write or self.since_begin[actor] > 0)) or \
            w.unfinished != NONE
        upgrade_refused = reads and others == RESERVED
        first = words(w.sql)[:2]
        if v == "BEGIN":
            if w.in_transaction:
                return False  # an error at once: a transaction within a transaction
            kind = first[1].upper() if len(first) > 1 else ""
            if kind == "EXCLUSIVE":
                return not upgrade_refused
            return kind == "IMMEDIATE" and others == RESERVED and not reads
        if v in ("COMMIT", "END"):
            return w.holds_write and others == SHARED
        if v in ("ROLLBACK", "RELEASE", "SAVEPOINT", "PRAGMA", ""):
            return False
        if not waits_for_write_lock(w.sql, w.holds_write or w.unfinished == RESERVED):
            return False  # a read, or a write under a write lock it holds
        if not w.in_transaction:
            return not upgrade_refused  # autocommit write: RESERVED now, EXCLUSIVE at its end
        return others == RESERVED and not reads

    # -- inside --------------------------------------------------------------------------------
    def _moving(self) -> list[str]:
        """Claimers under way: let go (or started) and not heard from since."""
        return [a for a in self.order
                if a not in self.waiting and a not in self.done and a not in self.stalled]

    def _under_way(self) -> bool:
        return bool(self._moving())

    def _choose(self, enabled: list[str]) -> str:
        pos = len(self.steps)
        if pos < len(self.prefix) and self.diverged is None:
            want = self.prefix[pos]
            for actor in enabled:
                if self.letter(actor) == want:
                    return actor
            self.diverged = pos
        last = self.steps[-1].actor if self.steps else None
        return last if last in enabled else enabled[0]

    def _asleep(self) -> str:
        """The letter asleep at this position ("" for none): from the prefix's last position,
        where the other letter was run already."""
        if self.sleeper is None or len(self.steps) < len(self.prefix) - 1:
            return ""
        return self.sleeper[0]

    def _let_go(self, actor: str, enabled: list[str], asleep: str) -> None:
        w = self.waiting.pop(actor)
        lock, touches, publishes, releases = effect(w.sql, w.in_transaction, w.holds_write,
                                                    w.tables)
        step = Step(self.letter(actor), actor, w.step, w.sql,
                    "".join(sorted(self.letter(a) for a in enabled)), lock, touches, publishes,
                    releases, asleep)
        self.steps.append(step)
        if asleep and (step.letter == asleep or conflict(self.sleeper[1], step)):
            self.sleeper = None  # woken: what runs now can change what it would do
        self.log.append((actor, w.step, w.sql))
        self.last_run[actor] = (w.sql, w.in_transaction, w.holds_write)
        self.kept[actor] = w.unfinished
        self.since_begin[actor] = 0 if verb(w.sql) == "BEGIN" else self.since_begin[actor] + 1
        self.heard[actor] = self.clock()

    def _pop_all(self) -> list[str]:
        actors = [a for a in self.order if a in self.waiting]
        for actor in actors:
            w = self.waiting.pop(actor)
            self.log.append((actor, w.step, w.sql))
        return actors


def backtracks(steps: list[Step]) -> list[tuple[str, tuple]]:
    """The prefixes to run next after a run of `steps`: for each statement, the latest earlier
    statement of the other claimer it conflicts with at which this claimer could have gone
    instead (where it could not, it waited for the other's lock: the race is with the statement
    that took that lock, further back); the prefix that makes it go there. In the order of their
    positions, each with the claimer put to sleep there: (prefix, (letter, its statement)). A
    claimer asleep at a position is not tried there (its orders from there were run)."""
    found = set()
    clocks: list[dict] = []  # per step: letter -> its latest step that happens before (or is) it
    last: dict = {}  # letter -> its latest step so far
    for j, s in enumerate(steps):
        prev = clocks[last[s.letter]] if s.letter in last else {}
        # the race: the latest conflicting statement of the other claimer that does not happen
        # before s's claimer's previous statement, at which s's claimer could have gone
        for i in range(j - 1, prev.get(_other(s.letter), -1), -1):
            t = steps[i]
            if t.letter != s.letter and conflict(t, s) and s.letter in t.enabled and \
                    t.asleep != s.letter:
                found.add(i)
                break
        clock = dict(prev)
        for i in range(j):
            if steps[i].letter != s.letter and ordered(steps[i], s):
                for letter, k in clocks[i].items():
                    clock[letter] = max(clock.get(letter, -1), k)
        clock[s.letter] = j
        clocks.append(clock)
        last[s.letter] = j
    schedule = "".join(s.letter for s in steps)
    out = []
    for i in sorted(found):
        other = next(c for c in steps[i].enabled if c != schedule[i])
        out.append((schedule[:i] + other, (schedule[i], steps[i])))
    return out


def _other(letter: str) -> str:
    return LETTERS[1 - LETTERS.index(letter)]


@dataclass
class Exploration:
    """How exploring ended: `found` is the first run judged wrong (None: none was)."""

    runs: int = 0
    found: object = None  # what `run` returned for the wrong run
    schedule: str = ""  # its schedule (or the last run's)
    last: object = None  # what `run` returned for the last run
    capped: bool = False  # stopped at the cap with schedules left to run
    left: int = 0  # schedules left to run when capped
    schedules: list = field(default_factory=list)  # every schedule run, in order


def explore(run: Callable[[str, tuple | None], tuple[Schedule, bool, object]],
            cap: int = MAX_SCHEDULES, first: str = "") -> Exploration:
    """Run schedules (`run(prefix, sleeper) -> (its Schedule(prefix, sleeper), wrong?,
    anything)`) depth first from `first` until one is wrong, none is left, or `cap` ran."""
    result = Exploration()
    todo: list[tuple[str, tuple | None]] = [(first, None)]
    started: set[str] = set()  # every prefix of a run's schedule
    while todo:
        prefix, sleeper = todo.pop()
        if prefix in started:
            continue
        if result.runs >= cap:
            result.capped = True
            result.left = 1 + len({p for p, _ in todo if p not in started} - {prefix})
            return result
        policy, wrong, value = run(prefix, sleeper)
        result.runs += 1
        schedule = policy.schedule
        result.schedules.append(schedule)
        result.schedule, result.last = schedule, value
        started.update(schedule[:k] for k in range(len(schedule) + 1))
        started.add(prefix)
        if wrong:
            result.found = value
            return result
        todo.extend(item for item in backtracks(policy.steps) if item[0] not in started)
    return result


@dataclass
class KillPoints:
    """The statements a crash check kills a claim just before (numbered from 1), and how many
    more it would need (`capped`: over `MAX_KILL_POINTS`, reported, never a pass)."""

    points: list
    capped: int = 0


def kill_points(statements: list[str], cap: int = MAX_KILL_POINTS) -> KillPoints:
    """Every statement boundary of a claim (the kill before statement k, k = 2 .. n) where a
    crash can leave something different from the kill one statement earlier: after a statement
    that may change the database file (a write, a COMMIT; a kill after a read or a BEGIN leaves
    what the kill before it leaves), and always the one before the last statement. The first
    `cap` of them, and the number beyond."""
    points = [k for k in range(2, len(statements) + 1) if changes_database(statements[k - 2])]
    last = max(len(statements), 1)
    if last not in points:
        points.append(last)
    if len(points) <= cap:
        return KillPoints(points)
    return KillPoints(points[:cap - 1] + [last], capped=len(points) - cap)
