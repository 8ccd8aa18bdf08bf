"""Random timelines over the contract's whole domain, from a seed.

A shadow model follows the timeline as it is drawn, so that the clock can land exactly on the
instants that matter (a lease's end, a job's deadline, one before, one after), finishes can hand
in the current stamp or a stale one, and operator edits pick jobs in the right state. Sizes
vary from one job to dozens, workers hold several leases at once and come back for more, worker
names come from a wide alphabet and times and lease lengths span their allowed range. The last
timeline of each hundred ends with a full queue: a claim behind at least 17 jobs held at once.

`late` draws the timelines in which another worker acts while a work_once waits inside its send
(the lesson's late courier): a short timeline, then a work_once whose send outlasts what happens
inside it, in one of the `SITUATIONS` (its lease runs out and another worker re-claims the
job, and maybe finishes it; the operator takes the job back and the same name claims it again,
its lease ending when the old one did; the same name re-claims after expiry; the operator moves
the deadline earlier; another worker takes another job; the operator quarantines the job by
hand, maybe requeues it), with values drawn around its claim's lease_until and deadline.

`scale` draws the timelines played on a queue at the domain's size: thousands of jobs set at
once by the operator (one `bulk` step: held on valid leases, due at once, free with counters at
a 32-bit integer's edge, tokens and attempts past 256 and past 2**31), then ordinary steps over
it (`Drawing.at_scale`).
"""

from __future__ import annotations

import copy
import dataclasses
import random
from typing import Callable

from lab.store import Claim

from .model import DONE, LEASED, PENDING, QUARANTINED, QueueModel, lesson_ids
from .timelines import (FORGEABLE, OWNERS, SEND_ERRORS, Outcome, Rows, Step, play_step,
                        send_duration, stamps_after)

FAR = 10 ** 12  # a deadline no timeline reaches
BIG = 2 ** 40   # times and lease lengths stay far below SQLite's 64-bit limit
#: Lease lengths at the edges of 32-bit integers (a lease cut to a 32-bit timer's range, or
#: wrapped around, differs there), all below FAR: the lease is not cut to the deadline.
INT32_EDGES = (2 ** 31 - 1, 2 ** 31, 2 ** 32 + 1)
#: A deadline of 0 ms (the epoch), which every instant of a timeline is at or after: the job
#: is past its deadline from the start (0 is not "no deadline"). Kept 0 in every world.
EPOCH = 0


def timeline(seed: int | str, index: int = 0, length: int | None = None) -> list[Step]:
    """The `index`-th timeline of `seed` (the same arguments always give the same steps); one
    in every FULL_QUEUE_EVERY ends with a full queue (`Drawing.full_queue`)."""
    drawing = Drawing(random.Random(f"{seed}:{index}"), random.Random(f"{seed}:{index}:edges"))
    drawing.draw(length)
    if index % FULL_QUEUE_EVERY == FULL_QUEUE_EVERY - 1:
        drawing.full_queue()
    return drawing.steps


#: What another worker (or the operator) does inside a work_once's send, in a `late` timeline:
#: the n-th late timeline of a seed plays SITUATIONS[n % 7], so fourteen play each twice.
SITUATIONS = ("taken", "done", "taken-back", "same-name", "deadline-moved", "other-job",
              "quarantined")


def late(seed: int | str, index: int) -> list[Step]:
    """The `index`-th late timeline of `seed`: a short timeline (2 to 8 steps, no crowd), then
    a work_once inside whose send another worker acts (`Drawing.meanwhile`), in the situation
    SITUATIONS[index % len(SITUATIONS)]; from random sources of its own."""
    drawing = Drawing(random.Random(f"{seed}:late:{index}"),
                      random.Random(f"{seed}:late:{index}:edges"))
    drawing.draw(drawing.rng.randint(2, 8), openers=False)
    drawing.meanwhile(SITUATIONS[index % len(SITUATIONS)])
    return drawing.steps


def scale(seed: int | str, index: int) -> list[Step]:
    """The `index`-th scale timeline of `seed`: a queue at the domain's size, set in one step
    (`Drawing.at_scale`), then SCALE_STEPS more steps drawn as any timeline's; from random
    sources of their own."""
    drawing = Drawing(random.Random(f"{seed}:scale:{index}"),
                      random.Random(f"{seed}:scale:{index}:edges"))
    drawing.at_scale()
    drawing.draw(1 + drawing.rng.randint(*SCALE_STEPS), openers=False)
    return drawing.steps


#: How many jobs a scale timeline sets at once, by kind (drawn between the two): held on valid
#: leases before the first free job (more than a claim that looks at the first few hundred live
#: rows sees; lowest-id-first holds thousands more); due at the timeline's start (more than a
#: quarantine done in batches of 500, 1,000 or 4,096 takes at once); free, their counters at a
#: 32-bit integer's edge.
SCALE_HELD = (1500, 2000)
SCALE_DUE = (4200, 5000)
SCALE_FREE = (8, 16)
#: How many steps a scale timeline plays after its bulk step (drawn between the two).
SCALE_STEPS = (14, 20)
#: The held jobs' counters: past 2**31 (tokens) and past the small ints Python caches (256).
SCALE_TOKEN, SCALE_ATTEMPTS = 2 ** 31 + 250, 300


#: One timeline in this many (the last of each hundred: the check plays exactly one) ends with
#: a full queue. Appended after the timeline as drawn, so that whatever the rest of the
#: timeline shows (the first difference of any other bug) stays where it was.
FULL_QUEUE_EVERY = 100
#: How many jobs a full queue holds at once before its last claim (drawn between the two).
HELD = (17, 20)


#: How a timeline numbers its jobs (n: the n-th enqueued), besides 1, 2, 3 (most timelines):
#: ids with gaps, ids that cross 2**31, ids past 2**40. Strictly increasing; a world numbers
#: the jobs of such a timeline as it numbers the lesson's job of that id (World.job_id).
NUMBERINGS = {"gaps": lambda n: 10 * n, "int32": lambda n: 2 ** 31 - 3 + n,
              "huge": lambda n: 2 ** 40 + 7 * n}


def numbering(seed: int | str, index: int) -> Callable[[int], int]:
    """How the `index`-th timeline of `seed` numbers its jobs: mostly as the store does (n),
    about one in three otherwise (NUMBERINGS), from a random source of its own."""
    rng = random.Random(f"{seed}:{index}:ids")
    if rng.random() < 0.65:
        return lesson_ids
    return NUMBERINGS[rng.choice(sorted(NUMBERINGS))]


def in_world(steps: list[Step], t0: int, qty: Callable[[int], int] = int,
             ids: Callable[[int], int] = lesson_ids) -> list[Step]:
    """`steps` (drawn in the lesson's values) as a world plays them: every instant and deadline
    `t0` ms later, a forged lease_until too (the contract compares instants only with each
    other); quantities as the world gives them (`qty`, which keeps their order); jobs numbered
    as the world numbers them (`ids(n)`: the n-th job's id, increasing), so an operator's step
    names the same job and a forged id the same job, or the same gap between ids, as in the
    lesson's numbering. The timeline means the same; only its values change."""
    return [Step(
        step.op, now=step.now + t0, owner=step.owner, lease_ms=step.lease_ms,
        qty=qty(step.qty) if step.op in ("enqueue", "bulk") else step.qty,
        deadline=step.deadline + t0 if step.op in ("enqueue", "move_deadline")
        and step.deadline != EPOCH else step.deadline,
        max_attempts=step.max_attempts, ref=step.ref,
        forge=_forged_in_world(step.forge, t0, ids),
        job=ids(step.job) if step.op in OPERATOR_STEPS else step.job,
        send_ms=step.send_ms, send_error=step.send_error, inside=step.inside,
        rows=tuple(run.moved(t0) for run in step.rows)) for step in steps]


OPERATOR_STEPS = ("requeue", "quarantine", "move_deadline")


def _forged_in_world(forge: tuple, t0: int, ids: Callable[[int], int]) -> tuple:
    if not forge:
        return forge
    name, value = forge
    if name == "lease_until":
        return (name, value + t0)
    if name == "id":  # job n's id, or the id below the first job's (id 1 - 1 = 0)
        return (name, ids(value) if value >= 1 else ids(1) - 1)
    return forge


def near_names(owner: str) -> list[str]:
    """Names a careless comparison takes for `owner`: other case, spaces around it, and
    patterns that LIKE or GLOB would match it with. (Replaced in place, never appended: the
    draws are the same.)"""
    return [owner.swapcase(), owner[:1] + "*", owner.lower(), f"{owner} ", f" {owner}", "%",
            owner[:-1] + "_", owner[:1] + "%"]


KINDS = ("enqueue", "claim", "finish", "work_once", "requeue", "quarantine", "move_deadline")
#: How often each kind of step comes (requeue aside: often, when a job is quarantined). A
#: timeline follows one profile: a balanced one, one busy with claims (leases of different
#: lengths overlap and run out: the selection order shows), one busy with finishes (stamps).
PROFILES = ((18, 30, 25, 10, 5, 7), (30, 45, 6, 6, 8, 4), (10, 25, 45, 10, 3, 5))


class Drawing:
    """One timeline being drawn: the random source, the shadow model, the clock."""

    def __init__(self, rng: random.Random, edges: random.Random | None = None):
        self.rng = rng
        #: The domain's edges (a deadline of 0, leases at 32-bit limits, deadlines moved to
        #: between, more leases held at once) come from a source of their own, so that the
        #: rest of each timeline is drawn as before they were added.
        self.edges = edges or random.Random(rng.random())
        self.model = QueueModel()
        self.stamps: list[Claim] = []
        self.owners = rng.sample(OWNERS, rng.randint(2, 5))
        self.lease = rng.choice([1, 2, 3, 10, 1000, 1000, rng.randint(1, 10 ** 6),
                                 rng.randint(1, 2 ** 31)])
        self.now = rng.choice([0, 0, rng.randint(0, 10 ** 6), rng.randint(0, BIG)])
        self.steps: list[Step] = []
        self.fresh_stamp = False  # the last step handed out a stamp
        self.profile = rng.choice(PROFILES)

    def draw(self, length: int | None, openers: bool = True) -> list[Step]:
        """Draw steps up to `length` (default: 4 to 30); `openers`: maybe begin with a crowd,
        a deadline moved between claims, a busy queue or overlapping leases."""
        rng = self.rng
        length = length or rng.randint(4, 30)
        edge = self.edges.random() if openers else 1.0
        if edge < 0.05:
            self.crowd()
        elif edge < 0.1:
            self.deadline_moved_between_claims()
        if not openers:
            pass
        elif rng.random() < 0.15:  # a busy queue: dozens of jobs
            for _ in range(rng.randint(10, 40)):
                self.add(self.enqueue())
        elif rng.random() < 0.3:
            self.overlapping_leases()
        while len(self.steps) < length:
            requeue = 20 if self.live_job(QUARANTINED, pick=False) else 0
            kind = rng.choices(KINDS, [*self.profile[:4], requeue, *self.profile[4:]])[0]
            if self.fresh_stamp and rng.random() < 0.25:  # the holder comes back to finish
                step = self.finish(holder=True)
            else:
                step = getattr(self, kind)()
            if step is not None:
                self.add(step)
        return self.steps

    def add(self, step: Step, inside: list[Step] = ()) -> None:
        """Play `step` on the shadow model (a work_once with `inside` played inside its send)
        and append it, and them."""
        handed_out = len(self.stamps)
        outcome = play_step(step, self.model, self.model, self.stamps, inside=inside)
        stamps_after(step, outcome, self.stamps, inside)
        self.fresh_stamp = len(self.stamps) > handed_out
        self.now = max(self.now, step.now + send_duration(step, inside))
        self.steps += [step, *inside]

    def meanwhile(self, situation: str) -> None:
        """A work_once (by one of the timeline's workers, with a lease of the timeline's)
        inside whose send another worker, or the operator, acts (`situation`: one of SITUATIONS,
        its steps drawn by `_inside`); its send lasts at least until they are done, often a
        little more, sometimes raises. The work_once's claim is foreseen on a copy of the
        shadow model (the job it takes, its lease_until); a job is enqueued first when
        nothing is claimable."""
        rng = self.rng
        owner, lease_ms, now = rng.choice(self.owners), self.lease_ms(), self.tick()
        seen = copy.deepcopy(self.model)
        claim = seen.claim(owner, now, lease_ms)
        if claim is None:
            self.add(Step("enqueue", now=now, qty=rng.choice([1, 2, 5]),
                          deadline=now + rng.choice([4 * lease_ms, FAR]), max_attempts=3))
            seen = copy.deepcopy(self.model)
            claim = seen.claim(owner, now, lease_ms)
        inside, window = self._inside(situation, seen, self.stamps + [claim], claim, now)
        end = max([now] + [sub.now for sub in inside])
        back = end + rng.choice([0, 0, 1, rng.randint(1, max(1, lease_ms // 2))])
        if window is not None and not window[0] <= back < window[1] and rng.random() < 0.8:
            low = max(end, window[0])  # mostly back while what matters holds (a lease)
            back = low + rng.randint(0, max(0, window[1] - low - 1))
        self.add(Step("work_once", now=now, owner=owner, lease_ms=lease_ms, send_ms=back - now,
                      send_error="SendFailed" if rng.random() < 0.125 else ""), inside)

    def _inside(self, situation: str, seen: QueueModel, known: list[Claim], claim: Claim,
                now: int) -> tuple[list[Step], tuple[int, int] | None]:
        """The steps of `situation` inside the send of a work_once that claimed `claim` at
        `now`, each played on `seen` (the shadow model as it will be inside that send) as it
        is drawn, so that the next knows where the queue stands; and the instants [from, to)
        the send mostly returns in, where what makes a late finish matter still holds (the new
        holder's lease, the old one's under a moved deadline), or None."""
        rng, steps = self.rng, []
        job, until = claim.id, claim.lease_until
        others = [o for o in self.owners if o != claim.owner] or ["B"]
        window: list = [None]

        def add(step: Step) -> Outcome:
            steps.append(dataclasses.replace(step, inside=True))
            outcome = play_step(step, seen, seen, known)
            stamps_after(step, outcome, known)
            if isinstance(outcome.returned, Claim):  # a new holder: back while its lease holds
                window[0] = (step.now, outcome.returned.lease_until)
            return outcome

        after = until + rng.choice([0, 0, 1, rng.randint(1, max(1, self.lease))])
        before = now + rng.randint(0, max(0, until - now - 1))  # while the lease still runs
        if situation in ("taken", "done"):  # the lease runs out, another worker re-claims
            took = add(Step("claim", now=after, owner=rng.choice(others),
                            lease_ms=self.lease_ms()))
            if situation == "done" and isinstance(took.returned, Claim):
                took = took.returned
                add(Step("finish", now=after + rng.randint(0, max(0, took.lease_until
                                                                   - after - 1)),
                         ref=len(known) - 1))
        elif situation == "taken-back":  # the operator takes the job back while it is held;
            # the same name claims it again, its lease ending when the old one did
            add(Step("quarantine", now=before, job=job))
            add(Step("requeue", now=before, job=job))
            lease = until - before if until > before and rng.random() < 0.8 else self.lease
            add(Step("claim", now=before, owner=claim.owner, lease_ms=lease))
            window[0] = (before, min(until, window[0][1]) if window[0] else until)
        elif situation == "same-name":  # the same name re-claims once the lease ran out
            add(Step("claim", now=after, owner=claim.owner, lease_ms=self.lease_ms()))
        elif situation == "deadline-moved":  # the operator moves the deadline under the lease
            deadline = before + rng.randint(0, max(0, until - before - 1))
            add(Step("move_deadline", now=before, job=job, deadline=deadline))
            window[0] = (deadline, until)  # past the deadline, the lease still running
            if rng.random() < 0.5:  # someone asks for work at that deadline
                add(Step("claim", now=max(before, deadline), owner=rng.choice(others),
                         lease_ms=self.lease_ms()))
        elif situation == "quarantined":  # the operator quarantines the held job by hand,
            # maybe requeues it; nobody claims it before the send returns, its lease still running
            add(Step("quarantine", now=before, job=job))
            if rng.random() < 0.5:
                add(Step("requeue", now=before, job=job))
            window[0] = (before, until)
        else:  # another worker takes another job (or none) while the lease runs
            if rng.random() < 0.8:
                add(Step("enqueue", now=before, qty=rng.choice([1, 2, 5]),
                         deadline=before + FAR, max_attempts=3))
            took = add(Step("claim", now=before, owner=rng.choice(others),
                            lease_ms=self.lease_ms()))
            if isinstance(took.returned, Claim) and rng.random() < 0.5:
                add(Step("finish", now=before, ref=len(known) - 1))
            window[0] = (before, until)  # the work_once's own lease: its finish lands
        return steps, window[0]

    def overlapping_leases(self) -> None:
        """Several jobs held by several workers on leases of different lengths, one of them
        perhaps quarantined and requeued: as the leases run out one by one, jobs in different
        states (expired, never claimed, requeued, tried more often) are claimable together,
        and only the lowest id is right."""
        rng = self.rng
        for _ in range(rng.randint(3, 6)):
            self.add(self.enqueue())
        for _ in range(rng.randint(2, 5)):
            self.add(Step("claim", now=self.now, owner=rng.choice(self.owners),
                          lease_ms=self.lease * rng.choice([1, 2, 3, 5])))
        if rng.random() < 0.5:
            job = self.live_job("leased")
            if job is not None:
                self.add(Step("quarantine", now=self.now, job=job))
                self.add(Step("requeue", now=self.now, job=job))
        ends = sorted({r["lease_until"] for r in self.model.rows.values()
                       if r["status"] == "leased"})
        for end in ends[:rng.randint(1, 3)]:  # leases run out one by one; a worker asks each time
            self.add(Step("claim", now=max(self.now, end + rng.choice([0, 1])),
                          owner=rng.choice(self.owners), lease_ms=self.lease_ms()))

    def crowd(self) -> None:
        """Many jobs at once: dozens due at the same instant (every one is quarantined by the
        claim after it, not the first few), and more held on valid leases than a claim that
        looks at the first few live jobs sees (the free one comes after them)."""
        edges = self.edges
        due = self.now + edges.choice([1, self.lease, 2 * self.lease])
        for _ in range(edges.randint(6, 40)):
            deadline = due if edges.random() < 0.7 else self.now + FAR
            self.add(Step("enqueue", now=self.now, qty=edges.choice([1, 2, 5]),
                          deadline=deadline, max_attempts=3))
        for _ in range(edges.randint(5, 9)):
            self.add(Step("claim", now=self.now, owner=edges.choice(self.owners),
                          lease_ms=edges.choice([self.lease, 3 * self.lease])))

    def full_queue(self) -> None:
        """A run of claims at one instant through a queue fuller than a claim that looks only
        at the first few live jobs sees: HELD and one more jobs enqueued, each with attempts
        to spare after a claim, then a claim by one of several workers for each job claimable
        now (those before them first). Each claim takes the lowest claimable id, so the last
        finds every live job below its own held on a valid lease, at least HELD of them still
        with attempts and time left: a claim that pages through the live jobs N at a time,
        or scans only the first N rows, for any N up to HELD, comes back with None. Its values
        come from the domain's edges' source (the rest of the timeline is drawn before it, as
        it was)."""
        edges, now = self.edges, self.now
        held = edges.randint(*HELD)
        before = sum(1 for row in self.model.rows.values()
                     if self.model.lease_not_valid(row, now)
                     and row["attempts"] < row["max_attempts"] and row["deadline"] > now)
        for _ in range(held + 1):
            self.add(Step("enqueue", now=now, qty=edges.choice([1, 2, 5]),
                          deadline=now + edges.choice([self.lease, 2 * self.lease, FAR]),
                          max_attempts=edges.choice([2, 3, 3, 4])))
        for _ in range(before + held + 1):
            self.add(Step("claim", now=now, owner=edges.choice(self.owners),
                          lease_ms=edges.choice([self.lease, 3 * self.lease])))

    def at_scale(self) -> None:
        """The queue at the domain's size, set at once by the operator (one `bulk` step): a
        run of jobs held by one worker on valid leases (tokens past 2**31, attempts past 256,
        attempts to spare: claimable again once their leases run out, during the timeline or
        not), a run of jobs due now (each quarantined by the next claim, not the first few),
        and a few free jobs whose token and attempts are 2**31 - 1 (the next claim makes both
        2**31: past a 32-bit integer). A claim that looks at the first few hundred live rows
        finds nothing free; a quarantine in batches leaves due jobs pending; a finish that
        compares counters by identity (`is`) rejects its own holder."""
        rng, now = self.rng, self.now
        held, due, free = (rng.randint(*SCALE_HELD), rng.randint(*SCALE_DUE),
                           rng.randint(*SCALE_FREE))
        until = now + rng.choice([2, 3, 5, 10]) * self.lease
        runs = (Rows(held, LEASED, rng.choice(self.owners), until, SCALE_TOKEN, SCALE_ATTEMPTS,
                     1000, now + FAR),
                Rows(due, PENDING, None, None, rng.choice([0, 300, SCALE_TOKEN]),
                     rng.choice([0, 1, 2]), 3, now),
                Rows(free, PENDING, None, None, 2 ** 31 - 1, 2 ** 31 - 1, 2 ** 32, now + FAR))
        self.add(Step("bulk", now=now, qty=1, rows=runs))

    def deadline_moved_between_claims(self) -> None:
        """A job claimed, its lease run out, its deadline moved (earlier, to after that
        instant), claimed again: the new lease is cut to the new deadline, as the row says
        now, not to a deadline read (and kept) at the first claim."""
        edges = self.edges
        self.add(Step("enqueue", now=self.now, qty=1, deadline=self.now + FAR, max_attempts=3))
        job = max(self.model.rows)
        self.add(Step("claim", now=self.now, owner=edges.choice(self.owners),
                      lease_ms=self.lease))
        until = self.model.rows[job]["lease_until"] or self.now
        if self.model.rows[job]["status"] != "leased":
            return
        self.add(Step("move_deadline", now=self.now, job=job,
                      deadline=until + edges.randint(1, self.lease)))
        self.add(Step("claim", now=until, owner=edges.choice(self.owners),
                      lease_ms=self.lease))

    # -- values ----------------------------------------------------------------------------
    def tick(self) -> int:
        """The next instant: now again, an instant that matters, or a jump ahead."""
        rng = self.rng
        roll = rng.random()
        if roll < 0.35:
            return self.now
        if roll < 0.5:  # after several leases have run out: they are claimable together
            ends = sorted(r["lease_until"] for r in self.model.rows.values()
                          if r["status"] == "leased" and r["lease_until"] >= self.now)
            if len(ends) >= 2:
                return rng.choice(ends[1:]) + rng.choice([0, 1])
        if roll < 0.75:
            instants = [t + d for row in self.model.rows.values()
                        for t in (row["lease_until"], row["deadline"]) if t is not None
                        for d in (-1, 0, 1) if t + d >= self.now]
            if instants:
                return rng.choice(instants)
        return self.now + rng.choice([1, rng.randint(1, 2 * self.lease),
                                      rng.randint(1, 10 ** 6)])

    def lease_ms(self) -> int:
        rng = self.rng
        if rng.random() < 0.6:
            return self.lease
        # leases of different lengths overlap: one job is re-claimed while another runs on
        lease = rng.choice([1, max(1, self.lease // 2), 2 * self.lease, 3 * self.lease,
                            rng.randint(1, 2 ** 31)])
        return self.edges.choice(INT32_EDGES) if self.edges.random() < 0.1 else lease

    def live_job(self, *statuses: str, pick: bool = True) -> int | None:
        """A job in one of `statuses`, drawn at random (`pick=False`: the first, no draw)."""
        jobs = [job for job, row in self.model.rows.items() if row["status"] in statuses]
        if not jobs:
            return None
        return self.rng.choice(jobs) if pick else jobs[0]

    # -- steps -----------------------------------------------------------------------------
    def enqueue(self) -> Step:
        rng = self.rng
        now = self.tick()
        deadline = now + rng.choice([0, 1, self.lease - 1, self.lease, self.lease + 1,
                                     rng.randint(1, 4 * self.lease), FAR, FAR])
        if self.edges.random() < 0.04:
            deadline = EPOCH
        return Step("enqueue", now=now, qty=rng.choice([1, 2, 5, rng.randint(1, 10 ** 6)]),
                    deadline=max(deadline, 0), max_attempts=rng.choice([1, 2, 3, 3, 4]))

    def claim(self) -> Step:
        return Step("claim", now=self.tick(), owner=self.rng.choice(self.owners),
                    lease_ms=self.lease_ms())

    def finish(self, holder: bool = False) -> Step | None:
        """A finish with an earlier stamp; `holder`: the worker that just claimed comes back
        with its stamp, mostly while its lease still runs."""
        rng = self.rng
        if not self.stamps:
            return None
        if holder:
            ref, now = len(self.stamps) - 1, self.during(self.stamps[-1])
        else:
            ref = len(self.stamps) - 1 if rng.random() < 0.55 else rng.randrange(len(self.stamps))
            now = self.tick()
        return Step("finish", now=now, ref=ref,
                    forge=self.forgery(self.stamps[ref], rate=0.5 if holder else 0.3))

    def during(self, stamp: Claim) -> int:
        """An instant inside `stamp`'s lease (now, the next ms, its last ms), else any."""
        inside = [t for t in (self.now, self.now + 1, stamp.lease_until - 1)
                  if self.now <= t < stamp.lease_until]
        return self.rng.choice(inside) if inside and self.rng.random() < 0.7 else self.tick()

    def forgery(self, stamp: Claim, rate: float) -> tuple:
        """Mostly none (1 - rate); else one field of the stamp changed, as a confused worker
        would."""
        rng = self.rng
        if rng.random() > rate:
            return ()
        name = rng.choice(FORGEABLE + ("owner",))  # names are where comparisons go wrong
        if name == "owner":
            near = [o for o in near_names(stamp.owner) if o != stamp.owner]
            others = [o for o in OWNERS if o != stamp.owner]
            return ("owner", rng.choice(near if near and rng.random() < 0.6 else others))
        value = getattr(stamp, name) + rng.choice([-1, 1])
        return (name, value) if value != getattr(stamp, name) else ()

    def work_once(self) -> Step:
        rng = self.rng
        lease_ms = self.lease_ms()
        return Step("work_once", now=self.tick(), owner=rng.choice(self.owners),
                    lease_ms=lease_ms,
                    send_ms=rng.choice([0, 1, lease_ms - 1, lease_ms, lease_ms + 1,
                                        rng.randint(0, 3 * lease_ms)]),
                    send_error=rng.choice(["", "", "", *SEND_ERRORS]))

    def requeue(self) -> Step | None:
        job = self.live_job(QUARANTINED)
        return None if job is None else Step("requeue", now=self.now, job=job)

    def quarantine(self) -> Step | None:
        job = self.live_job("pending", "leased")
        return None if job is None else Step("quarantine", now=self.now, job=job)

    def move_deadline(self) -> Step | None:
        job = self.live_job("pending", "leased", QUARANTINED)
        if job is None:
            return None
        row = self.model.rows[job]
        choices = [self.now, self.now + 1, row["deadline"] - 1]
        if row["lease_until"] is not None:
            choices += [row["lease_until"] - 1, row["lease_until"]]
        deadline = self.rng.choice([c for c in choices if 0 <= c < row["deadline"]] or [None])
        edges = self.edges
        if edges.random() < 0.25:  # between now and the old deadline, past the current lease:
            # the claim after the move must cut its lease to the new deadline, not a remembered one
            start = max(self.now, row["lease_until"] or self.now)
            between = start + edges.randint(1, 2 * self.lease)
            deadline = between if between < row["deadline"] else deadline
        if deadline is None or row["status"] == DONE:
            return None
        return Step("move_deadline", now=self.now, job=job, deadline=deadline)
