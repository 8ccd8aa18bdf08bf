"""Random timelines over the contract's whole domain, from a seed.

A shadow model follows the timeline as it is drawn, so that the clock can land exactly on the
instants that matter (a lease's end, a job's deadline, one before, one after), finishes can hand
in the current stamp or a stale one, and operator edits pick jobs in the right state. Sizes
vary from one job to dozens, workers hold several leases at once and come back for more, worker
names come from a wide alphabet and times and lease lengths span their allowed range.
"""

from __future__ import annotations

import random

from lab.store import Claim

from .model import DONE, QUARANTINED, QueueModel
from .timelines import FORGEABLE, OWNERS, SEND_ERRORS, Step, play_step, stamps_after

FAR = 10 ** 12  # a deadline no timeline reaches
BIG = 2 ** 40   # times and lease lengths stay far below SQLite's 64-bit limit


def timeline(seed: int | str, index: int = 0, length: int | None = None) -> list[Step]:
    """The `index`-th timeline of `seed` (the same arguments always give the same steps)."""
    return Drawing(random.Random(f"{seed}:{index}")).draw(length)


class Drawing:
    """One timeline being drawn: the random source, the shadow model, the clock."""

    def __init__(self, rng: random.Random):
        self.rng = rng
        self.model = QueueModel()
        self.stamps: list[Claim] = []
        self.owners = rng.sample(OWNERS, rng.randint(2, 5))
        self.lease = rng.choice([1, 2, 3, 10, 1000, 1000, rng.randint(1, 10 ** 6),
                                 rng.randint(1, 2 ** 31)])
        self.now = rng.choice([0, 0, rng.randint(0, 10 ** 6), rng.randint(0, BIG)])
        self.steps: list[Step] = []
        self.fresh_stamp = False  # the last step handed out a stamp

    def draw(self, length: int | None) -> list[Step]:
        rng = self.rng
        length = length or rng.randint(4, 30)
        if rng.random() < 0.15:  # a busy queue: dozens of jobs
            for _ in range(rng.randint(10, 40)):
                self.add(self.enqueue())
        while len(self.steps) < length:
            requeue = 20 if self.live_job(QUARANTINED, pick=False) else 0
            kind = rng.choices(["enqueue", "claim", "finish", "work_once", "requeue",
                                "quarantine", "move_deadline"],
                               [18, 30, 25, 10, requeue, 5, 7])[0]
            if self.fresh_stamp and rng.random() < 0.4:  # the holder comes back to finish
                kind = "finish"
            step = getattr(self, kind)()
            if step is not None:
                self.add(step)
        return self.steps

    def add(self, step: Step) -> None:
        handed_out = len(self.stamps)
        outcome = play_step(step, self.model, self.model, self.stamps)
        stamps_after(step, outcome, self.stamps)
        self.fresh_stamp = len(self.stamps) > handed_out
        self.now = max(self.now, step.now + step.send_ms)
        self.steps.append(step)

    # -- values ----------------------------------------------------------------------------
    def tick(self) -> int:
        """The next instant: now again, an instant that matters, or a jump ahead."""
        rng = self.rng
        roll = rng.random()
        if roll < 0.35:
            return self.now
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
        return self.lease if rng.random() < 0.8 else rng.choice([1, rng.randint(1, 2 ** 31)])

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
        return Step("enqueue", now=now, qty=rng.choice([1, 2, 5, rng.randint(1, 10 ** 6)]),
                    deadline=max(deadline, 0), max_attempts=rng.choice([1, 2, 3, 3, 4]))

    def claim(self) -> Step:
        return Step("claim", now=self.tick(), owner=self.rng.choice(self.owners),
                    lease_ms=self.lease_ms())

    def finish(self) -> Step | None:
        rng = self.rng
        if not self.stamps:
            return None
        ref = len(self.stamps) - 1 if rng.random() < 0.55 else rng.randrange(len(self.stamps))
        return Step("finish", now=self.tick(), ref=ref, forge=self.forgery(self.stamps[ref]))

    def forgery(self, stamp: Claim) -> tuple:
        """Mostly none; else one field of the stamp changed, as a confused worker would."""
        rng = self.rng
        if rng.random() > 0.25:
            return ()
        name = rng.choice(FORGEABLE)
        if name == "owner":
            others = [o for o in OWNERS if o != stamp.owner]
            return ("owner", rng.choice([stamp.owner.swapcase(), *others]))
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
        if deadline is None or row["status"] == DONE:
            return None
        return Step("move_deadline", now=self.now, job=job, deadline=deadline)
