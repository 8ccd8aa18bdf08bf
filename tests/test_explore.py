"""The explorer of the race's schedules (grader/harness/judge/explore.py): which schedules it runs for
small synthetic claims (driven without processes, as children.race drives it), that it misses
no order that matters (against every feasible interleaving), that it is deterministic, and, on
real target processes, a mutant only a schedule other than the first catches, reported
with a schedule that replays."""

from __future__ import annotations

import itertools
import re
import sqlite3

from lab import store

from grader.harness.judge import children, dbvalues
from grader.harness.judge.explore import Schedule, backtracks, conflict, explore, kill_points
from grader.harness.judge.interleave import WriteLockWatch, verb

from conftest import MUTANTS, by_check, grade

ONE_TRANSACTION = ["BEGIN IMMEDIATE", "UPDATE jobs SET status = 'quarantined' WHERE 0",
                   "SELECT id FROM jobs", "UPDATE jobs SET owner = 'x' WHERE id = 1", "COMMIT"]
READ_BEFORE_BEGIN = ["SELECT id FROM jobs", "BEGIN IMMEDIATE",
                     "UPDATE jobs SET owner = 'x' WHERE id = 1", "COMMIT"]
DEFERRED = ["BEGIN", "SELECT id FROM jobs", "UPDATE jobs SET owner = 'x' WHERE id = 1", "COMMIT"]
AUTOCOMMIT = ["SELECT id FROM jobs", "UPDATE jobs SET owner = 'x' WHERE id = 1"]
READS = ["SELECT 1 FROM jobs", "SELECT 2 FROM jobs"]


class Claim:
    """A synthetic claim: its statements, and its connection's state before each (as the gate
    reports it: in_transaction, and holds_write from a WriteLockWatch)."""

    def __init__(self, statements):
        self.statements = statements
        self.at = 0
        self.in_tx = False
        self.watch = WriteLockWatch()

    def report(self):
        sql = self.statements[self.at]
        return sql, self.watch.before(sql, self.in_tx), self.in_tx

    def run(self):
        v = verb(self.statements[self.at])
        if v == "BEGIN":
            self.in_tx = True
        elif v in ("COMMIT", "ROLLBACK"):
            self.in_tx = False
        self.at += 1

    @property
    def done(self):
        return self.at == len(self.statements)


def authorized(sql):
    """The tables `sql` reads or writes, as SQLite's authorizer names them when it is prepared
    on a database with the lab's schema (what dbhost.DbHost.tables_read tells the gate)."""
    conn = sqlite3.connect(":memory:")
    try:
        conn.executescript(store.SCHEMA)
        tables = set()

        def authorizer(action, arg1, *_):
            if action in (sqlite3.SQLITE_READ, sqlite3.SQLITE_INSERT, sqlite3.SQLITE_UPDATE,
                          sqlite3.SQLITE_DELETE):
                tables.add(arg1.lower())
            return sqlite3.SQLITE_OK
        conn.set_authorizer(authorizer)
        conn.execute("EXPLAIN " + sql)  # prepared, not run
        return frozenset(tables)
    finally:
        conn.close()


def simulate(a, b, prefix="", sleeper=None, tables=False):
    """Drive a Schedule as children.race does, with two synthetic claims; its Schedule.
    `tables`: the gate tells each statement's tables, as SQLite's authorizer names them."""
    policy = Schedule(prefix, sleeper, clock=lambda: 0.0)
    claims = {"A": Claim(a), "B": Claim(b)}
    for actor in claims:
        policy.join(actor)

    def arrive(actor, c):
        sql, holds, in_tx = c.report()
        policy.arrived(actor, c.at + 1, sql, holds, True, in_tx, None,
                       authorized(sql) if tables else None)
    for actor, c in claims.items():
        arrive(actor, c)
    while len(policy.done) < 2:
        released = policy.releasable()
        assert len(released) == 1 and released[0][1] == "go", released
        actor = released[0][0]
        c = claims[actor]
        c.run()
        if c.done:
            policy.finished(actor)
        else:
            arrive(actor, c)
    return policy


def schedules(a, b, cap=100, tables=False):
    found = explore(lambda prefix, sleeper: (simulate(a, b, prefix, sleeper, tables), False,
                                             None), cap=cap)
    assert not found.capped
    return found.schedules


def test_two_claims_in_one_immediate_transaction_have_two_schedules():
    """One claim's BEGIN IMMEDIATE goes first, then the other's waits for the write lock (it is
    never let go meanwhile): A's whole claim first, or B's."""
    assert schedules(ONE_TRANSACTION, ONE_TRANSACTION) == ["AAAAABBBBB", "BBBBBAAAAA"]


def test_reads_that_cannot_conflict_are_not_reordered():
    assert schedules(READS, READS) == ["AABB"]


def test_a_statement_that_touches_no_table_conflicts_with_nothing():
    """SELECT 1, sqlite_version() or total_changes() read no table (SQLite's authorizer names
    none): run before the BEGIN IMMEDIATE and after the COMMIT (which the contract allows) they
    add no schedule: still A's whole claim first, or B's."""
    before = ["SELECT 1", "SELECT sqlite_version() -- on jobs", "PRAGMA user_version"]
    after = ["SELECT total_changes()", "SELECT 1"]
    claim = before + ONE_TRANSACTION + after
    assert authorized("SELECT 1") == frozenset() and authorized(ONE_TRANSACTION[2]) == {"jobs"}
    n = len(claim)
    runs = schedules(claim, claim, tables=True)
    # B's transaction is tried first once A's reads of no table ran: the same order that matters
    assert runs == ["A" * n + "B" * n, "AAA" + "B" * n + "A" * (n - 3)]
    # a statement whose tables are not known is taken as reading the database
    assert len(schedules(claim, claim, tables=False)) > 2
    # one that reads jobs before the BEGIN still lands in the other's window
    runs = schedules(before + READ_BEFORE_BEGIN, before + READ_BEFORE_BEGIN, tables=True)
    assert 2 < len(runs) == len(set(runs)) <= 6


def test_a_read_before_begin_is_tried_inside_the_other_claims_window():
    """B's SELECT before A's COMMIT (it reads the job as pending), or after it; and B first."""
    runs = schedules(READ_BEFORE_BEGIN, READ_BEFORE_BEGIN)
    assert runs[0] == "AAAABBBB"
    assert "AAABABBB" in runs  # B reads while A holds the write lock, before A's COMMIT
    assert any(r.startswith("B") for r in runs)
    assert len(runs) == len(set(runs)) <= 6


def test_a_statement_that_would_wait_for_the_lock_is_never_let_go():
    """While A holds the write lock, B's BEGIN IMMEDIATE is not enabled: the prefix "AB" cannot
    be followed there, the run diverges to A (recorded) and never leaves B waiting in SQLite."""
    policy = simulate(ONE_TRANSACTION, ONE_TRANSACTION, prefix="AB")
    assert policy.schedule == "AAAAABBBBB"
    assert policy.diverged == 1
    assert [s.enabled for s in policy.steps[:2]] == ["AB", "A"]


def test_a_deferred_transaction_that_read_blocks_the_other_commit():
    """A read in B's deferred transaction holds SHARED: A's COMMIT that publishes a write waits
    for it (not enabled), while B's own write is let go (SQLite answers it SQLITE_BUSY at once)."""
    policy = simulate(DEFERRED, DEFERRED, prefix="AAABB")
    assert policy.schedule.startswith("AAABB")
    sixth = policy.steps[5]  # A's COMMIT waits for B's read lock: B's UPDATE goes
    assert (sixth.letter, sixth.sql) == ("B", "UPDATE jobs SET owner = 'x' WHERE id = 1")
    assert sixth.enabled == "B"


def trace(steps):
    """A run's Mazurkiewicz trace: for each conflicting pair of statements of different claims,
    which ran first (program order is fixed)."""
    index = {}
    count = {"A": 0, "B": 0}
    named = []
    for s in steps:
        count[s.letter] += 1
        named.append(((s.letter, count[s.letter]), s))
    order = set()
    for i, (x, s) in enumerate(named):
        for y, t in named[i + 1:]:
            if x[0] != y[0] and conflict(s, t):
                order.add((x, y))
    index.update(order=frozenset(order))
    return index["order"]


def feasible(a, b):
    """The traces of every interleaving the lock model lets run (never a statement let go that
    would wait for the other's lock)."""
    found = set()
    for positions in itertools.combinations(range(len(a) + len(b)), len(a)):
        letters = "".join("A" if k in positions else "B" for k in range(len(a) + len(b)))
        policy = simulate(a, b, prefix=letters)
        if policy.diverged is None:
            found.add(trace(policy.steps))
    return found


def test_every_order_that_matters_is_explored():
    """Against brute force: every feasible interleaving of these claims is equivalent (the same
    order of every conflicting pair) to one the explorer ran, and it runs no two equivalent."""
    for a, b in [(READ_BEFORE_BEGIN, READ_BEFORE_BEGIN), (DEFERRED, DEFERRED),
                 (AUTOCOMMIT, AUTOCOMMIT), (READ_BEFORE_BEGIN, ONE_TRANSACTION),
                 (AUTOCOMMIT, DEFERRED), (ONE_TRANSACTION, ONE_TRANSACTION)]:
        runs = [trace(simulate(a, b, prefix=s).steps) for s in schedules(a, b)]
        assert set(runs) == feasible(a, b), (a, b)
        assert len(runs) == len(set(runs)), (a, b)


def test_a_claimer_not_heard_from_is_taken_as_waiting_only_on_the_safety_net():
    """A wait the lock model does not know (PRAGMA locking_mode = EXCLUSIVE keeps a lock): the
    claimer let go stays unheard of; B is not let go before the stall limit, then is, and the
    stall is recorded."""
    now = [0.0]
    policy = Schedule(clock=lambda: now[0], stall=0.5)
    policy.inside = lambda actor: True  # its statement runs: SQLite has control
    for actor in "AB":
        policy.join(actor)
    policy.arrived("A", 1, "COMMIT", False, True, False)
    policy.arrived("B", 1, "SELECT 1 FROM jobs", False, True, False)
    assert policy.releasable() == [("A", "go")]
    assert policy.releasable() == []  # A is under way: nobody else goes
    assert policy.next_timeout() == 0.5
    now[0] = 0.49
    policy.expire()
    assert policy.releasable() == []
    now[0] = 0.5
    policy.expire()
    assert policy.stalls == [("A", 1)]
    assert policy.releasable() == [("B", "go")]
    policy.arrived("A", 2, "SELECT 2 FROM jobs", False, True, False)  # A came back after all
    assert policy.releasable() == []  # B is under way now
    policy.finished("B")
    assert policy.releasable() == [("A", "go")]


def test_a_claimer_running_code_of_its_own_too_long_stops_the_schedule():
    """Not inside a statement (the target has control, not SQLite): past the stall limit the
    other is still not let go (the pause is the claim's own, meant to let the other claim
    alone); at the pause limit the schedule gives up: both run freely, never a pass."""
    now = [0.0]
    policy = Schedule(clock=lambda: now[0], stall=0.5, pause=5.0)
    policy.inside = lambda actor: False
    for actor in "AB":
        policy.join(actor)
    policy.arrived("A", 1, "SELECT 1 FROM jobs", False, True, False)
    policy.arrived("B", 1, "SELECT 1 FROM jobs", False, True, False)
    assert policy.releasable() == [("A", "go")]
    now[0] = 1.0
    policy.expire()
    assert policy.releasable() == [] and policy.stalls == [] and policy.gave_up is None
    assert policy.next_timeout() == 4.0
    now[0] = 5.0
    policy.expire()
    assert policy.why == "paused" and policy.gave_up.actor == "A"
    assert policy.releasable() == [("B", "free")]


def test_a_cursor_left_running_holds_its_lock_in_the_model():
    """B's cursor still runs a SELECT (rows left unread: SHARED, in autocommit): A's COMMIT that
    publishes would wait for it, so it is not enabled; B's BEGIN IMMEDIATE is (its connection
    reads already and A holds the write lock: SQLite answers SQLITE_BUSY at once). No clock."""
    policy = Schedule(clock=lambda: 0.0, stall=0.0)
    for actor in "AB":
        policy.join(actor)
    policy.arrived("A", 6, "COMMIT", True, True, True, (0, 0))
    policy.arrived("B", 2, "BEGIN IMMEDIATE", False, True, False, (1, 0))
    assert policy.lock_of("B") == 1 and policy.blocked("A") and not policy.blocked("B")
    assert policy.releasable() == [("B", "go")] and policy.steps[-1].enabled == "B"
    # the same B with its cursor read to its end: A's COMMIT goes, B's BEGIN IMMEDIATE waits
    policy = Schedule(clock=lambda: 0.0)
    for actor in "AB":
        policy.join(actor)
    policy.arrived("A", 6, "COMMIT", True, True, True, (0, 0))
    policy.arrived("B", 2, "BEGIN IMMEDIATE", False, True, False, (0, 0))
    assert policy.releasable() == [("A", "go")] and policy.steps[-1].enabled == "A"


def test_which_statements_wait_for_a_cursor_left_running():
    """The other connection's unfinished read (SHARED) makes an autocommit write, a COMMIT that
    publishes and BEGIN EXCLUSIVE wait; nothing else. A connection's own unfinished read turns
    a wait for the other's write lock into SQLITE_BUSY at once; its own unfinished write
    (UPDATE ... RETURNING) is the write lock itself."""
    def blocked(sql, other, own=(0, 0), holds=False, in_tx=False, other_sql="SELECT 1"):
        policy = Schedule(clock=lambda: 0.0)
        for actor in "AB":
            policy.join(actor)
        policy.arrived("A", 2, sql, holds, True, in_tx, own)
        policy.arrived("B", 2, other_sql, other_sql == "COMMIT", True,
                       other_sql == "COMMIT", other)
        return policy.blocked("A")
    read = (1, 0)
    assert blocked("UPDATE jobs SET owner = 'x'", read)
    assert blocked("COMMIT", read, holds=True, in_tx=True)
    assert blocked("BEGIN EXCLUSIVE", read)
    assert not blocked("BEGIN IMMEDIATE", read)
    assert not blocked("SELECT id FROM jobs", read)
    assert not blocked("COMMIT", read, in_tx=True)  # nothing to publish: no lock needed
    assert not blocked("UPDATE jobs SET owner = 'x'", (0, 0))
    # the other holds the write lock (its transaction wrote): with a read of its own left
    # running, A's BEGIN IMMEDIATE / EXCLUSIVE and autocommit write are refused at once
    holder = dict(other_sql="COMMIT")
    assert blocked("BEGIN IMMEDIATE", (0, 0), **holder)
    assert not blocked("BEGIN IMMEDIATE", (0, 0), own=read, **holder)
    assert not blocked("BEGIN EXCLUSIVE", (0, 0), own=read, **holder)
    assert not blocked("UPDATE jobs SET owner = 'x'", (0, 0), own=read, **holder)
    # an UPDATE ... RETURNING left running holds the write lock: the other's write waits for it
    assert blocked("BEGIN IMMEDIATE", (0, 1))
    assert not blocked("UPDATE jobs SET qty = 1", (0, 0), own=(0, 1))


def test_exploring_is_deterministic():
    first = schedules(AUTOCOMMIT, DEFERRED)
    assert all(schedules(AUTOCOMMIT, DEFERRED) == first for _ in range(5))


def test_a_race_is_reported_at_the_latest_conflict_the_other_could_go_at():
    policy = simulate(READ_BEFORE_BEGIN, READ_BEFORE_BEGIN)
    assert policy.schedule == "AAAABBBB"
    # B's SELECT conflicts with A's COMMIT (published write vs read): try it just before
    assert [p for p, _ in backtracks(policy.steps)] == ["AAAB"]


def test_the_cap_is_reported_not_a_pass():
    found = explore(lambda prefix, sleeper: (simulate(READ_BEFORE_BEGIN, READ_BEFORE_BEGIN,
                                                      prefix, sleeper), False, None), cap=1)
    assert found.capped and found.runs == 1 and found.left >= 1 and found.found is None


def test_kill_points_are_every_boundary_where_a_crash_can_leave_something_different():
    """After a write or a COMMIT (a kill after a read or a BEGIN leaves what the kill before it
    leaves), and always before the last statement."""
    assert kill_points(ONE_TRANSACTION).points == [3, 5]
    assert kill_points(READ_BEFORE_BEGIN).points == [4]
    assert kill_points(AUTOCOMMIT).points == [2]
    split = ["BEGIN IMMEDIATE", "UPDATE jobs SET token = 1", "COMMIT",
             "UPDATE jobs SET status = 'leased'", "SELECT 1"]
    assert kill_points(split).points == [3, 4, 5]


def test_kill_points_over_the_cap_are_counted_not_dropped():
    many = ["BEGIN IMMEDIATE"] + [f"UPDATE jobs SET qty = {n}" for n in range(30)] + ["COMMIT"]
    plan = kill_points(many, cap=24)
    assert len(plan.points) == 24 and plan.points[-1] == len(many)
    assert plan.capped == 30 - 24  # one boundary after each UPDATE (the last one among them)
    assert kill_points(many, cap=40).capped == 0


def test_the_crash_check_fails_a_claim_with_more_kill_points_than_it_covers(tmp_path):
    target = tmp_path / "many_writes.py"
    target.write_text(
        "from solutions.queue import claim as _claim, finish, work_once\n"
        "def claim(conn, owner, now, lease_ms):\n"
        "    for n in range(30):\n"
        "        conn.execute('UPDATE jobs SET qty = qty WHERE id < 0')\n"
        "    return _claim(conn, owner, now, lease_ms)\n", encoding="utf-8")
    proc, results = grade(str(target), tmp_path, "-k", "crash-mid-claim-atomic")
    result = by_check(results)["crash-mid-claim-atomic"]
    assert result["score"] == 0
    assert re.search(r"has \d+ statement boundaries where a crash could leave something "
                     r"different .* more than the 24", " ".join(result["output"].split()))


# -- on real target processes --------------------------------------------------------------------
def pending_job(tmp_path, name):
    path = tmp_path / name
    conn = store.connect(path)
    store.init_db(conn)
    store.enqueue(conn, 5, 1_000_000)
    conn.close()
    return path


def race(tmp_path, spec, policy, n):
    path = pending_job(tmp_path, f"q{n}.db")
    claimers = [children.spawn(spec, path, a, 0, 1000) for a in ("A", "B")]
    try:
        children.race(claimers, policy, timeout=15)
    finally:
        children.close(claimers)
    return sorted(c.outcome["kind"] for c in claimers)


RESERVE = str(MUTANTS / "race_reserve_then_check.py")


def test_a_bug_the_first_schedule_never_shows_is_found_by_exploring(tmp_path):
    """race_reserve_then_check: in the first schedule (A's whole claim, then B's) only A leases
    (on every run, as in a lockstep of the two claims); exploring finds A's lease after B read
    the job as pending."""
    for n in range(3):
        assert race(tmp_path, RESERVE, Schedule(), n) == ["claim", "none"]
    runs = itertools.count(10)
    outcomes = {}

    def run(prefix, sleeper):
        policy = Schedule(prefix, sleeper)
        kinds = race(tmp_path, RESERVE, policy, next(runs))
        outcomes[policy.schedule] = kinds
        return policy, kinds != ["claim", "none"], kinds

    found = explore(run)
    assert found.found == ["claim", "claim"]
    assert found.runs == 2
    # replayed: the same schedule, the same outcome
    policy = Schedule(found.schedule)
    assert race(tmp_path, RESERVE, policy, 99) == ["claim", "claim"]
    assert policy.schedule == found.schedule and policy.diverged is None


CURSOR_LEFT_OPEN = str(MUTANTS / "lock_cursor_left_open.py")


def explore_race(tmp_path, spec, jobs, tag):
    """Every schedule of the race of `spec` on `jobs` pending jobs: {schedule: (outcome kinds
    by actor, the stalls the safety net recorded)}."""
    runs = itertools.count()
    seen = {}

    def run(prefix, sleeper):
        path = tmp_path / f"{tag}{next(runs)}.db"
        conn = store.connect(path)
        store.init_db(conn)
        for _ in range(jobs):
            store.enqueue(conn, 5, 1_000_000)
        conn.close()
        policy = Schedule(prefix, sleeper)
        claimers = [children.spawn(spec, path, a, 0, 1000) for a in ("A", "B")]
        try:
            children.race(claimers, policy, timeout=15)
        finally:
            children.close(claimers)
        seen[policy.schedule] = ({c.actor: c.outcome["kind"] for c in claimers},
                                 list(policy.stalls))
        return policy, False, None

    found = explore(run)
    assert not found.capped and found.runs == len(seen)
    return seen


def test_a_cursor_left_running_is_in_the_lock_model_not_on_the_clock(tmp_path):
    """lock_cursor_left_open keeps a cursor that read one row of two: its read lock is held for
    the rest of the claim. Where the other's COMMIT would wait for it, the explorer knows
    without a clock (no claimer let go into a wait, none taken as stalled on the safety net),
    and every schedule ends the same way on every exploration: the one whose BEGIN IMMEDIATE
    meets the other's write lock while its own cursor reads is refused at once (locked)."""
    first = explore_race(tmp_path, CURSOR_LEFT_OPEN, 2, "a")
    assert all(stalls == [] for _, stalls in first.values()), first
    assert first == explore_race(tmp_path, CURSOR_LEFT_OPEN, 2, "b")
    interleaved = [kinds for schedule, (kinds, _) in first.items()
                   if schedule not in ("A" * 6 + "B" * 6, "B" * 6 + "A" * 6)]
    assert interleaved and all(sorted(kinds.values()) == ["claim", "raised"]
                               for kinds in interleaved), first


def test_a_wait_the_model_does_not_know_is_answered_on_the_safety_net(tmp_path, monkeypatch):
    """Where the judge cannot see a cursor left running (dbhost.DbHost.unfinished is None), A's
    COMMIT is let go into a wait for B's read lock: taken as stalled after STALL_WAIT, B goes
    at once (its BEGIN IMMEDIATE is refused: locked, its connection closed) and A's COMMIT
    then succeeds, long before its busy timeout (5 s) would have made it fail."""
    monkeypatch.setattr(dbvalues, "_SEEN", [False])
    path = pending_job(tmp_path, "net.db")
    conn = store.connect(path)
    store.enqueue(conn, 5, 1_000_000)  # two rows: the kept cursor has one left to read
    conn.close()
    policy = Schedule("AAAAAB")
    claimers = [children.spawn(CURSOR_LEFT_OPEN, path, a, 0, 1000) for a in ("A", "B")]
    try:
        children.race(claimers, policy, timeout=15)
    finally:
        children.close(claimers)
    assert policy.stalls == [("A", 6)]
    assert {c.actor: c.outcome["kind"] for c in claimers} == {"A": "claim", "B": "raised"}


def test_the_race_check_names_the_schedule_and_replays_it(tmp_path, monkeypatch):
    proc, results = grade(RESERVE, tmp_path, "-k", "race-one-winner")
    output = by_check(results)["race-one-winner"]["output"]
    assert "Both processes got a Claim" in output
    schedule = re.search(r"LEASELAB_RACE_SCHEDULE=([AB]+) python -m grader --replay 1 ", output).group(1)
    again = by_check(grade(RESERVE, tmp_path, "-k", "race-one-winner")[1])["race-one-winner"]
    assert f"schedule {schedule} " in again["output"]  # the same on every grade
    monkeypatch.setenv("LEASELAB_RACE_SCHEDULE", schedule)
    replayed = by_check(grade(RESERVE, tmp_path, "-k", "race-one-winner")[1])["race-one-winner"]
    assert "Both processes got a Claim" in replayed["output"]
    assert f"Run 1 of the schedules that can matter, schedule {schedule} " in replayed["output"]
    # a schedule in which the bug does not show passes when replayed alone
    monkeypatch.setenv("LEASELAB_RACE_SCHEDULE", "A" * 7 + "B" * 2)
    alone = by_check(grade(RESERVE, tmp_path, "-k", "race-one-winner")[1])["race-one-winner"]
    assert alone["score"] == alone["max_score"]


def test_a_race_in_which_no_statement_ran_names_no_schedule(tmp_path):
    """Code whose claim runs no statement leaves nothing to schedule: the report says what
    came back, and no schedule line with an empty schedule and a replay that replays nothing."""
    proc, results = grade(str(MUTANTS / "nothing_queue_does_nothing.py"),
                          tmp_path, "-k", "race-one-winner")
    check = by_check(results)["race-one-winner"]
    assert check["status"] == "failed"
    assert "LEASELAB_RACE_SCHEDULE" not in check["output"]
    assert "schedules that can matter" not in check["output"]
