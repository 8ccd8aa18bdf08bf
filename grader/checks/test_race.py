"""Two real processes claim the one pending job at the same instant: exactly one gets it, in
every order of their statements that can matter.

A and B are target processes of their own (grader.harness.judge.children), each with its own gated
connection: every SQL statement they run waits at its gate until the grader lets it go, one at
a time, in the order of a *schedule* (grader.harness.judge.explore): "AABAB..." says whose statement
runs next. The grader runs the schedules whose orders can change what either claim sees (a
write made visible before or after the other's read, who takes the write lock first), each on a
fresh copy of the check's database, and stops at the first whose outcome is wrong (two Claims,
none, an error, no answer): that run is the one reported, its schedule named so that it can be
run again (`LEASELAB_RACE_SCHEDULE=AABAB... python -m grader -k race-one-winner`). A claim that
reads before it takes the write lock is caught on every run, not by luck.
"""

from __future__ import annotations

import itertools
import os
import sqlite3

from lab import store
from lab.store import BUSY_TIMEOUT_MS

from grader.checkdef import check
from grader.harness.judge import children
from . import txshape
from .situations import leased
from grader.harness.judge.explore import MAX_SCHEDULES, Schedule, explore
from grader.harness.judge.interleave import sql_line
from grader.harness.judge.journal import busy_timeout_set, switched_to
from grader.harness.judge.outcomes import CheckFailed
from grader.harness.judge.scenario import Lab
from grader.results import Failure, Kind, Outcome, RowDiff

ACTORS = ("A", "B")  # the roles: the claimers are named as the world names them
RACE_TIMEOUT = 15.0  # seconds for both claims of one schedule once started
#: The environment variable that names one schedule to run instead of exploring (a replay).
SCHEDULE_ENV = "LEASELAB_RACE_SCHEDULE"


@check("race-one-winner", points=6, timeout=45.0)
def test_two_processes_claim_at_once(lab):
    """A and B, in two processes, claim the only pending job at 0 ms: one Claim, one None, in
    every schedule of their statements that can matter."""
    w = lab.world
    job = lab.enqueue(qty=5)
    before = lab.row(job)
    lab.note("race.setup", t=w.t0)
    lab.needs("claim", {"op": "claim", "actor": w.name("A"), "t": w.t0, "lease_ms": w.lease_ms})
    replay = os.environ.get(SCHEDULE_ENV, "").strip().upper()
    replay = replay if replay and set(replay) <= set("AB") else ""
    runs = itertools.count(1)
    found = explore(lambda prefix, asleep: run_schedule(lab, job, before, prefix, next(runs),
                                                        asleep),
                    cap=1 if replay else MAX_SCHEDULES, first=replay)
    policy, outcomes, current = found.found or found.last
    if policy.schedule:  # no statement let go: nothing to name, nothing to replay
        lab.note("race.schedule", schedule=policy.schedule, runs=found.runs, env=SCHEDULE_ENV,
                 seed=lab.seed)
    events = narrate(lab, outcomes, policy)
    untrusted(lab, outcomes, events)
    if policy.gave_up is not None and policy.why == "steps":
        lab.fail("race-too-long", actor=policy.gave_up.actor,
                 other=_other(lab, policy.gave_up.actor), steps=len(policy.steps))
    judge(lab, job, before, outcomes, current=current)
    if policy.gave_up is not None:  # paused: whatever it showed, it forced nothing
        lab.fail("race-paused", actor=policy.gave_up.actor, other=_other(lab, policy.gave_up.actor),
                 step=policy.gave_up.step, waited=f"{policy.gave_up.waited:g}")
    if found.capped and not replay:
        lab.fail("race-explore-cap", runs=found.runs, left=found.left)


def run_schedule(lab: Lab, job: int, before: dict, prefix: str, n: int,
                 asleep: tuple | None = None) -> tuple:
    """Both claims on a fresh copy of the check's database (number `n`), in the schedule
    `prefix` (and `asleep`, explore.Schedule's sleeper) leads to:
    (its Schedule, whether the outcome is wrong, (Schedule, outcomes, the job's row after))."""
    w = lab.world
    path = fresh_copy(lab, n)
    claimers = [children.spawn(lab.target_spec, path, w.name(role), w.t0, w.lease_ms)
                for role in ACTORS]
    policy = Schedule(prefix, asleep)
    try:
        children.race(claimers, policy, timeout=RACE_TIMEOUT)
    finally:
        children.close(claimers)
    outcomes = {c.actor: c.outcome for c in claimers}
    current = row_of(path, job)
    return policy, wrong(lab, job, before, outcomes, policy, current), \
        (policy, outcomes, current)


def fresh_copy(lab: Lab, n: int):
    """Database file number `n`, a copy of what the check's holds now (the one pending job)."""
    path = lab.dir / lab.world.file(f"race-{n}")
    copy = sqlite3.connect(path)
    try:
        lab.observer.backup(copy)
    finally:
        copy.close()
    return path


def row_of(path, job: int) -> dict | None:
    """The job's committed row in the database at `path`, read on a connection of the grader's."""
    conn = store.connect(path, busy_timeout_ms=1000)
    try:
        return store.get_job(conn, job)
    finally:
        conn.close()


def wrong(lab: Lab, job: int, before: dict, outcomes: dict[str, dict], policy: Schedule,
          current: dict | None) -> bool:
    """Is this run's outcome wrong (the check would fail on it)? Exploring stops there."""
    if policy.gave_up is not None:
        return True
    if any(o["kind"] in ("grader-error", "protocol-error") for o in outcomes.values()):
        return True
    try:
        judge(lab, job, before, outcomes, current=current)
    except CheckFailed:
        return True
    return False


def narrate(lab: Lab, outcomes: dict[str, dict], policy: Schedule) -> dict[str, dict]:
    """The statements in the order they ran (as the gates let them go), then each result (the
    claim events on the timeline, by actor). A schedule given up says so in its own failure."""
    stalls = set(policy.stalls)
    for actor, step, sql in policy.log:
        lab.note("race.step", step=step, actor=actor, sql=sql_line(sql))
        if (actor, step) in stalls:
            lab.note("race.stalled", actor=actor, other=_other(lab, actor), step=step)
    events = {}
    for actor, o in outcomes.items():
        event = {"op": "claim", "actor": actor, "t": lab.world.t0, "lease_ms": lab.world.lease_ms}
        if o["kind"] == "own-connection":  # what it returned all the same
            o = o["returned"]
        if o["kind"] == "claim":
            event["result"] = o["claim"]
        elif o["kind"] == "none":
            event["result"] = None
        elif o["kind"] == "raised":
            event["raised"] = o["error"]
        elif o["kind"] in ("wrong-type", "wrong-field-type"):  # it returned: say what
            event["result"] = o["came_back"]
        lab.timeline.append(event)
        events[actor] = event
    return events


def untrusted(lab: Lab, outcomes: dict[str, dict], events: dict[str, dict]) -> None:
    """A claimer whose process broke the channel's rules: nothing either said is believed, the
    check is errored (never passed). A bug on the judge's side is the grader's."""
    for actor, o in outcomes.items():
        if o["kind"] == "grader-error":
            raise RuntimeError(f"claimer {actor}: {o['error']}")
    for actor, o in outcomes.items():
        if o["kind"] == "protocol-error":
            raise CheckFailed(Failure(Outcome.ERRORED, Kind.PROTOCOL, error=o["error"],
                                      step=events[actor], timeline=lab.timeline))


def judge(lab: Lab, job: int, before: dict, outcomes: dict[str, dict],
          current: dict | None | str = "check") -> None:
    """The verdict on what the claims did (`current`: the job's row after them; by default the
    check's database's). A schedule given up is failed by the check itself (race-paused,
    race-too-long): never a pass."""
    kinds = {actor: o["kind"] for actor, o in outcomes.items()}
    for actor, o in outcomes.items():
        if o["kind"] == "load-error":
            lab.fail_load(o["error_kind"], o["params"])
    for actor, o in outcomes.items():
        if o["kind"] == "own-connection":
            lab.fail_own_connection("claim", o["paths"])
    if "not-implemented" in kinds.values():
        lab.fail_not_implemented("claim")
    for actor, o in outcomes.items():
        if o["kind"] == "wrong-type":
            lab.fail_wrong_type("claim", o["came_back"], o["type"], "Claim | None")
        if o["kind"] == "wrong-field-type":
            lab.fail_wrong_field_type("claim", o["came_back"], o["field"], o["value"], o["type"],
                                      o["wanted"])
    if current == "check":
        current = lab.row(job)
    winners = [a for a, k in kinds.items() if k == "claim"]
    names = [lab.world.name(role) for role in ACTORS]
    owner = current["owner"] if current and current["owner"] in names else (winners or names)[0]
    expected = leased(before, owner, token=1, attempts=1,
                      lease_until=lab.world.t0 + lab.world.lease_ms)

    def fail(detail: str, **params) -> None:
        lab.fail(detail, diff=RowDiff(job, current, expected), **params)

    for actor, o in outcomes.items():
        for _, sql, _ in o.get("statements", ()):
            if switched_to(sql):
                fail("race-journal-mode", who=actor, mode=switched_to(sql), sql=sql_line(sql))
        # Judged by the PRAGMA in its SQL, like the journal mode: whether the cut wait breaks
        # depends on whether the other worker still holds the lock when this one asks.
        cut = shortened_busy_timeout(o)
        if cut:
            fail("race-busy-timeout", who=actor, other=_other(lab, actor), **cut)
    for actor, o in outcomes.items():
        other = _other(lab, actor)
        if o["kind"] == "raised":
            fail("race-locked" if o["locked"] else "race-raised", who=actor, other=other,
                 error=o["error"])
        if o["kind"] in ("exited", "no-answer"):
            fail(f"race-{o['kind']}", who=actor, code=o.get("code"), seconds=RACE_TIMEOUT)
    if len(winners) == 2:
        fail("race-two-claims", job=job)
    if not winners:
        fail("race-no-claim", job=job)
    winner = winners[0]
    stamp = outcomes[winner]["claim"]
    if current != expected or stamp != _stamp_of(current):
        fail("race-row", winner=winner, loser=_other(lab, winner))


def shortened_busy_timeout(o: dict) -> dict | None:
    """A claim that lowered the busy timeout below the one its connection came with, while its
    statements keep the shape (BEGIN IMMEDIATE first: else that is the cause to name): the
    PRAGMA's numbers and text, for the sentence; None otherwise."""
    statements = [(sql, tables) for _, sql, tables in o.get("statements", ())]
    cuts = [(ms, sql) for sql, _ in statements
            if (ms := busy_timeout_set(sql)) is not None and ms < BUSY_TIMEOUT_MS]
    if not cuts or txshape.problem(statements, need_sql=False) is not None:
        return None
    ms, sql = cuts[-1]
    return {"ms": ms, "sql": sql_line(sql), "default": BUSY_TIMEOUT_MS}


def _stamp_of(row: dict | None) -> dict | None:
    if row is None:
        return None
    return {"id": row["id"], "qty": row["qty"], "owner": row["owner"], "token": row["token"],
            "attempt": row["attempts"], "lease_until": row["lease_until"]}


def _other(lab: Lab, actor: str) -> str:
    """The other claimer's name."""
    return next(name for name in (lab.world.name(role) for role in ACTORS) if name != actor)
