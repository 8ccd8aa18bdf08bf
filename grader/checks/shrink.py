"""Make a differing timeline minimal: fewer steps first, then simpler values, as long as the
code under grade still differs from the model (Hypothesis' shrinking, by hand and small).

`differs(steps)` replays a candidate on a fresh database; every candidate is tried in a fixed
order, so the same timeline always shrinks to the same result.
"""

from __future__ import annotations

import dataclasses
from typing import Callable

from .model import QueueModel
from .timelines import OWNERS, Step, play_step, stamps_after

Differs = Callable[[list[Step]], bool]
#: Replays a shrink may spend: a bound on time, not on quality (it stops with what it has).
BUDGET = 400
DEADLINE = 1_000_000  # a deadline out of the way, as in the hand-written checks


def shrink(steps: list[Step], differs: Differs, budget: int = BUDGET) -> list[Step]:
    """The smallest timeline found that still differs (`steps` itself if none smaller)."""
    tries = Tries(differs, budget)
    while True:
        smaller = _drop_steps(steps, tries)
        smaller = _simplify_values(smaller, tries)
        if smaller == steps or tries.spent:
            return smaller
        steps = smaller


class Tries:
    """`differs` with a budget: once spent, every further candidate counts as not differing."""

    def __init__(self, differs: Differs, budget: int):
        self.differs, self.left = differs, budget

    @property
    def spent(self) -> bool:
        return self.left <= 0

    def __call__(self, steps: list[Step]) -> bool:
        if self.spent:
            return False
        self.left -= 1
        return self.differs(steps)


def _drop_steps(steps: list[Step], differs: Tries) -> list[Step]:
    """Delete runs of steps, long runs first, from the end backwards (later steps matter least
    to earlier ones, and finish refers to claims before it)."""
    size = len(steps) // 2 or 1
    while size >= 1:
        start = len(steps) - size
        while start >= 0:
            candidate = _without(steps, start, size)
            if candidate and differs(candidate):
                steps = candidate
            start -= 1 if size == 1 else size
            start = min(start, len(steps) - size)
        size //= 2
    return steps


def _without(steps: list[Step], start: int, size: int) -> list[Step]:
    """`steps` less steps[start:start + size]; a later step keeps meaning the same thing: a
    finish hands in the same stamp (its `ref` counts the stamps handed out before it, fewer
    once some are gone), an operator's edit names the same job (ids count the enqueues)."""
    made = _made(steps)
    gone_stamps = sum(stamps for stamps, _ in made[start:start + size])
    first_gone = sum(stamps for stamps, _ in made[:start])
    gone_jobs = [job for _, job in made[start:start + size] if job is not None]
    kept = steps[:start]
    for step in steps[start + size:]:
        if step.op == "finish" and step.ref >= first_gone + gone_stamps:
            step = dataclasses.replace(step, ref=step.ref - gone_stamps)
        elif step.op in OPERATOR and step.job not in gone_jobs:
            step = dataclasses.replace(step, job=step.job - sum(j < step.job for j in gone_jobs))
        kept.append(step)
    return kept


OPERATOR = ("requeue", "quarantine", "move_deadline")


def _made(steps: list[Step]) -> list[tuple[int, int | None]]:
    """What each step makes as the model plays the timeline: how many stamps it hands out,
    and the id of the job it enqueues (None for other steps)."""
    model, stamps, made = QueueModel(), [], []
    for step in steps:
        before = len(stamps)
        outcome = play_step(step, model, model, stamps)
        stamps_after(step, outcome, stamps)
        made.append((len(stamps) - before, outcome.returned if step.op == "enqueue" else None))
    return made


def _simplify_values(steps: list[Step], differs: Tries) -> list[Step]:
    """Plainer values, one field of one step at a time: the lesson's owners A, B, C, qty 1,
    three attempts, no forgery, a send that takes no time, the usual lease and deadline; then
    times closer together and closer to 0."""
    for index in range(len(steps)):
        for field_changes in _simpler(steps[index]):
            for change in field_changes:  # the first that still differs wins
                candidate = steps[:index] + [change] + steps[index + 1:]
                if differs(candidate):
                    steps = candidate
                    break
    return _earlier(_closer(steps, differs), differs)


def _simpler(step: Step) -> list[list[Step]]:
    """For each field worth simplifying, the simpler versions of `step`, simplest first."""
    used = {"enqueue": ("qty", "max_attempts", "deadline"), "claim": ("owner", "lease_ms"),
            "finish": ("ref", "forge"), "work_once": ("owner", "lease_ms", "send_ms", "send_error")}
    plain = {"owner": list(OWNERS[:3]), "qty": [1], "max_attempts": [3], "forge": [()],
             "send_ms": [0], "send_error": [""], "lease_ms": [1000],
             "deadline": [step.now + DEADLINE], "ref": list(range(step.ref))}
    return [[dataclasses.replace(step, **{name: value}) for value in plain[name]
             if value != getattr(step, name)]
            for name in used.get(step.op, ())
            if plain[name] and getattr(step, name) != plain[name][0]]


def _closer(steps: list[Step], differs: Tries) -> list[Step]:
    """Close the gap before each step (the step and everything after it move earlier by the
    same amount, deadlines set from then on included), as far as it still differs."""
    for index in range(1, len(steps)):
        gap = steps[index].now - steps[index - 1].now - steps[index - 1].send_ms
        for delta in (gap, gap - 1, gap // 2):
            if delta <= 0:
                continue
            candidate = steps[:index] + [_moved(s, delta) for s in steps[index:]]
            if differs(candidate):
                steps = candidate
                break
    return steps


def _moved(step: Step, delta: int) -> Step:
    """`step` `delta` ms earlier, with the deadline it sets."""
    deadline = step.deadline - delta if step.op in ("enqueue", "move_deadline") else step.deadline
    return dataclasses.replace(step, now=step.now - delta, deadline=deadline)


def _earlier(steps: list[Step], differs: Tries) -> list[Step]:
    """Move the whole timeline towards 0 ms (every instant and deadline by the same amount)."""
    start = min((s.now for s in steps), default=0)
    if start <= 0:
        return steps
    candidate = [_moved(s, start) for s in steps]
    if all(s.deadline >= 0 for s in candidate) and differs(candidate):
        return candidate
    return steps
