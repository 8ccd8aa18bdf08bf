"""The results model: what grading one check produced. Every output format is a function of
these objects (grader.report), whichever process or platform they were produced in.

No imports from the rest of the grader: the harness, the checks, the reports and the
instructor tools all stand on this.
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class CheckResult:
    id: str
    points: int
    outcome: str  # passed / failed / errored / timed_out / not_implemented
    result: dict = field(default_factory=dict)
    duration: float = 0.0
    #: With --repeat N: the outcome of each run, in order (empty for a single run).
    runs: list[str] = field(default_factory=list)

    @property
    def unstable(self) -> bool:
        """The verdict changed between repeated runs."""
        return len({outcome == "passed" for outcome in self.runs}) > 1

    @property
    def passed(self) -> bool:
        return self.outcome == "passed"

    @property
    def score(self) -> int:
        return self.points if self.passed else 0

    @property
    def passed_runs(self) -> int:
        return sum(outcome == "passed" for outcome in self.runs)

    @property
    def failed_run_numbers(self) -> list[int]:
        """1-based numbers of the runs that did not pass."""
        return [i for i, outcome in enumerate(self.runs, 1) if outcome != "passed"]
