"""Scenario questions, run for real: play a question's steps against an implementation (on a
fresh database in a temporary folder, through grader.harness.judge.scenario.Lab) and find which choice
describes what the code actually did.

The project's tests use this to hold the answer key to the reference (`solutions.queue`): the key
of a scenario question is not an opinion, it is what the reference does. The quiz itself never
runs code: a student's copy may not even contain the solutions.
"""

from __future__ import annotations

import dataclasses
import tempfile
from dataclasses import dataclass
from typing import Any

from lab.store import Claim

from grader.harness.judge.outcomes import CheckFailed, TargetRaised, error_line, show
from grader.harness.judge.scenario import Lab
from .bank import Choice, Question


class ScenarioError(Exception):
    """The scenario could not be played to its end as the bank tells it."""


@dataclass(frozen=True)
class Outcome:
    returned: Any        # what the asked (last) step returned: Claim, bool or None
    row: dict | None     # the whole row of `row_of` afterwards

    def summary(self) -> str:
        return f"returned {show(self.returned)}, row {self.row}"


def run(question: Question, target: str) -> Outcome:
    """Play the question's steps against `target` (a module name or .py path with claim /
    finish / work_once), run in a target process of its own as in a grade."""
    assert question.kind == "scenario", question.id
    with tempfile.TemporaryDirectory(prefix="quiz-") as workdir:
        lab = Lab(target, workdir)
        try:
            stamps: dict[str, Claim] = {}
            returned = None
            for n, step in enumerate(question.steps, 1):
                try:
                    returned = _play(lab, step, stamps)
                except (CheckFailed, TargetRaised) as exc:
                    raise ScenarioError(f"{question.id}: step {n} ({step['do']}) failed:"
                                        f" {_why(exc)}") from None
                if "result" in step and not _agrees(returned, step["result"]):
                    raise ScenarioError(
                        f"{question.id}: step {n} ({step['do']}) returned {show(returned)},"
                        f" but the bank tells the student it returns {step['result']!r}")
            return Outcome(returned, lab.row(question.row_of))
        finally:
            lab.close()


def matches(choice: Choice, outcome: Outcome) -> bool:
    """Does the choice describe the outcome (its return value and the columns it names)?"""
    if not _same_return(outcome.returned, choice.returns):
        return False
    row = outcome.row or {}
    return all(column in row and row[column] == want for column, want in choice.row.items())


def derive_answer(question: Question, target: str) -> str:
    """The one choice that describes what `target` does; ScenarioError if none or several do."""
    outcome = run(question, target)
    found = [c.id for c in question.choices if matches(c, outcome)]
    if len(found) != 1:
        which = "no choice" if not found else f"several choices ({', '.join(found)})"
        raise ScenarioError(f"{question.id}: {which} describe(s) what the code did:"
                            f" {outcome.summary()}")
    return found[0]


def _play(lab: Lab, step: dict, stamps: dict[str, Claim]):
    what = step["do"]
    if what == "enqueue":
        return lab.enqueue(qty=step["qty"], deadline=step["deadline"],
                           max_attempts=step.get("max_attempts", 3))
    if what == "requeue":
        return lab.requeue(step["job"])
    if what == "note":
        return None
    if what == "claim":
        claim = lab.claim(step["owner"], now=step["t"], lease_ms=step["lease_ms"])
        if "as" in step and claim is not None:
            stamps[step["as"]] = claim
        return claim
    if what == "finish":
        if step["stamp"] not in stamps:
            raise ScenarioError(f"stamp {step['stamp']!r} was never handed out")
        return lab.finish(stamps[step["stamp"]], now=step["t"])
    raise ScenarioError(f"unknown step {what!r}")


def _same_return(got: Any, want: Any) -> bool:
    if want is None or isinstance(want, bool):
        return type(got) is type(want) and got == want
    return isinstance(got, Claim) and dataclasses.asdict(got) == want


def _agrees(got: Any, told: Any) -> bool:
    """A setup step's result as the bank tells it: null, a bool, or some of the Claim's fields."""
    if isinstance(told, dict):
        return isinstance(got, Claim) and all(getattr(got, k) == v for k, v in told.items())
    return _same_return(got, told)


def _why(exc: Exception) -> str:
    if isinstance(exc, TargetRaised):
        return f"{exc.function} raised {error_line(exc.exc)}"
    failure = exc.failure.to_json()
    return str({k: v for k, v in failure.items() if k != "timeline"})
