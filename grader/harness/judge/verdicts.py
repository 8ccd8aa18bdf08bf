"""The verdicts of a check (`expect`, `fail`...), each raising `CheckFailed` with a
`grader.results.Failure` over the check's timeline, and the stop of a check at a function this
grade saw hang (`needs`, `not_graded`): `Verdicts`, which `scenario.Lab` is made of. They read
what the Lab keeps (its `timeline`, `row()`, `observer`, `world`, `hung`, whether it is inside
`setup()`) and never call the target.

May import: `lab`, the standard library, the grader's top-level basics and `outcomes` of this
package. Never `scenario` (the Lab is built on this, not the other way round) nor the target
process's client.
"""

from __future__ import annotations

import dataclasses
from typing import Any, NoReturn

from lab import store
from lab.store import Claim

from grader.results import Failure, Kind, Outcome, RowDiff

from .outcomes import CheckFailed, own_files, show, show_typed, type_name


class Verdicts:
    """What a check body says of what it saw: each method fails the check (raises CheckFailed)
    or returns. Mixed into `scenario.Lab`, whose state it reads."""

    def needs(self, function: str, step: dict | None = None) -> None:
        """Before a check runs `function` in processes of its own (the race's claimers, the
        integration's workers): stop here, not graded, if this grade saw it hang (`hung`)."""
        if function in self.hung:
            raise CheckFailed(self.not_graded(function, step))

    def not_graded(self, function: str, step: dict | None) -> Failure:
        """The check stopped at `step` (its first call of `function`, not made): `function`
        did not return when the grader first called it, and is not waited for again."""
        if step is not None:
            step["not_called"] = True
        return Failure(Outcome.TIMED_OUT, Kind.NOT_GRADED, function=function, step=step,
                       timeout=self.hung[function])

    # -- verdicts (each raises CheckFailed) ---------------------------------------------------
    def expect(self, got: Any, expected: Any, *, job: int | None = None,
               row: dict | None = None, detail: str | None = None, **params) -> None:
        """Fail unless `got == expected` and (given `job`) the stored row equals `row`. When the
        row is right and only the value is not, the failure says exactly that (not the check's
        `detail`, which is about the row's rule); when the value is right and only the row is
        not, it is a row mismatch that names the value as right (never "came back False,
        expected False")."""
        current = self.row(job) if job is not None else None
        same_value = got == expected and type(got) is type(expected)
        same_row = job is None or current == row
        if same_value and same_row:
            return
        came_back, wanted = show_typed(got, expected), show(expected)
        diff = None if job is None else RowDiff(job, current, row)
        if same_value:  # so the row is not: the value was right
            self._raise(Outcome.FAILED, Kind.ROW_MISMATCH, function=self._last_function(),
                        came_back=came_back, row=diff, detail=detail, params=params)
        if job is not None and same_row and getattr(got, "id", job) == job:
            self._raise(Outcome.FAILED, Kind.WRONG_VALUE, function=self._last_function(),
                        came_back=came_back, expected=wanted, row=diff)
        lease = self._lease_until_only(got, expected, current, row)
        if lease is not None:  # the lease_until rule, whatever situation the check set up
            self._raise(Outcome.FAILED, Kind.MISMATCH, came_back=came_back, expected=wanted,
                        row=diff, params=lease, detail="lease-until-other-deadline"
                        if "other" in lease else "lease-until-rule")
        self._raise(Outcome.FAILED, Kind.MISMATCH, came_back=came_back, expected=wanted, row=diff,
                    detail=detail, params=params)

    def _lease_until_only(self, got, expected, current: dict | None,
                          row: dict | None) -> dict | None:
        """A claim whose Claim (and row) is right but for lease_until: the params that explain
        it by the rule lease_until = min(now + lease_ms, deadline), with `other`, the other job
        whose deadline it took, if one has that deadline; None otherwise."""
        if (type(got) is not Claim or type(expected) is not Claim
                or got.lease_until == expected.lease_until
                or dataclasses.replace(got, lease_until=expected.lease_until) != expected):
            return None
        if row is not None and (current is None or {**current, "lease_until": row["lease_until"]}
                                != row or current["lease_until"] != got.lease_until):
            return None  # the row is wrong in more than lease_until (or disagrees with the Claim)
        event = next((e for e in reversed(self.timeline) if e.get("op") == "claim"), None)
        own = store.get_job(self.observer, got.id)
        if event is None or own is None or not isinstance(event.get("t"), int):
            return None
        params = {"job": got.id, "now": event["t"], "lease_ms": event.get("lease_ms"),
                  "deadline": own["deadline"], "came": got.lease_until,
                  "expected": expected.lease_until}
        other = self.observer.execute("SELECT id FROM jobs WHERE deadline = ? AND id != ?"
                                      " ORDER BY id LIMIT 1", (got.lease_until, got.id)).fetchone()
        return params if other is None else {**params, "other": other[0]}

    def _last_function(self) -> str:
        """The target's function called last (the one whose value a check compares)."""
        return next((e["op"] for e in reversed(self.timeline)
                     if e["op"] in ("claim", "finish", "work_once")), "claim")

    def expect_row(self, job: int, row: dict, detail: str | None = None, **params) -> None:
        current = self.row(job)
        if current != row:
            self.fail_row(RowDiff(job, current, row), detail, **params)

    def fail(self, detail: str, /, *, diff: RowDiff | None = None, **params) -> NoReturn:
        """Fail with a catalogue sentence (`detail.<detail>`) of the check's own; `diff` adds
        the job's row, current vs expected."""
        self._raise(Outcome.FAILED, Kind.DETAIL, row=diff, detail=detail, params=params)

    def fail_row(self, diff: RowDiff, /, detail: str | None = None, **params) -> NoReturn:
        """Fail: the job's row is not the expected one (with the check's sentence, if given)."""
        self._raise(Outcome.FAILED, Kind.ROW_MISMATCH, row=diff, detail=detail, params=params)

    def fail_wrong_type(self, function: str, came_back: str, type_name: str,
                        wanted: str) -> NoReturn:
        """Fail: `function` returned `came_back` (shown), of type `type_name`, not `wanted`."""
        self._raise(Outcome.FAILED, Kind.WRONG_TYPE, function=function, came_back=came_back,
                    type=type_name, wanted=wanted)

    def fail_wrong_field_type(self, function: str, came_back: str, field: str, value: str,
                              type: str, wanted: str) -> NoReturn:
        """Fail: `function` returned a Claim (`came_back`) whose `field` is `value`, of type
        `type`, not exactly `wanted`."""
        self._raise(Outcome.FAILED, Kind.WRONG_FIELD_TYPE, function=function, came_back=came_back,
                    type=type, wanted=wanted, params={"field": field, "value": value})

    def fail_own_connection(self, function: str, paths: list[str]) -> NoReturn:
        """Fail: `function` opened connections of its own to these files (the check's database
        or its side files) instead of using the one it was given."""
        self._raise(Outcome.FAILED, Kind.OWN_CONNECTION, function=function,
                    params={"files": own_files(paths)})

    def fail_not_implemented(self, function: str) -> NoReturn:
        self._raise(Outcome.NOT_IMPLEMENTED, Kind.NOT_IMPLEMENTED, function=function)

    def fail_load(self, kind: str, params: dict) -> NoReturn:
        """The target could not be loaded (in a process of the check's own)."""
        raise CheckFailed(Failure.load_error(kind, params))

    def _raise(self, outcome: str, kind: str, **facts) -> NoReturn:
        setup = self._in_setup > 0 and outcome != Outcome.NOT_IMPLEMENTED
        raise CheckFailed(Failure(outcome, kind, **facts, timeline=self.timeline,
                                  setup=setup or None))

    def _wrong_type(self, function: str, value: Any, wanted: str, event: dict) -> None:
        event["result"] = show(value)
        self.fail_wrong_type(function, show(value), type_name(value), wanted)

    def name_roles(self, failure: Failure) -> None:
        """Give the report's sentences ("{B}'s claim") the names this world gave the roles the
        check cast: in its `names` (its title and why), its parameters and every note of its
        timeline. (The lesson's world
        needs none: its names are the roles' letters, which every sentence falls back on.)"""
        names = self.world.names_used()
        if not names:
            return
        failure.names = names
        if failure.params is not None or failure.detail is not None:
            failure.params = {**names, **(failure.params or {})}
        for event in failure.timeline or ():
            if event.get("op") == "note":
                event["params"] = {**names, **event.get("params", {})}
