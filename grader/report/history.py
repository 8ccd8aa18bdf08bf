"""The local run history: a small JSON file beside the code under grade, `.leaselab-history.json`
in the target's folder (ignored by git: .gitignore, also the student copy's), read and written
by every local grade. It feeds

- the hints (grader.report.hints): how many local runs in a row each check has failed, so that
  with `hints = "after-runs"` a check's hint shows by itself after the instructor's number of
  runs;
- the progress line under the score: points won or lost since the last run that graded the
  same checks (a full run after a `-k` run is compared with the full run before, and says so),
  the checks fixed and the checks now failing; with no such run, the last run, on the checks
  both graded (the line says how many).

Never written by the instructor's modes (batch, Gradescope, Classroom 50, a grade in isolation:
they grade with `--no-history`), nor when `LEASELAB_NO_HISTORY` is set (the project's tests).

One file serves every target of its folder (keyed by the target file's name), each with:
`runs` (how many local runs), `order` (when it was last graded, to drop the oldest target past
`MAX_TARGETS`), `last` ({check id: [state, score]} of the last run: the checks it graded only),
`by_selection` ({signature of a set of checks: the same, of the last run that graded exactly
that set}, the `MAX_SELECTIONS` most recent sets) and `streak` ({check id: failing runs in a row}). A state is `p` (passed), `f` (failed on its
rule: a fitting hint exists) or `e` (failed without reaching the rule: not implemented, could
not load, crashed, hung). A run where a check passed ends its streak; `f` adds one; `e`, or a
run that did not grade the check, leaves it as it was: rewriting a function that raises
NotImplementedError is not failing at a rule.

Robust by design: a file that is missing, too large (`MAX_BYTES`), not JSON, of another shape,
or not a regular file is read as an empty history; a history that cannot be written is not
written. Neither ever stops a grade.
"""

from __future__ import annotations

import hashlib
import json
import os
import stat
from dataclasses import dataclass, field
from pathlib import Path

from grader.results import CheckResult
from .files import write_atomically

FILE_NAME = ".leaselab-history.json"
VERSION = 1
MAX_BYTES = 256 * 1024  # a larger file is not read (and is replaced by a small one)
MAX_TARGETS = 16        # targets remembered per folder, the most recently graded kept
MAX_SELECTIONS = 4      # sets of checks (a full run, a few -k runs) remembered per target
DISABLE_ENV = "LEASELAB_NO_HISTORY"
PASSED, FAILED, OTHER = "p", "f", "e"
STATES = (PASSED, FAILED, OTHER)


def disabled(environ=os.environ) -> bool:
    return environ.get(DISABLE_ENV, "") not in ("", "0")


def location(impl: str, cwd: str | Path | None = None) -> tuple[Path, str] | None:
    """(history file, key) for the target `impl` (a .py path, or a module name resolved the way
    the grader imports it: from the current folder, without importing anything); None when no
    such file is found (nothing to keep a history beside)."""
    target = target_file(impl, cwd)
    if target is None:
        return None
    return target.parent / FILE_NAME, target.name


def target_file(impl: str, cwd: str | Path | None = None) -> Path | None:
    """The file of the target `impl` (a .py path, or a module name resolved the way the grader
    imports it: from the current folder, without importing anything); None when not found."""
    base = Path(cwd or os.getcwd())
    if impl.endswith(".py") or "/" in impl or os.sep in impl:
        target = base / impl
    else:
        parts = impl.split(".")
        target = base.joinpath(*parts).with_suffix(".py")
        if not target.is_file():
            target = base.joinpath(*parts, "__init__.py")
    return target if target.is_file() else None


@dataclass
class Comparison:
    """This run against the last one, on the checks both graded."""
    first: bool                   # no earlier run of this target
    common: int = 0               # checks both runs graded
    delta: int = 0                # points won (lost when negative) on those checks
    fixed: list[str] = field(default_factory=list)   # failed then, pass now
    broken: list[str] = field(default_factory=list)  # passed then, fail now
    whole: bool = False           # both runs graded the same checks: `before` and `now` are totals
    before: int = 0
    now: int = 0
    earlier: bool = False         # compared with a run before the last (the last graded others)


@dataclass
class History:
    """The history of one target, as read (empty when there was none, or it was unusable)."""
    path: Path | None
    key: str
    data: dict

    @classmethod
    def load(cls, path: Path | None, key: str) -> History:
        return cls(path, key, _read(path))

    def _entry(self) -> dict:
        targets = self.data.get("targets")
        entry = targets.get(self.key) if isinstance(targets, dict) else None
        return entry if isinstance(entry, dict) else {}

    def last(self) -> dict[str, tuple[str, int]]:
        """The last run's {check id: (state, score)} (only well-formed entries)."""
        found = self._entry().get("last")
        if not isinstance(found, dict):
            return {}
        return {k: (v[0], v[1]) for k, v in found.items()
                if isinstance(k, str) and isinstance(v, list) and len(v) == 2
                and v[0] in STATES and type(v[1]) is int}

    def same_selection(self, ids) -> dict[str, tuple[str, int]] | None:
        """The {check id: (state, score)} of the last run that graded exactly the checks `ids`,
        or None."""
        found = self._entry().get("by_selection")
        found = found.get(signature(ids)) if isinstance(found, dict) else None
        if not isinstance(found, dict):
            return None
        return {k: (v[0], v[1]) for k, v in found.items()
                if isinstance(k, str) and isinstance(v, list) and len(v) == 2
                and v[0] in STATES and type(v[1]) is int}

    def streaks(self) -> dict[str, int]:
        found = self._entry().get("streak")
        if not isinstance(found, dict):
            return {}
        return {k: v for k, v in found.items()
                if isinstance(k, str) and type(v) is int and v > 0}

    def record(self, states: dict[str, tuple[str, int]], known: set[str]) -> Comparison:
        """Add this run ({check id: (state, score)}, the checks it graded) to the history;
        return how it compares with the last run. `known`: the declared check ids (a check
        that no longer exists is forgotten). Nothing is written: `save` does."""
        before = self.last()
        same = self.same_selection(states) if set(before) != set(states) else None
        if same and set(same) == set(states):
            comparison = compare(same, states, True)
            comparison.earlier = True
        else:
            comparison = compare(before, states, bool(self._entry()))
        streak = {k: v for k, v in self.streaks().items() if k in known}
        for check_id, (state, _) in states.items():
            if state == PASSED:
                streak.pop(check_id, None)
            elif state == FAILED:
                streak[check_id] = streak.get(check_id, 0) + 1
        entry = self._entry()
        runs = entry.get("runs")
        targets = self.data.get("targets") if isinstance(self.data.get("targets"), dict) else {}
        order = max((t.get("order", 0) for t in targets.values() if isinstance(t, dict)
                     and type(t.get("order", 0)) is int), default=0) + 1
        selections = entry.get("by_selection")
        selections = {k: v for k, v in selections.items() if isinstance(v, dict)
                      and k != signature(states)} if isinstance(selections, dict) else {}
        last = {k: [s, p] for k, (s, p) in states.items()}
        selections = dict(list(selections.items())[-(MAX_SELECTIONS - 1):])  # oldest first
        selections[signature(states)] = last
        targets = {**{k: v for k, v in targets.items() if isinstance(v, dict)},
                   self.key: {"runs": (runs if type(runs) is int else 0) + 1, "order": order,
                              "last": last, "by_selection": selections, "streak": streak}}
        if len(targets) > MAX_TARGETS:  # the targets graded longest ago go
            kept = sorted(targets, key=lambda k: _order(targets[k]))[-MAX_TARGETS:]
            targets = {k: targets[k] for k in kept}
        self.data = {"version": VERSION, "targets": targets}
        return comparison

    def save(self) -> bool:
        """Write the history; False (and nothing written) when it cannot be."""
        if self.path is None:
            return False
        try:
            if self.path.exists() and not stat.S_ISREG(os.stat(self.path).st_mode):
                return False  # a FIFO or a folder by that name is not ours to write into
            write_atomically(self.path, json.dumps(self.data, separators=(",", ":")) + "\n")
            return True
        except (OSError, ValueError):
            return False


def signature(ids) -> str:
    """A short name for a set of check ids (the same for any order)."""
    return hashlib.sha256("\n".join(sorted(ids)).encode()).hexdigest()[:16]


def _order(entry: dict) -> int:
    order = entry.get("order", 0)
    return order if type(order) is int else 0


def _read(path: Path | None) -> dict:
    """The history file's data, or {} when it is missing or unusable in any way."""
    if path is None:
        return {}
    try:
        info = os.stat(path)
        if not stat.S_ISREG(info.st_mode) or info.st_size > MAX_BYTES:
            return {}
        with open(path, encoding="utf-8") as f:
            data = json.loads(f.read(MAX_BYTES + 1))
    except (OSError, ValueError, RecursionError):
        return {}
    if not isinstance(data, dict) or data.get("version") != VERSION:
        return {}
    return data


def compare(before: dict[str, tuple[str, int]], now: dict[str, tuple[str, int]],
            seen: bool) -> Comparison:
    """This run (`now`) against the last one (`before`), on the checks both graded."""
    if not seen:
        return Comparison(first=True)
    common = [c for c in now if c in before]  # in this run's order (the lesson's)
    passed = {c: now[c][0] == PASSED for c in common}
    was = {c: before[c][0] == PASSED for c in common}
    result = Comparison(
        first=False, common=len(common),
        delta=sum(now[c][1] for c in common) - sum(before[c][1] for c in common),
        fixed=[c for c in common if passed[c] and not was[c]],
        broken=[c for c in common if was[c] and not passed[c]],
        whole=set(now) == set(before))
    if result.whole:
        result.before = sum(s for _, s in before.values())
        result.now = sum(s for _, s in now.values())
    return result


def states(results: list[CheckResult], rule_failures: set[str]) -> dict[str, tuple[str, int]]:
    """{check id: (state, score)} of a run; `rule_failures`: the failed checks whose failure
    is about their rule (a fitting hint exists)."""
    return {r.id: (PASSED if r.passed else FAILED if r.id in rule_failures else OTHER, r.score)
            for r in results}
