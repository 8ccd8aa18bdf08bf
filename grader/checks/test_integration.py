"""The whole story in real processes: two workers, a real HTTP receiver, and a lease that runs
out in the middle of a send.

S (slow) claims the first job, delivers it, and stalls inside send. The grader moves the shared
logical clock past S's lease and lets F (fast) start: F re-claims that job (the receiver answers
'duplicate': it is idempotent per id), finishes it, and works through the rest of the queue. Only
then does S come back from send; its finish carries the old stamp and must be rejected. Afterwards
every job is done exactly once, and the receiver holds every id once with its qty.

The grader never sleeps to order anything: both workers open their connections, then wait for a
message before they start (S first); S waits for one inside send; the clock moves only when the
grader moves it. Wall-clock limits are safety nets.

Each worker is a thread of the judge driving a target process of its own (grader.harness.judge.workers):
the events read here are the judge's, made from validated data, never written by the code under
grade. A worker whose target process broke the channel makes the check errored; one whose call
never returned makes it timed out.
"""

from __future__ import annotations

import signal
import time
from collections import Counter
from typing import TYPE_CHECKING

from grader.checkdef import check
from grader.harness.judge.outcomes import CheckFailed
from grader.harness.judge.workers import ENDED, Crew, Plan
from grader.harness.processes import sandbox
from grader.results import Cause, Failure, Kind, Outcome

if TYPE_CHECKING:
    from grader.harness.judge.receiver import Receiver

QTYS = (2, 3, 5, 7, 11, 13, 17, 19)  # distinct, so a qty at the receiver tells which job it is
RUN_S = 20.0  # wall-clock bound for the whole run (a safety net; a passing run takes ~1 s)
SLOW, FAST = "S", "F"  # the roles: the workers are named as the check's world names them
#: What work_once may return (the type names the workers report): finish's bool, or None.
RETURN_TYPES = ("bool", "NoneType")


def _slow(lab) -> str:
    return lab.world.name(SLOW)


def _fast(lab) -> str:
    return lab.world.name(FAST)


@check("integration-run", points=3, timeout=30.0)
def test_integration_run(lab):
    """Two worker processes drain 8 jobs into a real HTTP receiver; S's lease runs out while it
    is sending, F re-claims and finishes that job, S's late finish is rejected; every job is
    done exactly once and every id is recorded once at the receiver with its qty."""
    lab.needs("work_once", {"op": "work_once", "actor": _slow(lab), "t": lab.world.t0,
                            "lease_ms": lab.world.lease_ms})
    jobs = {}
    for qty in QTYS:
        job = lab.enqueue(qty=qty)
        jobs[job] = lab.row(job)["qty"]
    from grader.harness.judge.receiver import Receiver  # http.server: only when this check runs

    with Receiver(lab.dir / lab.world.file("receiver")) as receiver, \
            Crew(on_event=lambda event: _narrate(lab, event), clock_start=lab.world.t0) as crew:
        _say(lab, "receiver", url=receiver.url)
        stale = _run(lab, crew, receiver.url)
        _judge(lab, crew, jobs, stale, receiver)


def _run(lab, crew: Crew, url: str) -> dict:
    """Force the story's order; return S's 'returned' event for the job it lost."""
    deadline = time.monotonic() + RUN_S
    slow, fast, lease_ms = _slow(lab), _fast(lab), lab.world.lease_ms
    plan = dict(target_spec=lab.target_spec, db_path=str(lab.path), url=url, lease_ms=lease_ms,
                max_rounds=4 * len(QTYS))
    crew.start(Plan(slow, wait_for_go=True, hold_first_send=True, take_turns=True, **plan))
    crew.start(Plan(fast, wait_for_go=True, take_turns=True, **plan))
    for worker in (slow, fast):  # both connections open before any code under grade runs
        _wait(lab, crew, deadline, worker, lambda e: e["op"] == "ready")
    crew.tell(slow, "go")

    held = _wait(lab, crew, deadline, slow, lambda e: e["op"] == "holding")
    if held["op"] != "holding":
        _judge_workers(lab, crew)
        _fail(lab, crew, "integration-slow-no-job", first=_first_job(lab))
    job = held["job"]
    crew.set_clock(held["lease_until"] + lease_ms // 2)
    _say(lab, "clock", t=crew.now, worker=slow, job=job, lease_until=held["lease_until"])
    crew.tell(fast, "go")
    lost_job = lambda e: e["op"] == "returned" and e.get("job") == job  # noqa: E731
    gate = _until(lab, crew, deadline, fast, lost_job)
    _say(lab, "release" if gate["op"] == "returned" else "release-after-stop", worker=slow, job=job)
    crew.tell(slow, "release")
    stale = _wait(lab, crew, deadline, slow, lost_job)
    _take_turns(lab, crew, deadline)
    if not crew.wait_all_ended(deadline):
        _fail(lab, crew, "integration-stuck", seconds=RUN_S)
    return stale


def _take_turns(lab, crew: Crew, deadline: float) -> None:
    """After the story, S and F work through the rest one work_once at a time, taking turns, so
    the whole run, and its verdict, is the same on every run (the race check covers claims at
    the same instant)."""
    _say(lab, "turns")
    while not all(crew.ended(worker) for worker in (_slow(lab), _fast(lab))):
        for worker in (_slow(lab), _fast(lab)):
            if crew.ended(worker):
                continue
            seen = len(crew.events)
            crew.tell(worker, "turn")
            answer = crew.wait_for(lambda e, w=worker: e["worker"] == w
                                   and (e["op"] == "returned" or e["op"] in ENDED),
                                   deadline, after=seen)
            if answer is None:
                _fail(lab, crew, "integration-stuck", seconds=RUN_S)


def _until(lab, crew: Crew, deadline: float, worker: str, wanted) -> dict:
    """Let `worker` (which takes turns) work, one work_once a turn, until an event of its is
    `wanted` or it ends: a queue that hands it other jobs first gets there later, not never."""
    seen = 0
    while True:
        event = crew.wait_for(lambda e: e["worker"] == worker
                              and (wanted(e) or e["op"] == "returned" or e["op"] in ENDED),
                              deadline, after=seen)
        if event is None:
            _fail(lab, crew, "integration-stuck", seconds=RUN_S)
        if wanted(event) or event["op"] in ENDED:
            return event
        seen = crew.events.index(event) + 1
        crew.tell(worker, "turn")


def _first_job(lab) -> int:
    """The job enqueued first: the one S's first work_once must claim."""
    return next(e["job"] for e in lab.timeline if e["op"] == "enqueue")


def _wait(lab, crew: Crew, deadline: float, worker: str, wanted) -> dict:
    """The first event of `worker` that is `wanted`, or the one that says it ended first."""
    event = crew.wait_for(lambda e: e["worker"] == worker and (wanted(e) or e["op"] in ENDED),
                          deadline)
    if event is None:
        _fail(lab, crew, "integration-stuck", seconds=RUN_S)
    return event


def _judge_workers(lab, crew: Crew) -> None:
    """Fail if a worker's target process broke the channel (errored: nothing it said can be
    believed), switched the journal mode, raised, died, hung (timed out) or never stopped asking
    for work."""
    _seen_causes(lab, crew)
    _judge_channel(lab, crew)
    for event in crew.events:  # the contract broken: nothing else that worker did is judged
        if event.get("own_connections"):
            _summary(lab, crew)
            lab.fail_own_connection("work_once", event["own_connections"])
    for event in crew.events:
        if event["op"] == "journal-mode":
            _fail(lab, crew, "integration-journal-mode", worker=event["worker"],
                  mode=event["mode"], sql=event["sql"])
    for event in crew.events:
        if event["op"] == "bad-claim" and event["field"] is None:
            lab.fail_wrong_type("claim", event["came_back"], event["type"], "Claim")
        if event["op"] == "bad-claim":
            lab.fail_wrong_field_type("claim", event["came_back"], event["field"], event["value"],
                                      event["type"], event["wanted"])
    for event in crew.events:
        if event["op"] == "raised" and event["not_implemented"]:
            lab.fail_not_implemented(event["not_implemented"])
        if event["op"] == "open-failed":
            _fail(lab, crew, "integration-worker-open-failed", worker=event["worker"],
                  error=event["error"])
        if event["op"] in ("raised", "load-error", "crashed"):
            _fail(lab, crew, "integration-worker-raised", worker=event["worker"],
                  error=event["error"], where=event.get("where") or "?")
        if event["op"] == "timed-out":
            _end(lab, crew, Failure(Outcome.TIMED_OUT, step=_step(lab, event),
                                    timeout=event["timeout"], timeline=lab.timeline))
        if event["op"] == "exited" and event.get("signal"):
            limit = sandbox.LIMIT_SIGNALS.get(getattr(signal, event["signal"], None))
            if limit is not None:
                _end(lab, crew, Failure(Outcome.RESOURCE_LIMIT, Kind.RESOURCE_LIMIT,
                                        error=limit, step=_step(lab, event),
                                        timeline=lab.timeline))
            _fail(lab, crew, "integration-worker-signalled", worker=event["worker"],
                  signal=event["signal"])
        if event["op"] == "exited":
            _fail(lab, crew, "integration-worker-exited", worker=event["worker"],
                  exitcode=event["exitcode"])
        if event["op"] == "stopped" and event.get("reason") == "rounds":
            _fail(lab, crew, "integration-worker-rounds", worker=event["worker"],
                  rounds=event["rounds"], jobs=len(QTYS))


def _judge_channel(lab, crew: Crew) -> None:
    """Errored if a worker's target process broke the channel: whatever else went wrong, nothing
    that process said can be believed."""
    for event in crew.events:
        if event["op"] == "protocol":
            _end(lab, crew, Failure(Outcome.ERRORED, Kind.PROTOCOL, error=event["error"],
                                    step=_step(lab, event), timeline=lab.timeline))


def _step(lab, event: dict) -> dict | None:
    """The call a worker's target process was in when it broke, hung or ended, as a step of the
    timeline: starting (importing the code under grade), or work_once (the sync after the last
    work_once too: a forged reply shows up there); None for anything else."""
    if event.get("during") == "start-up":
        return {"op": "import", "target": lab.target_spec}
    if event.get("during") in ("work_once", "sync"):
        return {"op": "work_once", "actor": event["worker"], "t": event.get("t"),
                "lease_ms": lab.world.lease_ms}
    return None


def _judge(lab, crew: Crew, jobs: dict[int, int], stale: dict, receiver: Receiver) -> None:
    """The verdict, the most telling problem first."""
    _judge_workers(lab, crew)
    _judge_stale(lab, crew, stale)
    for event in crew.events:
        if event["op"] == "returned" and event.get("type") not in RETURN_TYPES:
            _wrong_type(lab, crew, event)
    accepted = Counter(e.get("job") for e in crew.events
                       if e["op"] == "returned" and e["result"] is True)
    twice = [job for job in jobs if accepted[job] > 1]
    if twice:
        _fail(lab, crew, "integration-finished-twice", jobs=_ids(twice))
    rows = {job: lab.row(job) for job in jobs}
    not_done = [f"{job} ({rows[job]['status']})" for job in jobs
                if rows[job]["status"] != "done" or accepted[job] != 1]
    if not_done:
        _fail(lab, crew, "integration-not-done", jobs=", ".join(not_done))
    recorded = receiver.records()
    applied = Counter(a["id"] for a in receiver.attempts() if a["result"] == "applied")
    lost = [job for job in jobs if job not in recorded]
    wrong = [f"{job} ({recorded[job]} ≠ {qty})" for job, qty in jobs.items()
             if job in recorded and recorded[job] != qty]
    extra = [job for job in recorded if job not in jobs] + [job for job in jobs if applied[job] > 1]
    if lost or wrong or extra or sum(recorded.values()) != sum(jobs.values()):
        _fail(lab, crew, "integration-receiver-mismatch", lost=_ids(lost), wrong=_ids(wrong),
              extra=_ids(extra), recorded_sum=sum(recorded.values()),
              expected_sum=sum(jobs.values()))


def _judge_stale(lab, crew: Crew, stale: dict) -> None:
    """S's late finish must come back False. A value that is no bool (finish's 0) is a wrong
    type, named as such; None with the row as F left it (done) is only the wrong value: say so,
    with its type."""
    if stale["op"] == "returned" and stale["result"] is False:
        return
    if stale["op"] == "returned" and stale.get("type") not in RETURN_TYPES:
        _wrong_type(lab, crew, stale)  # 0 is no False: name its type, as the other checks do
    job = stale.get("job")
    new = next((e for e in crew.events if e["op"] == "sent" and e["worker"] == _fast(lab)
                and e["job"] == job), {})
    row = lab.row(job) if stale["op"] == "returned" and job is not None else None
    if stale["result"] is not True and row is not None and row["status"] == "done" \
            and row["token"] == new.get("token"):
        _fail(lab, crew, "integration-stale-finish-value", job=job, token=stale.get("token"),
              result=stale["result"], type=stale.get("type"), new_token=new.get("token"))
    _fail(lab, crew, "integration-stale-finish-accepted", job=job, token=stale.get("token"),
          result=stale.get("result"), new_token=new.get("token"))


def _wrong_type(lab, crew: Crew, event: dict) -> None:
    """A work_once that returned something other than a bool or None (finish's 0 or 1, say):
    the value and its type, as every check words a wrong return type."""
    _judge_channel(lab, crew)
    _summary(lab, crew)
    lab.fail_wrong_type("work_once", event["result"], event["type"], "bool | None")


# -- the timeline ----------------------------------------------------------------------------------
_QUIET = {("stopped", reason) for reason in ("empty", "raised", "crashed", "load-error",
                                              "bad-claim", "exited", "timed-out", "protocol",
                                              "open-failed", "closed")}


def _narrate(lab, event: dict) -> None:
    """A worker's event as a line of the timeline (the 'what happened' of a failure)."""
    op = event["op"]
    if (op, event.get("reason")) in _QUIET or op == "ready":
        return
    if op == "stopped":
        op = f"stopped-{event['reason']}"
    if op == "returned" and event.get("job") is None:
        op = "returned-nothing"
    if op == "exited" and event.get("signal"):
        op = "exited-signal"
    lab.timeline.append({"op": "note", "key": f"timeline.integration.{op}", "params": event,
                         "t": event.get("t")})


def _say(lab, what: str, **params) -> None:
    """A step of the grader's own, on the timeline and as the sandbox's current step."""
    lab.note(f"timeline.integration.{what}", **params)
    sandbox.report_step(lab.timeline[-1])


def _seen_causes(lab, crew: Crew) -> None:
    """A worker sent with a transaction open on its connection (the other one then met its
    lock): that mistake is the root cause of whatever this check fails on (results.Cause)."""
    if any(e["op"] == "sent" and e.get("in_transaction") for e in crew.events):
        lab.cause = lab.cause or Cause.SEND_IN_TRANSACTION


def _fail(lab, crew: Crew, detail: str, **params) -> None:
    _seen_causes(lab, crew)
    _judge_channel(lab, crew)  # a run that got stuck, say, after a forged reply: errored
    _summary(lab, crew)
    lab.fail(detail, **params)


def _end(lab, crew: Crew, failure: Failure) -> None:
    """A verdict other than 'failed' (errored, timed out, a resource limit)."""
    _seen_causes(lab, crew)
    _summary(lab, crew)
    raise CheckFailed(failure)


def _summary(lab, crew: Crew) -> None:
    for worker in (_slow(lab), _fast(lab)):
        mine = [e for e in crew.events if e["worker"] == worker]
        # A call that sent a job ends with the job in its event: returned True or False (the
        # finish accepted or rejected), returned anything else, or raised.
        ended = [e for e in mine if e["op"] in ("returned", "raised") and "job" in e]
        lab.note("timeline.integration.summary", worker=worker,
                 sent=_ids(e["job"] for e in mine if e["op"] == "sent"),
                 accepted=_ids(e["job"] for e in ended if e.get("result") is True),
                 rejected=_ids(e["job"] for e in ended if e.get("result") is False),
                 other=_ids(e["job"] for e in ended
                            if e["op"] == "raised" or type(e.get("result")) is not bool))


def _ids(items) -> str:
    return ", ".join(str(i) for i in items) or "-"
