"""The differential check's parts: the contract's model agrees with the reference on thousands of
random timelines; every correct alternative agrees too; realistic bugs are found and shrunk to a
handful of steps; the same seed always gives the same timelines and the same shrunk result."""

from __future__ import annotations

import importlib.util
import os
import sys
from pathlib import Path

import pytest

from conftest import MUTANTS, ROOT
from grader.checks import generate, shrink, timeline_db, timelines
from grader.checks.model import QueueModel
from grader.checks.test_differential import LATE
from grader.harness.judge.target_client import TargetProcess
from lab.store import Claim
from solutions import queue as reference

ALTERNATIVES = sorted((ROOT / "tests" / "alternatives").glob("*.py"))
#: Logic bugs the random timelines must find on their own (seed 1), each with the longest
#: shrunk timeline allowed: the hand-picked checks are not needed to show them.
FOUND = {
    "selection_order_desc": 3, "selection_pending_before_expired": 4,
    "boundary_finish_at_expiry_accepted": 3, "tokens_finish_by_id_only": 3,
    "stamps_finish_ignores_owner": 3, "stamps_finish_ignores_token": 3,
    "quarantine_on_the_way": 3, "quarantine_after_new_token": 4, "deadline_no_clamp": 2,
    "deadline_clamp_in_python_only": 2, "work_reuses_first_clock_reading": 2,
    "work_marks_done_when_send_raised": 2, "work_swallows_send_error": 2,
    "outcome_finish_returns_rowcount": 3, "tx_open_when_nothing_to_claim": 1,
    "quarantine_ten_at_most": 12,  # more than 10 due together: 11 enqueues and the claim
}


@pytest.fixture
def scratch(tmp_path):
    """Fresh database files, on a RAM disk where there is one (thousands of them)."""
    shm = Path("/dev/shm")
    if shm.is_dir() and os.access(shm, os.W_OK):
        import tempfile

        with tempfile.TemporaryDirectory(dir=shm) as folder:
            yield Path(folder)
    else:
        yield tmp_path


def load(path: Path):
    sys.path.insert(0, str(MUTANTS))
    try:
        spec = importlib.util.spec_from_file_location(f"t_{path.stem}", path)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        return module
    finally:
        sys.path.remove(str(MUTANTS))


def numbered(seed, index: int):
    """The `index`-th timeline of `seed` with its jobs numbered as the timeline numbers them
    (generate.numbering: operator steps and forged ids follow), and that numbering."""
    ids = generate.numbering(seed, index)
    return generate.in_world(generate.timeline(seed, index), 0, int, ids), ids


def late_numbered(seed, index: int):
    """The `index`-th late timeline of `seed` (generate.late: another worker acts inside a
    work_once's send) numbered as the check numbers it (its place after the 100 others), and
    that numbering."""
    ids = generate.numbering(seed, 100 + index)
    return generate.in_world(generate.late(seed, index), 0, int, ids), ids


def differences(module, scratch: Path, seed, count: int,
                drawn=numbered) -> list[tuple[int, object]]:
    """The timelines of `seed` on which `module` (imported here, or a TargetProcess) differs;
    `drawn`: which timelines (the others, or the late ones: `late_numbered`)."""
    queue = module if isinstance(module, TargetProcess) else timeline_db.Direct(module)
    found = []
    for index in range(count):
        path = scratch / f"{index}.db"
        steps, ids = drawn(seed, index)
        difference = timelines.first_difference(steps, queue, path, ids)
        if difference is not None:
            found.append((index, difference))
        path.unlink(missing_ok=True)
    return found


def test_the_lessons_timeline_in_the_model():
    model = QueueModel()
    job = model.enqueue(qty=5, deadline=1_000_000)
    a = model.claim("A", now=0, lease_ms=1000)
    assert a == Claim(id=job, qty=5, owner="A", token=1, attempt=1, lease_until=1000)
    assert model.claim("B", now=999, lease_ms=1000) is None
    b = model.claim("B", now=1000, lease_ms=1000)
    assert (b.token, b.attempt, b.lease_until) == (2, 2, 2000)
    assert model.finish(a, now=1001) is False
    assert model.row(job)["owner"] == "B" and model.row(job)["status"] == "leased"
    assert model.finish(b, now=1999) is True and model.row(job)["finished_at"] == 1999


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_model_agrees_with_the_reference(seed, scratch):
    # 3 x 700 timelines, about 40,000 steps: every return value and row the same.
    assert differences(reference, scratch, seed, 700) == []


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_model_agrees_with_the_reference_on_late_timelines(seed, scratch):
    """Another worker, or the operator, acting inside a work_once's send: 3 x 300 late
    timelines, every return value and row the same (the steps inside compared as they
    return)."""
    assert differences(reference, scratch, seed, 300, late_numbered) == []


@pytest.mark.parametrize("path", ALTERNATIVES, ids=[p.stem for p in ALTERNATIVES])
def test_correct_alternatives_agree_with_the_model(path, scratch):
    module = load(path)
    assert differences(module, scratch, 11, 300) == []
    assert differences(module, scratch, 11, 60, late_numbered) == []


def test_timelines_cover_the_domain():
    steps = [s for i in range(300) for s in generate.timeline(1, i)]
    ops = {s.op for s in steps}
    assert ops == {"enqueue", "claim", "finish", "work_once", "requeue", "quarantine",
                   "move_deadline"}
    assert len({s.owner for s in steps if s.owner}) >= 15  # quotes, wildcards, case, unicode
    assert any(s.forge for s in steps) and any(s.send_error for s in steps)
    assert max(s.now for s in steps) > 2 ** 30 and min(s.lease_ms for s in steps
                                                      if s.op == "claim") == 1
    sizes = [sum(s.op == "enqueue" for s in generate.timeline(1, i)) for i in range(300)]
    assert min(sizes) <= 1 and max(sizes) >= 20


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_the_last_timeline_of_a_hundred_ends_with_a_full_queue(seed):
    """Timeline 99 is the timeline as drawn, then a full queue: its last claim, at the same
    instant as the claims before it, takes a job behind at least 17 live jobs, every one held
    on a valid lease, 17 of them with attempts and time left (what a claim that pages through
    the live jobs, LIMIT 16, or filters them in SQL first, would see)."""
    import random

    drawn = generate.Drawing(random.Random(f"{seed}:99"),
                             random.Random(f"{seed}:99:edges")).draw(None)
    steps = generate.timeline(seed, 99)
    assert steps[:len(drawn)] == drawn and len(steps) > len(drawn)  # appended, nothing changed
    model = QueueModel()
    for step in steps[:-1]:
        timelines.play_step(step, model, model, [])
    last = steps[-1]
    assert last.op == "claim" and {s.now for s in steps[len(drawn):]} == {last.now}
    claim = model.claim(last.owner, last.now, last.lease_ms)
    assert claim is not None
    below = [row for job, row in model.rows.items() if job < claim.id
             and row["status"] in ("pending", "leased")]
    assert len(below) >= 17 and all(row["status"] == "leased" and row["lease_until"] > last.now
                                    for row in below)
    assert sum(row["attempts"] < row["max_attempts"] and row["deadline"] > last.now
               for row in below) >= 17
    other = generate.Drawing(random.Random(f"{seed}:98"),
                             random.Random(f"{seed}:98:edges")).draw(None)
    assert generate.timeline(seed, 98) == other  # the others as drawn


def test_the_late_timelines_act_inside_a_send():
    """Each of the check's late timelines (seed 1's) ends with a work_once followed by the
    steps played inside its send (none before it); together they have another worker re-claim
    the held job once its lease ran out (and finish it), the same name re-claim it, the
    operator take it back (quarantine, requeue) with or without a claim after, and move its
    deadline, another worker take another job; the send lasts until the last of them."""
    seen = set()
    for index in range(LATE):
        steps = generate.late(1, index)
        first = next(i for i, s in enumerate(steps) if s.inside)
        head = steps[first - 1]
        assert head.op == "work_once" and all(s.inside for s in steps[first:])
        assert timelines.group(steps, first - 1) == steps[first:]
        assert all(head.now <= s.now <= head.now + timelines.send_duration(head, steps[first:])
                   for s in steps[first:])
        model, stamps = QueueModel(), []
        for _, step, inside in timelines.groups(steps):
            outcome = timelines.play_step(step, model, model, stamps, inside=inside)
            timelines.stamps_after(step, outcome, stamps, inside)
        held = outcome.sent[0]
        if {sub.op for sub in steps[first:]} <= {"quarantine", "requeue"}:
            seen.add("taken back, nobody claims")
        for sub, done in zip(steps[first:], outcome.inside):
            took = done.returned if sub.op == "claim" else None
            if isinstance(took, Claim) and took.id == held.id:
                seen.add("same name" if took.owner == held.owner else "another worker")
                if took.attempt == held.attempt and took.lease_until == held.lease_until:
                    seen.add("only the token differs")
            elif isinstance(took, Claim):
                seen.add("another job")
            seen.add(sub.op)
    assert {"same name", "another worker", "only the token differs", "another job", "claim",
            "finish", "quarantine", "requeue", "move_deadline", "taken back, nobody claims"} \
        <= seen, seen


def test_a_step_inside_a_send_is_played_before_send_returns():
    """The lesson's timeline inside work_once, on the model: A claims at 0 ms, inside its send
    B re-claims at 1000 ms, the send returns at 1001 ms: A's finish is rejected, B holds."""
    steps = [timelines.Step("enqueue", qty=5, deadline=10 ** 6),
             timelines.Step("work_once", now=0, owner="A", lease_ms=1000, send_ms=1001),
             timelines.Step("claim", now=1000, owner="B", lease_ms=1000, inside=True)]
    model, stamps = QueueModel(), []
    outcomes = []
    for _, step, inside in timelines.groups(steps):
        outcomes.append(timelines.play_step(step, model, model, stamps, inside=inside))
        timelines.stamps_after(step, outcomes[-1], stamps, inside)
    assert outcomes[1].returned is False and outcomes[1].inside[0].returned.token == 2
    assert model.row(1)["owner"] == "B" and model.row(1)["status"] == "leased"
    assert [s.owner for s in stamps] == ["A", "B"]  # what send was given, then B's
    orphan = steps[:1] + steps[2:]  # no work_once before it: an ordinary step
    assert [len(inside) for _, _, inside in timelines.groups(orphan)] == [0, 0]


@pytest.mark.parametrize("name", ["work_cursor_kept_across_send",
                                  "lock_transaction_across_send_and_finish"])
def test_a_lock_held_across_send_is_a_difference_inside_it(name, scratch):
    """A work_once that holds a lock across send (a statement not read to its end, a
    transaction): the operator's step inside its send meets it (`locked`: never an error of
    the judge's, nor taken for what work_once raised), another worker's claim there raises;
    either is a difference at that step, and the timelines after it still play."""
    module = load(MUTANTS / f"{name}.py")
    found = dict(differences(module, scratch, 1, LATE, late_numbered))
    whats = {}
    for index, difference in found.items():
        steps, _ = late_numbered(1, index)
        assert steps[difference.step].inside, (index, difference)
        whats[steps[difference.step].op] = difference.what
    assert whats.get("quarantine") == "locked" and whats.get("claim", "raised") == "raised"


def test_same_seed_same_timelines_other_seed_others():
    assert generate.timeline(5, 3) == generate.timeline(5, 3)
    assert generate.timeline(5, 3) != generate.timeline(6, 3)


#: The blind mutants (tests/mutants/blind_*.py: bugs no hand-picked check shows) shrink to at
#: most this many steps; 7 is what a requeued job beside an expired lease needs (two enqueues,
#: two claims, quarantine, requeue, the claim that picks wrong).
BLIND = sorted(p.stem for p in MUTANTS.glob("blind_*.py"))
HANDFUL = 7
#: A bug that needs many jobs at once: more than N held on valid leases (N + 1 enqueues, N
#: claims and the claim that finds none).
MANY = {"blind_claim_first_five_live_jobs": 12, "blind_claim_first_nine_live_jobs": 20,
        "blind_claim_first_sixteen_live_jobs": 34,
        # ids compared as text: ten jobs, so that 9 and 10 are both claimable
        "blind_claim_min_of_id_texts": 12}


def shrinking(module, scratch: Path, ids):
    """A shrink's `how` over `module` (in this process), each candidate on a fresh file."""
    def how(candidate):
        path = scratch / "shrink.db"
        try:
            found = timelines.first_difference(candidate, timeline_db.Direct(module), path, ids)
            return None if found is None else shrink.Found(timelines.how(candidate, found),
                                                           found.step)
        finally:
            path.unlink(missing_ok=True)

    return how


#: work_once that lets a late worker's finish land on the new holder's row (tests/mutants/
#: late_finish_*.py): seed 1's late timelines show each, shrunk to at most this many steps, its
#: work_once and the steps inside its send.
LATE_FINISH = {"late_finish_rebuilds_claim_from_row": 3, "late_finish_by_id_while_leased": 3,
               "late_finish_rereads_token": 5, "late_finish_rereads_token_and_lease": 5}


@pytest.mark.parametrize("name", sorted(LATE_FINISH))
def test_a_late_finish_is_found_and_shrunk(name, scratch):
    module = load(MUTANTS / f"{name}.py")
    found = differences(module, scratch, 1, LATE, late_numbered)
    assert found, f"{name}: no late timeline of seed 1 shows the bug"
    index, difference = found[0]
    steps, ids = late_numbered(1, index)
    want = shrink.Found(timelines.how(steps, difference), difference.step)
    assert want.how == ("work_once", "returned", None)  # True: the late finish landed
    how = shrinking(module, scratch, ids)
    small = shrink.shrink(steps, how, want, plain=shrink.Plain(ids=ids), seconds=None)
    again = how(small)
    assert again is not None and again.how == want.how, small
    # the work_once and what happens inside its send, nothing after it
    assert timelines.played_with(small, again.step) == len(small) - 1, small
    assert len(small) <= LATE_FINISH[name], small
    if name != "late_finish_by_id_while_leased":  # the others need another worker's claim
        assert any(s.inside and s.op == "claim" for s in small), small
    assert shrink.shrink(steps, how, want, plain=shrink.Plain(ids=ids), seconds=None) == small


@pytest.mark.parametrize("name", sorted(FOUND) + BLIND)
def test_a_realistic_bug_is_found_and_shrunk(name, scratch):
    module = load(MUTANTS / f"{name}.py")
    found, drawn = differences(module, scratch, 1, 100), numbered
    if not found:  # a bug only another worker acting inside a send shows: the late timelines
        found, drawn = differences(module, scratch, 1, LATE, late_numbered), late_numbered
    assert found, f"{name}: no random timeline of seed 1 shows the bug"
    index, difference = found[0]
    steps, ids = drawn(1, index)
    want = shrink.Found(timelines.how(steps, difference), difference.step)
    how = shrinking(module, scratch, ids)
    small = shrink.shrink(steps, how, want, plain=shrink.Plain(ids=ids), seconds=None)
    # as small as a handful, and differing as the timeline it shrinks did (same step, same
    # what), at its last step (or at a work_once whose send holds the steps after it)
    again = how(small)
    assert again is not None and again.how == want.how, small
    assert timelines.played_with(small, again.step) == len(small) - 1, small
    assert len(small) <= FOUND.get(name, MANY.get(name, HANDFUL)), small
    # deterministic (the logical bound alone: the wall-clock net is the load, not the shrink)
    assert shrink.shrink(steps, how, want, plain=shrink.Plain(ids=ids), seconds=None) == small


def first_found(module, scratch: Path, seed, count: int):
    """The first timeline of `seed` on which `module` differs: (index, step, what), or None."""
    queue = module if isinstance(module, TargetProcess) else timeline_db.Direct(module)
    for index in range(count):
        path = scratch / f"{index}.db"
        try:
            steps, ids = numbered(seed, index)
            found = timelines.first_difference(steps, queue, path, ids)
        finally:
            path.unlink(missing_ok=True)
        if found is not None:
            return index, found.step, found.what
    return None


def test_the_reference_in_a_target_process_agrees_with_the_model(scratch):
    """What the check plays: the code under grade in a process of its own, by connection name;
    in the late timelines, the other worker's calls made from inside send (nested calls, on a
    connection of its own in the same process)."""
    with TargetProcess("solutions.queue", writable=[scratch]) as target:
        assert differences(target, scratch, 2, 100) == []
        assert differences(target, scratch, 2, 24, late_numbered) == []


def test_a_late_finish_through_a_target_process_differs_where_a_direct_call_does(scratch):
    path = MUTANTS / "late_finish_rebuilds_claim_from_row.py"
    direct = differences(load(path), scratch, 1, LATE, late_numbered)
    assert direct
    with TargetProcess(str(path), writable=[scratch]) as target:
        through = differences(target, scratch, 1, LATE, late_numbered)
    assert [(i, d.step, d.what) for i, d in through] == [(i, d.step, d.what) for i, d in direct]


#: Bugs seen through what only the target process turns into data: a send error that is also a
#: ConnectionError, a transaction left open (in_transaction by request), a Claim holding a float
#: (a Foreign), an int for a bool, a send error swallowed.
THROUGH_THE_PROCESS = ["blind_work_once_network_error_is_false",
                       "blind_finish_open_tx_on_missing_job", "types_lease_until_float",
                       "outcome_finish_returns_rowcount", "work_swallows_send_error"]


@pytest.mark.parametrize("name", THROUGH_THE_PROCESS)
def test_a_target_process_differs_where_a_direct_call_does(name, scratch):
    path = MUTANTS / f"{name}.py"
    direct = first_found(load(path), scratch, 1, 100)
    assert direct is not None
    with TargetProcess(str(path), writable=[scratch]) as target:
        assert first_found(target, scratch, 1, direct[0] + 1) == direct


def test_a_target_process_that_ends_mid_timeline_errors_the_check(tmp_path):
    """os._exit in a random timeline (outside the Lab's calls): errored, with the exit code, the
    call that was running and where in which timeline."""
    from conftest import by_check, grade

    mutant = MUTANTS / "outcome_finish_exits_when_rejected.py"
    proc, results = grade(str(mutant), tmp_path, "-k", "random-timelines")
    test = by_check(results)["random-timelines"]
    assert test["extra_data"]["outcome"] == "errored", test["output"]
    assert "exit code 75" in test["output"] and "finishes" in test["output"]
    assert "of seed 1, at its step" in test["output"]


LEARNED = '''
from lab.store import Claim

def claim(conn, owner, now, lease_ms):
    """No queue logic: job 1, the lesson's numbers, whatever the table holds."""
    conn.execute("UPDATE jobs SET status = 'leased', owner = ?, token = token + 1,"
                 " attempts = attempts + 1, lease_until = ? WHERE id = 1", (owner, now + lease_ms))
    row = conn.execute("SELECT qty, token, attempts FROM jobs WHERE id = 1").fetchone()
    return None if row is None else Claim(1, row[0], owner, row[1], row[2], now + lease_ms)

def finish(conn, claim, now):
    return now < claim.lease_until

def work_once(conn, owner, send, clock, lease_ms):
    c = claim(conn, owner, clock(), lease_ms)
    send(c)
    return finish(conn, c, clock())
'''


def test_a_program_with_no_queue_logic_fails(tmp_path, scratch):
    path = tmp_path / "learned.py"
    path.write_text(LEARNED)
    assert differences(load(path), scratch, 1, 20)


def test_results_name_the_seed_and_the_oracle(tmp_path):
    from conftest import run_grader
    import json

    out = tmp_path / "results.json"
    proc = run_grader("--impl", "solutions.queue", "-k", "random-timelines", "--replay", "7",
                      "--json", str(out))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    results = json.loads(out.read_text(encoding="utf-8"))
    assert results["extra_data"]["seed"] == 7
    (test,) = results["tests"]
    assert test["extra_data"]["oracle"].startswith("grader/checks/model.py")


RESHAPES = '''
from solutions.queue import claim, work_once
from solutions.queue import finish as honest_finish

def finish(conn, claim, now):
    """The reference's finish, but a rejected one empties the table without changing a row:
    DROP and CREATE (SQLite counts no change for either)."""
    done = honest_finish(conn, claim, now)
    if not done:
        sql = conn.execute("SELECT sql FROM sqlite_master WHERE name = 'jobs'").fetchone()[0]
        conn.execute("DROP TABLE jobs")
        conn.execute(sql)
    return done
'''


def test_a_change_no_row_count_tells_is_seen_at_its_step(tmp_path, scratch):
    """The table is not read again after a step that changed no row on either side (the
    connections' total_changes, the model); a statement that changes it otherwise (its schema)
    is seen all the same, at the step that made it, as a direct call sees it. Through the
    judge's locked-down connection DROP TABLE jobs is refused ("not authorized", test_lockdown):
    the same step is found, by what the call raised instead of the row it emptied."""
    path = tmp_path / "reshapes.py"
    path.write_text(RESHAPES)
    direct = first_found(load(path), scratch, 1, 100)
    assert direct is not None and direct[2] == "row"
    with TargetProcess(str(path), writable=[scratch]) as target:
        assert first_found(target, scratch, 1, direct[0] + 1) == (*direct[:2], "raised")


def test_a_timeline_in_a_world_changes_only_its_instants_quantities_and_ids():
    """generate.in_world builds each step anew: every other field of the step is kept as it
    was drawn (a field added to Step is kept too)."""
    import dataclasses

    moved = {"now", "deadline", "qty", "job", "forge"}
    for steps in [generate.timeline(1, i) for i in range(40)] + [generate.late(1, i)
                                                                  for i in range(LATE)]:
        placed = generate.in_world(steps, 10_000, lambda q: 2 * q, lambda n: 100 + n)
        assert len(placed) == len(steps)
        for step, there in zip(steps, placed):
            for field in dataclasses.fields(timelines.Step):
                if field.name not in moved:
                    assert getattr(there, field.name) == getattr(step, field.name), field.name
            assert there.now == step.now + 10_000


# -- the timeline at the domain's size (generate.scale) --------------------------------------------
def scale_numbered(seed, index: int):
    """The `index`-th scale timeline of `seed` numbered as the check numbers it (its place after
    the 100 others and the late ones), and that numbering."""
    ids = generate.numbering(seed, 100 + LATE + index)
    return generate.in_world(generate.scale(seed, index), 0, int, ids), ids


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_the_scale_timeline_sets_the_domain_s_sizes_in_one_step(seed):
    """Its first step sets thousands of jobs: more held on valid leases before the first free
    one than a claim that looks at the first thousand live rows sees, more due at once than a
    quarantine in batches of 1,000 takes, tokens and attempts past 256 and at 2**31 - 1; the
    rest are ordinary steps, several of them claims (the first at once: every due job is
    quarantined by it, the free job's counters pass 2**31)."""
    steps = generate.scale(seed, 0)
    bulk, rest = steps[0], steps[1:]
    assert bulk.op == "bulk" and not any(step.op == "bulk" for step in rest)
    held, due, free = bulk.rows
    assert held.status == "leased" and held.count > 1000 and held.lease_until > bulk.now
    assert held.token > 2 ** 31 and 256 < held.attempts < held.max_attempts
    assert due.count > 1000 and due.deadline <= bulk.now
    assert free.count >= 1 and free.token == free.attempts == 2 ** 31 - 1 < free.max_attempts
    claims = [step for step in rest if step.op in ("claim", "work_once")]
    assert len(claims) >= 3 and claims[0].now < held.lease_until
    assert generate.SCALE_STEPS[0] <= len(rest) <= generate.SCALE_STEPS[1]


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_model_agrees_with_the_reference_on_the_scale_timeline(seed, scratch):
    assert differences(reference, scratch, seed, 2, scale_numbered) == []
    with TargetProcess("solutions.queue", writable=[scratch]) as target:
        assert differences(target, scratch, seed, 2, scale_numbered) == []


@pytest.mark.parametrize("path", ALTERNATIVES, ids=[p.stem for p in ALTERNATIVES])
def test_correct_alternatives_agree_with_the_model_at_scale(path, scratch):
    assert differences(load(path), scratch, 11, 1, scale_numbered) == []


TOUCHES_ANOTHER_ROW = '''
from solutions.queue import claim as honest_claim, finish, work_once

def claim(conn, owner, now, lease_ms):
    """The reference's claim, then one more write: {write}"""
    got = honest_claim(conn, owner, now, lease_ms)
    conn.execute("UPDATE jobs SET qty = qty {change} WHERE id = (SELECT min(id) FROM jobs)")
    return got
'''


@pytest.mark.parametrize("change,differs", [("+ 1", True), ("+ 0", False)])
def test_a_row_the_model_did_not_change_is_read_when_the_changes_say_so(change, differs,
                                                                       tmp_path, scratch):
    """After a step only the rows the model changed are read, when the connections changed as
    many rows as that (Database.agrees): a claim that also writes the first job of thousands
    (one it did not take) is one change more, so the whole table is read and the row found,
    at that step, as a direct call finds it; the same write leaving the row as it was (qty + 0:
    a change SQLite counts, no value changed) is no difference."""
    path = tmp_path / "touches.py"
    path.write_text(TOUCHES_ANOTHER_ROW.format(write=f"qty {change} on the lowest id",
                                               change=change))
    direct = differences(load(path), scratch, 1, 1, scale_numbered)
    with TargetProcess(str(path), writable=[scratch]) as target:
        through = differences(target, scratch, 1, 1, scale_numbered)
    if not differs:
        assert direct == through == []
        return
    steps, ids = scale_numbered(1, 0)
    ((index, found),) = through
    assert [(i, d.step, d.what, d.job) for i, d in direct] == [(index, found.step, "row", ids(1))]
    assert (found.what, found.job) == ("row", ids(1)) and steps[found.step].op == "claim"
