"""What random-timelines shows is a real difference, in every world: the blind mutants graded in
the lesson's world and in drawn ones (issue 28: shrunk against a model that numbered jobs from 1,
a drawn world's timeline "differed" on its own enqueue, `Came back: 998830  Expected: 1`).

For each blind mutant and seed the grader runs once (`-k random-timelines`, in this process);
the timeline its failure shows is rebuilt from the failure's events, step for step as a student
reads it, and played again against the code (in a target process, as the check does) and the
model: it must differ there, at its last step, never at an enqueue or another step of the
store's, and its values must be the world's (job ids, instants)."""

from __future__ import annotations

import copy
import dataclasses
import functools
import itertools

import pytest

from conftest import MUTANTS
from grader import runner
from grader.checks import generate, shrink, timeline_db, timelines
from grader.checks.model import QueueModel
from grader.checks.test_differential import timeline_ids
from grader.checks.timelines import Step
from grader.harness.judge.target_client import TargetProcess
from grader.harness.judge.world import LESSON_SEED, World
from grader.results import Outcome
from lab.store import Claim
from solutions import queue as reference

CHECK = "random-timelines"
SEEDS = (LESSON_SEED, 2, 3, 5, 7, 11)
BLIND = sorted(p.stem for p in MUTANTS.glob("blind_*.py"))
SHOWN_AS = ("timeline.random.replay", "timeline.random.as-drawn")


@functools.cache
def graded(name: str, seed: int):
    """The random-timelines result of mutant `name` in the world of `seed` (graded once)."""
    (result,) = runner.run_checks(str(MUTANTS / f"{name}.py"), select=CHECK, seed=seed, jobs=1)
    return result


def shown_steps(events: list[dict], ids) -> tuple[dict, list[Step]]:
    """The note that heads the shown timeline, and its steps rebuilt from the events after it
    (what the report prints: the calls, the operator's actions, the narration of a forged stamp,
    of how send behaves and of how many steps happen inside it: a work_once inside whose send
    something happened is told where it starts, "runs work_once and calls send with", and its
    return after them, `Lab._around_send`)."""
    heads = [i for i, e in enumerate(events) if e.get("key") in SHOWN_AS]
    assert len(heads) == 1, [e.get("key") for e in events if e["op"] == "note"]
    model, stamps, steps = QueueModel(ids), [], []
    forged = send = None
    meanwhile = 0  # how many steps the next work_once's send holds
    group: list[Step] = []  # a work_once and the steps inside its send, until they are all seen
    known: list = []  # the stamps a finish inside that send may hand in
    for event in events[heads[0] + 1:]:
        op = event["op"]
        if op == "note":
            key = event["key"]
            if key == "timeline.random.forged":
                forged = event["params"]["field"]
            elif key in ("timeline.random.send-takes", "timeline.random.send-raises"):
                send = event["params"]
            elif key == "timeline.random.send-meanwhile":
                meanwhile = event["params"]["steps"]
            elif key == "timeline.random.bulk":  # the rows a bulk step sets: one line
                params = event["params"]
                step = Step("bulk", qty=params["qty"], rows=tuple(
                    timelines.Rows(**{k: v for k, v in run.items() if k != "first"})
                    for run in params["rows"]))
                assert [run["first"] for run in params["rows"]] == [
                    ids(model.enqueued + 1 + sum(r.count for r in step.rows[:n]))
                    for n in range(len(step.rows))]
                outcome = timelines.play_step(step, model, model, stamps)
                steps.append(step)
            elif key == "timeline.work_once-sends":  # a work_once whose send holds steps
                params = event["params"]
                head = Step("work_once", now=event["t"], owner=params["actor"],
                            lease_ms=params["lease_ms"], send_ms=send["ms"],
                            send_error=send["error"] or "")
                seen = copy.deepcopy(model)  # what its send was given: its claim's
                known = stamps + timelines.play_step(head, seen, seen, list(stamps)).sent[:1]
                group, send = [head], None
            continue
        if op == "work_once" and event.get("returns"):
            continue  # its return, after the steps inside its send: it is group[0]
        if op == "enqueue":
            step = Step("enqueue", qty=event["qty"], deadline=event["deadline"],
                        max_attempts=event["max_attempts"])
        elif op == "claim":
            step = Step("claim", now=event["t"], owner=event["actor"], lease_ms=event["lease_ms"])
        elif op == "finish":
            handed = Claim(**event["stamp"])
            ref = next(i for i, s in enumerate(known if group else stamps)
                       if all(getattr(s, f) == getattr(handed, f) for f in Claim.__dataclass_fields__
                              if f != forged))
            forge = (forged, getattr(handed, forged)) if forged else ()
            step, forged = Step("finish", now=event["t"], ref=ref, forge=forge), None
        elif op == "work_once":
            step = Step("work_once", now=event["t"], owner=event["actor"],
                        lease_ms=event["lease_ms"], send_ms=send["ms"],
                        send_error=send["error"] or "")
            send = None
        elif op == "requeue":
            step = Step("requeue", job=event["job"])
        elif op == "set-row" and event["values"] == {"status": "quarantined"}:
            step = Step("quarantine", job=event["job"])
        elif op == "set-row" and list(event["values"]) == ["deadline"]:
            step = Step("move_deadline", job=event["job"], deadline=event["values"]["deadline"])
        else:
            raise AssertionError(f"an event no timeline step makes: {event}")
        if group:  # a step inside the send of group[0]
            group.append(dataclasses.replace(step, inside=True))
            if op == "claim" and isinstance(event.get("result"), dict):
                known.append(Claim(**event["result"]))
            if len(group) <= meanwhile:
                continue
            step, inside, group, meanwhile = group[0], group[1:], [], 0
        else:
            inside = []
        outcome = timelines.play_step(step, model, model, stamps, inside=inside)
        timelines.stamps_after(step, outcome, stamps, inside)
        steps += [step, *inside]
    if group:  # the check stopped inside that send: what was played of it
        steps += [group[0], *group[1:]]
    return events[heads[0]], steps


@pytest.mark.parametrize("name,seed", list(itertools.product(BLIND, SEEDS)))
def test_the_shown_timeline_differs_where_it_says(name, seed, tmp_path):
    shown_and_played_again(name, seed, tmp_path)


def shown_and_played_again(name: str, seed: int, tmp_path) -> list[Step]:
    """The timeline random-timelines shows for mutant `name` in the world of `seed`, rebuilt
    from its events (its values the world's), played again: it differs where it says."""
    result = graded(name, seed)
    assert result.outcome in (Outcome.FAILED, Outcome.ERRORED), result
    failure = result.result
    assert failure.detail != "timeline-unreproduced", failure
    world = World(seed, CHECK)
    head = next(e for e in failure.timeline if e.get("key") in SHOWN_AS)
    ids = timeline_ids(world, head["params"]["index"])  # as the world numbers that timeline's
    head, steps = shown_steps(failure.timeline, ids)
    assert head["params"]["steps"] == len(steps) and head["params"]["seed"] == seed

    # The world's values: its job ids in order, its instants (from its t0 on).
    jobs = []  # (a bulk step's line: its runs of rows, numbered as the world numbers them)
    for event in failure.timeline:
        for first, count in _jobs_of(event):
            assert first == ids(len(jobs) + 1), (event, jobs)
            jobs += [ids(n) for n in range(len(jobs) + 1, len(jobs) + 1 + count)]
    assert all(e["t"] >= world.t0 for e in failure.timeline if e.get("t") is not None)
    if failure.row is not None:
        assert failure.row.job in jobs

    # Played again against the code and the model: it differs, at its last step (or at a
    # work_once whose send holds the steps after it), not the store's.
    with TargetProcess(str(MUTANTS / f"{name}.py"), writable=[tmp_path]) as target:
        found = timelines.first_difference(steps, target, tmp_path / "again.db", ids)
    assert found is not None, steps
    assert timelines.played_with(steps, found.step) == len(steps) - 1, (found, steps)
    assert steps[found.step].op in ("claim", "finish", "work_once"), (found, steps)
    return steps


def _jobs_of(event: dict) -> list[tuple[int, int]]:
    """The jobs an event of the shown timeline enqueues or sets, as (the first job, how many):
    an enqueue's, a bulk step's runs of rows."""
    if event["op"] == "enqueue":
        return [(event["job"], 1)]
    if event.get("key") == "timeline.random.bulk":
        return [(run["first"], run["count"]) for run in event["params"]["rows"]]
    return []


#: Mutants only the timeline at the domain's size shows (generate.scale): its bulk step is one
#: line of the shown timeline, rebuilt from it.
SCALE = ("scale_claim_first_64_live_rows", "scale_finish_token_is",
         "scale_quarantine_in_batches_of_500", "scale_claim_counters_int32")


@pytest.mark.parametrize("name,seed", list(itertools.product(SCALE, (LESSON_SEED, 3))))
def test_a_shown_scale_timeline_differs_where_it_says(name, seed, tmp_path):
    steps = shown_and_played_again(name, seed, tmp_path)
    assert steps[0].op == "bulk" and sum(run.count for run in steps[0].rows) >= 1, steps


#: work_once that lets a late worker's finish land on the new holder's row: random-timelines
#: shows each in a late timeline (another worker acting inside the send), in every world.
LATE_FINISH = ("late_finish_rebuilds_claim_from_row", "late_finish_rereads_token",
               "late_finish_rereads_token_and_lease")


@pytest.mark.parametrize("name,seed", list(itertools.product(LATE_FINISH, (LESSON_SEED, 2, 5))))
def test_a_shown_late_timeline_differs_where_it_says(name, seed, tmp_path):
    steps = shown_and_played_again(name, seed, tmp_path)
    assert any(s.inside for s in steps) and steps[-1].inside, steps


# -- the root cause, without the grader ----------------------------------------------------------
@pytest.mark.parametrize("seed", [3, 11])
def test_in_a_drawn_world_the_model_numbers_jobs_as_the_world(seed, tmp_path):
    """The check's timelines in a drawn world (its ids, quantities, instants): the reference
    agrees with the model on every one, its enqueues included."""
    world = World(seed, CHECK)
    assert world.job_id(1) != 1  # the world numbers its jobs otherwise than the store would
    queue = timeline_db.Direct(reference)
    for index in range(100):
        ids = timeline_ids(world, index)
        steps = generate.in_world(generate.timeline(LESSON_SEED, index), world.t0, world.qty,
                                  ids)
        path = tmp_path / f"{index}.db"
        assert timelines.first_difference(steps, queue, path, ids) is None, index
        path.unlink()


def test_a_shrink_keeps_only_timelines_that_differ_the_same_way():
    """Dropping steps until the difference is another (here: at an enqueue, from the fourth
    step down) is no smaller example of this one: the shrink stops at four steps."""
    steps = [Step("enqueue", qty=1, deadline=10 ** 6)] * 3 + [Step("claim", owner="A")] * 5

    def how(candidate):
        if not candidate:
            return None
        return shrink.Found(("claim", "returned", None) if len(candidate) >= 4
                            else ("enqueue", "returned", None), len(candidate) - 1)

    small = shrink.shrink(steps, how)
    assert len(small) == 4 and how(small) == shrink.Found(("claim", "returned", None), 3)


# -- the shrink's cost: steps replayed, never the steps after the first difference ------------------
def load_mutant(name: str):
    import importlib.util
    import sys

    sys.path.insert(0, str(MUTANTS))
    try:
        spec = importlib.util.spec_from_file_location(f"shrunk_{name}", MUTANTS / f"{name}.py")
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        return module
    finally:
        sys.path.remove(str(MUTANTS))


def a_long_crowd() -> list[Step]:
    """Thirty jobs of assorted values, thirty claims by assorted workers over a few instants,
    then work that goes on: 91 steps, which a claim that looks only at the first five live jobs
    first gets wrong at its sixth claim (step 35)."""
    owners = timelines.OWNERS
    steps = [Step("enqueue", now=0, qty=n, deadline=10 ** 7 + n, max_attempts=2 + n % 3)
             for n in range(1, 31)]
    steps += [Step("claim", now=5 + n // 7, owner=owners[n % len(owners)], lease_ms=5000 + n)
              for n in range(30)]
    steps += [Step("finish", now=6000 + n, ref=n) for n in range(30)]
    return steps + [Step("claim", now=20_000, owner="B", lease_ms=1000)]


class Counted:
    """A shrink's `how` over a module (in this process), counting what each replay played."""

    def __init__(self, module, folder):
        self.queue, self.folder = timeline_db.Direct(module), folder
        self.lengths: list[int] = []  # each candidate's length
        self.played = 0  # steps played, each replay up to its first difference

    def __call__(self, steps: list[Step]):
        path = self.folder / f"{len(self.lengths)}.db"
        found = timelines.first_difference(steps, self.queue, path)
        path.unlink()
        self.lengths.append(len(steps))
        self.played += len(steps) if found is None else found.step + 1
        return None if found is None else shrink.Found(timelines.how(steps, found), found.step)


def replayed_in_a_target(name: str, steps: list[Step], folder) -> timelines.Difference | None:
    with TargetProcess(str(MUTANTS / f"{name}.py"), writable=[folder]) as target:
        return timelines.first_difference(steps, target, folder / "again.db")


def test_a_long_timeline_is_cut_after_its_first_difference_before_anything_else(tmp_path):
    """With nothing to spend, the shrink still drops every step after the first difference
    (they never play a part), and replays nothing."""
    name = "blind_claim_first_five_live_jobs"
    steps, how = a_long_crowd(), Counted(load_mutant(name), tmp_path)
    want = how(steps)
    assert want.step == 35 and len(steps) == 91
    how.lengths.clear()
    small = shrink.shrink(steps, how, want, budget=0)
    assert small == steps[:36] and how.lengths == []
    found = replayed_in_a_target(name, small, tmp_path)
    assert found is not None and found.step == 35


def test_past_its_safety_net_of_seconds_the_shrink_tries_no_more_and_the_cut_still_differs(
        tmp_path):
    """The shrink's wall-clock safety net (a machine loaded far past the usual): once past it,
    no candidate is tried; what comes back is the timeline cut after its first difference,
    which differs as it did (the check fails, it does not time out)."""
    name = "blind_claim_first_five_live_jobs"
    steps, how = a_long_crowd(), Counted(load_mutant(name), tmp_path)
    want = how(steps)
    how.lengths.clear()
    small = shrink.shrink(steps, how, want, seconds=0.0)
    assert small == steps[:want.step + 1] and how.lengths == []
    assert shrink.shrink.__defaults__[-1] == shrink.SAFETY_SECONDS > 0


class _Forgetful(dict):
    """A record of answers that never holds one: every candidate is replayed."""

    def __contains__(self, key) -> bool:
        return False


@pytest.mark.parametrize("budget", [300, shrink.BUDGET])
def test_a_candidate_proposed_again_is_not_replayed_and_costs_as_if_it_were(budget, tmp_path,
                                                                           monkeypatch):
    """The shrink's passes propose some candidates again: each is replayed once (`how` is
    asked of every candidate once), and charged to the budget as if replayed again, so the
    shrunk timeline is exactly the one a shrink that replays every candidate finds (whatever
    the budget cuts short)."""
    name = "blind_claim_first_five_live_jobs"
    steps, how = a_long_crowd(), Counted(load_mutant(name), tmp_path)
    asked = []
    want = how(steps)

    def recorded(candidate):
        asked.append(tuple(candidate))
        return how(candidate)

    small = shrink.shrink(steps, recorded, want, budget=budget, seconds=None)
    assert len(asked) == len(set(asked)) > 0
    every = []

    class Replaying(shrink.Tries):
        def __init__(self, *args, **kwargs):
            super().__init__(*args, **kwargs)
            self.answers = _Forgetful()

    def replayed(candidate):
        every.append(tuple(candidate))
        return how(candidate)

    monkeypatch.setattr(shrink, "Tries", Replaying)
    assert shrink.shrink(steps, replayed, want, budget=budget, seconds=None) == small
    if budget == shrink.BUDGET:  # the passes of a whole shrink did propose some again
        assert len(every) > len(asked)


@pytest.mark.parametrize("budget", [300, shrink.BUDGET])
def test_a_long_failing_timeline_shrinks_within_a_budget_of_steps(budget, tmp_path):
    """The shrink replays no step after the difference (no candidate is longer than the cut
    timeline), spends at most its budget of steps (the last replay may go past it), and what
    it returns differs as the timeline did, at its last step, played again in a target
    process. Given the whole budget it reaches the crowd's minimal form: six jobs, six claims
    by A at one instant, every value plain."""
    name = "blind_claim_first_five_live_jobs"
    steps, how = a_long_crowd(), Counted(load_mutant(name), tmp_path)
    want = how(steps)
    how.lengths.clear()
    how.played = 0
    small = shrink.shrink(steps, how, want, budget=budget)
    assert max(how.lengths) <= want.step + 1
    spent = how.played + shrink.REPLAY * len(how.lengths)
    assert spent <= budget + shrink.REPLAY + want.step + 1, spent
    assert how(small) == shrink.Found(want.how, len(small) - 1)
    found = replayed_in_a_target(name, small, tmp_path)
    assert found is not None and found.step == len(small) - 1
    assert timelines.how(small, found) == want.how
    if budget == shrink.BUDGET:
        plain = shrink.LESSON
        assert [s.op for s in small] == ["enqueue"] * 6 + ["claim"] * 6
        assert all(s.qty == plain.qty and s.max_attempts == 3 for s in small[:6])
        assert all((s.owner, s.now, s.lease_ms) == ("A", 0, plain.lease_ms) for s in small[6:])
        assert spent < budget  # it finished, not stopped


# -- what is shown when the shrunk timeline does not differ again ---------------------------------
def failure_of(call):
    from grader.harness.judge.outcomes import CheckFailed

    with pytest.raises(CheckFailed) as failed:
        call()
    return failed.value.failure


def heads(failure) -> list[str]:
    """The notes that head a shown timeline, in order."""
    return [e["key"] for e in failure.timeline if e.get("key") in SHOWN_AS]


@pytest.mark.parametrize("seed", [LESSON_SEED, 3])
def test_a_shrunk_timeline_that_does_not_differ_again_gives_way_to_the_one_drawn(seed, tmp_path):
    """The shrink's answer, played through the Lab, does not differ (here: a candidate that
    never could): the timeline as drawn is played on a fresh table instead and shown."""
    from grader.checks import test_differential as check
    from grader.harness.judge.scenario import Lab

    mutant = MUTANTS / "blind_finish_owner_like.py"
    lab = Lab(str(mutant), str(tmp_path), seed, check=CHECK)
    try:
        index, steps = next((i, s) for i in range(100)
                            for s in [check.world_timeline(lab, i)]
                            if timelines.first_difference(s, lab.target, tmp_path / f"{i}.db",
                                                          timeline_ids(lab.world, i)) is not None)
        nothing_yet = [s for s in steps if s.op == "enqueue"][:2]  # differs in no way
        failure = failure_of(lambda: check.show_failing(lab, nothing_yet, steps, index))
    finally:
        lab.close()
    assert failure.detail != "timeline-unreproduced" and heads(failure) == [
        "timeline.random.as-drawn"]
    jobs = [e["job"] for e in failure.timeline if e["op"] == "enqueue"]
    ids = timeline_ids(lab.world, index)
    assert jobs == [ids(n) for n in range(1, len(jobs) + 1)]  # a fresh table
    head, shown = shown_steps(failure.timeline, ids)
    assert head["params"]["steps"] == len(steps) and as_shown(shown) == as_shown(steps)[:len(shown)]


def test_a_timeline_that_does_not_differ_when_played_again_is_shown_as_played(tmp_path):
    """Code that answered otherwise the first time (here: a timeline the reference plays
    right): the failure says so, with the steps as they were played, never a bare sentence."""
    from grader.checks import test_differential as check
    from grader.harness.judge.scenario import Lab

    lab = Lab("solutions.queue", str(tmp_path), 3, check=CHECK)
    try:
        steps = check.world_timeline(lab, 0)
        failure = failure_of(lambda: check.show_failing(lab, steps[:3], steps, 0))
    finally:
        lab.close()
    assert failure.detail == "timeline-unreproduced"
    assert heads(failure) == ["timeline.random.as-drawn"]
    head, shown = shown_steps(failure.timeline, timeline_ids(lab.world, 0))
    assert head["params"]["steps"] == len(steps) and as_shown(shown) == as_shown(steps)


def as_shown(steps: list[Step]) -> list[Step]:
    """Steps as the report shows them: the instant of a step of the store's is not shown (it
    plays no part)."""
    return [s if s.op in ("claim", "finish", "work_once") else dataclasses.replace(s, now=0)
            for s in steps]


CARRIED = "timeline.random.carried-over"


def notes(failure) -> list[str]:
    return [e["key"] for e in failure.timeline if e["op"] == "note"]


def test_a_timeline_that_fails_only_after_earlier_ones_says_state_carried_over():
    """Code whose module state carries over from one timeline to the next (a set of done ids
    kept across databases): the shrunk timeline fails in the check's process only because of
    the timelines played there before it. Played alone in a fresh target process it passes, and
    the shown timeline says so right under its head (issue 38.5), instead of showing it as if it
    failed alone."""
    result = graded("state_done_ids_cached_across_databases", LESSON_SEED)
    assert result.outcome == Outcome.FAILED, result
    keys = notes(result.result)
    assert CARRIED in keys and keys.index(CARRIED) == keys.index(heads(result.result)[0]) + 1


@pytest.mark.parametrize("name", BLIND[:3])
def test_a_timeline_that_fails_alone_too_says_nothing_of_carried_state(name):
    """A blind mutant's bug shows in any process: its shrunk timeline fails alone too, and no
    note says that state carried over."""
    result = graded(name, LESSON_SEED)
    assert result.outcome == Outcome.FAILED and heads(result.result), result
    assert CARRIED not in notes(result.result)
