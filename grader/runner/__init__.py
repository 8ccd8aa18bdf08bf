"""Run the graded checks and collect one result per check, in the order the lesson tells its rules.

No test framework runs the checks: a grade imports the check modules (grader.checkdef's
registry), picks the checks a `-k` expression selects (`keywords`), and runs each one, `repeat`
times in each of `sweep` worlds, every run in a sandbox child of its own (grader.harness.processes.sandbox)
that starts the target process and drives a fresh Lab. Checks run `jobs` at a time on as many
lanes (`lanes`): forked copies of this process, each a subreaper running its share one check at a
time; the long checks start at once beside the short ones, and the results are the same as
one lane's, in lesson order. Where there is no fork (grader.harness.processes.portable), the
lanes are spawned interpreters instead and the preflight's judge a thread (`spawned`), with the
same verdicts.

Lives here: what runs checks and in what order.

May import: grader.checks, grader.harness and the top-level basics. Never grader.report (results
are plain `grader.results` objects), grader.quiz, grader.instructor or grader.cli.
"""

from __future__ import annotations

import dataclasses
import functools
import importlib
import os
import sys
import tempfile
import time
from dataclasses import dataclass
from typing import Callable, Iterator

from grader.checkdef import DEFAULT_TIMEOUT, FAMILIES, CheckInfo, Part, all_checks, family
from grader.checks import contract_model
from grader.harness.processes import hygiene, portable, sandbox, workroot, zygote
from grader.harness.judge import checkrun
from grader.harness.judge.world import LESSON_SEED
from grader.results import CheckResult, Failure, Kind, Outcome, outcome_of

from . import keywords, lanes

PREFLIGHT_TIMEOUT = 10.0  # seconds to import the code under grade (times --timeout-scale)
#: Seconds the probe gives each of its calls (times --timeout-scale): twice a check's whole
#: timeout, since a hang found there costs every check that calls the function (a correct call
#: takes milliseconds; a loaded machine must not lose a whole grade to one slow moment).
PROBE_TIMEOUT = 2 * DEFAULT_TIMEOUT


class GraderError(Exception):
    """The grader itself could not run (exit status 2)."""


class NoCheckSelected(GraderError):
    """`select` matches no check (a pass of `watch` may select none: not an error there)."""


@dataclass(frozen=True)
class Settings:
    """What every run of every check of one grade shares."""
    spec: str
    timeout_scale: float
    seeds: tuple[int, ...]  # one run per entry: `repeat` runs in each of `sweep` worlds
    swept: bool
    #: (function, seconds waited) for each function the probe saw hang (`preflight`): every
    #: check stops at its first call of one, not graded (grader.harness.judge.scenario.Lab.hung)
    hung: tuple[tuple[str, float], ...] = ()

    def briefed(self, brief: dict) -> "Settings":
        """These settings with what the preflight found (`preflight`'s brief, as JSON gives it),
        which the lanes learn before their first check."""
        return dataclasses.replace(self, hung=tuple((f, float(t)) for f, t in brief["hung"]))


@dataclass(frozen=True)
class Unit:
    """What one lane runs in one go: a check, or one part of a check with parts."""
    check: CheckInfo
    part: Part | None


def run_checks(impl: str, *, timeout_scale: float = 1.0, select: str | None = None,
               repeat: int = 1, seed: int = LESSON_SEED, sweep: int = 1,
               jobs: int | None = None) -> list[CheckResult]:
    """Grade `impl` (module name or .py path); `select` is a -k expression (`keywords`);
    `repeat` runs every check that many times on fresh databases; `seed` draws the checks'
    worlds; `sweep` runs every check in that many worlds (seed, seed + 1...); `jobs`: how many
    checks run at once (default: `default_jobs`, the cores)."""
    return list(iter_checks(impl, timeout_scale=timeout_scale, select=select, repeat=repeat,
                            seed=seed, sweep=sweep, jobs=jobs))


def iter_checks(impl: str, *, timeout_scale: float = 1.0, select: str | None = None,
                repeat: int = 1, seed: int = LESSON_SEED, sweep: int = 1,
                jobs: int | None = None, short_first: bool = False,
                preflight: "Preflight | None" = None,
                checks: list[CheckInfo] | None = None) -> Iterator[CheckResult]:
    """`run_checks`, one result at a time, in lesson order, each as soon as it and every check
    before it are done. `short_first`: every lane runs the short units before the long ones
    (`schedule`; watch: the checks of its first screen are all done as soon as can be).
    `preflight`: the caller's `start_preflight(impl, timeout_scale)`, started earlier still.
    `checks`: the checks to run, given instead of `select` (the pytest plugin: the items pytest
    selected), put in lesson order."""
    prepare()  # before the lanes are forked: they share this process's zygote
    # The preflight's judge first: it runs while the checks load and the lanes start.
    preflight = preflight or start_preflight(impl, timeout_scale)
    try:
        checks = selected(select) if checks is None else in_lesson_order(checks)
        settings = settings_for(impl, timeout_scale=timeout_scale, repeat=repeat, seed=seed,
                                sweep=sweep)
        units = [unit for info in checks for unit in units_of(info)]
        lanes_wanted = min(default_jobs() if jobs is None else max(1, jobs), len(units))
    except BaseException:
        preflight.abandon()  # no lane yet: it and whatever it left are ended
        raise
    # One lane too: the judges of most checks run there, without a fork each. Where there is
    # no fork, lanes spawned as fresh interpreters (the portable path).
    if portable.forkless():
        from . import spawned  # (not at the top: `python -m grader.runner.spawned` runs it)

        run_lanes = spawned.run
    else:
        run_lanes = lanes.run
    done = run_lanes(units, lanes_wanted, settings, *schedule(units),
                     meanwhile=lambda keep: preflight.brief(keep),
                     long_first=0 if short_first else None)
    try:
        refused = next(done)  # the preflight's answer, while the lanes start
    finally:
        if not preflight.answered:  # the lanes could not start: it is not waited for
            preflight.abandon(hygiene.own_children() - {preflight.started.pid})
    if refused is not None:  # every check says why at once, none waits for its own timeout
        done.close()  # the lanes are ended at once
        for info in checks:
            yield refused_result(info, refused, settings)
        return
    yield from _assemble(checks, units, done, settings)


def settings_for(impl: str, *, timeout_scale: float = 1.0, repeat: int = 1,
                 seed: int = LESSON_SEED, sweep: int = 1) -> Settings:
    """What every run of a grade shares: `repeat` runs in each of `sweep` worlds drawn from
    seed, seed + 1, ..."""
    repeat, sweep = max(1, repeat), max(1, sweep)
    return Settings(impl, timeout_scale,
                    tuple((seed + i) % 2 ** 63 for i in range(sweep) for _ in range(repeat)),
                    sweep > 1)


def units_of(info: CheckInfo) -> list[Unit]:
    """The units a check runs as: itself, or each of its parts."""
    return [Unit(info, Part(i, info.parts) if info.parts > 1 else None)
            for i in range(info.parts)]


def grade_check(info: CheckInfo, settings: Settings, here: bool = False) -> CheckResult:
    """One check graded from this process, its parts one after another, for a caller that runs
    checks one at a time itself (the pytest plugin). Every run's judge is forked and jailed
    (grader.harness.processes.sandbox), since this process is not a lane: it is not jailed, so the code's
    SQL must not run here. `here`: the judges of the checks that start no process of their own
    run in this process, as in a lane, but unjailed (the plugin's --pdb, for a debugger to stop
    in the check's body)."""
    units = units_of(info)
    reported = lanes.Reported(units)  # a run an earlier part failed in is not run again
    done = []
    for index, unit in enumerate(units):
        done.append(run_unit(unit, settings, in_lane=here, quiet=reported.quiet(index)))
        reported.done(index, done[-1][0])
    return _result(info, [runs for runs, _ in done], sum(took for _, took in done), settings)


def refused_result(info: CheckInfo, refused: Failure, settings: Settings) -> CheckResult:
    """A check's result when the code under grade could not even be loaded (`preflight`)."""
    return _result(info, [[refused] * len(settings.seeds)], 0.0, settings)


def prepare() -> None:
    """Start what every check needs, before the checks are even imported: the zygote, whose
    interpreter starts meanwhile (the first check would start it anyway, and wait for it); and
    the grade's root folder (grader.harness.processes.workroot), owned by this process, which the lanes
    and judges forked from it make their folders under."""
    zygote.start()
    workroot.root()


def selected(select: str | None) -> list[CheckInfo]:
    """The checks `select` picks, in lesson order (NoCheckSelected: none; GraderError: the
    expression cannot be read)."""
    try:
        match = keywords.matcher(select)
    except keywords.BadExpression as bad:
        raise GraderError(f"cannot read -k {select!r}: {bad}") from None
    checks = [info for info in all_checks().values()
              if match((info.id, info.name, info.module.rsplit(".", 1)[-1] + ".py",
                        family(info.module)))]
    if not checks:
        raise NoCheckSelected(f"no check matches -k {select!r} (a check id such as"
                              " finish-at-expiry, or a part of one; python -m grader checks"
                              " lists every id)")
    return checks


def in_lesson_order(checks: list[CheckInfo]) -> list[CheckInfo]:
    """`checks`, each once, in lesson order (NoCheckSelected: none)."""
    if not checks:
        raise NoCheckSelected("no check to run")
    order = {check_id: i for i, check_id in enumerate(all_checks())}
    return sorted({info.id: info for info in checks}.values(), key=lambda i: order[i.id])


def default_jobs() -> int:
    """How many lanes a grade runs by default: as many as the cores this process may run on.
    (One more, to run while a lane's judge and its target take turns, measured on a 2-core VM:
    0.85 of the wall while locked-database-raises slept 150 ms, 0.97 of the wall and 1.04 of
    the CPU once it slept 30: not worth a lane's processes, nor a slower first verdict.)"""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        return max(1, os.cpu_count() or 1)


#: The long families, longest first (each declares it: `checkdef.Family.long`).
LONGEST_FIRST = tuple(f.name for f in sorted((f for f in FAMILIES if f.long),
                                             key=lambda f: -f.long))


def schedule(units: list[Unit]) -> tuple[list[int], list[int]]:
    """The units lanes take, as two queues: the long ones (a check in parts, then the checks
    of the long families, longest first: `LONGEST_FIRST`), and the rest in lesson
    order. Every lane but the last takes long units first, the last short ones first (each
    lane the other queue once its own is empty): the long units overlap with the many short
    ones, the longest of them start first (what is left for the end is as short as can be),
    and the first checks of the lesson are done early, for a report that shows them as they
    come."""
    def long(i: int) -> bool:
        return units[i].check.parts > 1 or units[i].check.family.long > 0

    def rank(i: int) -> tuple:
        return units[i].check.parts == 1, -units[i].check.family.long, i

    order = range(len(units))
    return sorted((i for i in order if long(i)), key=rank), [i for i in order if not long(i)]


def preflight(spec: str, timeout_scale: float) -> tuple[Failure | None, dict[str, float]]:
    """`start_preflight`, waited for (nothing else runs meanwhile)."""
    return start_preflight(spec, timeout_scale).answer()


@dataclass
class Preflight:
    """The preflight's judge, forked (`start_preflight`); its answer once it is done."""
    started: sandbox.Started
    answered: bool = False

    def answer(self, keep: set[int] | frozenset = frozenset()
               ) -> tuple[Failure | None, dict[str, float]]:
        """What `preflight` returns; `keep`: our children forked since that are not its (the
        lanes), left alone by its sweep."""
        self.answered = True
        answer = sandbox.finish(self.started, keep)
        if isinstance(answer, dict):
            return None, dict(answer["hung"])
        return answer, {}

    def abandon(self, keep: set[int] | frozenset = frozenset()) -> None:
        """Its judge ended unanswered (the grade stopped before it needed the answer)."""
        if not self.answered:
            self.answered = True
            sandbox.abandon(self.started, keep)

    def brief(self, keep: set[int] | frozenset = frozenset()) -> tuple[Failure | None, dict]:
        """`briefing`'s answer, as the lanes take it."""
        refused, hung = self.answer(keep)
        return refused, {"hung": sorted(hung.items())}


def start_preflight(spec: str, timeout_scale: float) -> Preflight:
    """Before the checks, once a grade (in a judge of its own, like a check's): load the target,
    then call claim, finish and work_once once each in the plainest situation
    (grader.harness.judge.checkrun.probe). The failure every check gets if the code cannot be
    loaded (else None), and {function: seconds waited} for those that did not return within
    PROBE_TIMEOUT: a check that calls one stops there, not graded, instead of waiting for it
    to hang again. Decided once, before any check's verdict is kept (the first units run beside
    it on the brief it nearly always gives, and again if it gives another: grader.runner.lanes):
    a check's verdict is the same whatever ran before it, on however many lanes
    (docs/contract.md, "A function that hangs")."""
    if portable.forkless():  # the portable path: a watched thread (grader.runner.spawned)
        from . import spawned

        return spawned.WatchedPreflight(spec, timeout_scale, preflight_timeout(timeout_scale))
    with cwd_on_path():
        return Preflight(sandbox.start(preflight_body(spec, timeout_scale),
                                       timeout=preflight_timeout(timeout_scale)))


def preflight_timeout(timeout_scale: float) -> float:
    """The preflight judge's whole timeout: a start each time a call broke the target
    process, each call once."""
    return len(checkrun.PROBED) * (PREFLIGHT_TIMEOUT + PROBE_TIMEOUT) * timeout_scale + 5


def preflight_body(spec: str, timeout_scale: float) -> Callable[[], dict | Failure]:
    """What the preflight's judge runs (`start_preflight`)."""
    timeout = PREFLIGHT_TIMEOUT * timeout_scale
    call = PROBE_TIMEOUT * timeout_scale

    def probe():
        sandbox.report_step({"op": "import", "target": spec})
        with tempfile.TemporaryDirectory(prefix="probe-", dir=workroot.folder()) as workdir:
            return checkrun.probe(spec, workdir, timeout, call)
    return probe


def briefing(spec: str, timeout_scale: float) -> tuple[Failure | None, dict]:
    """`preflight`, as the lanes take it: (what every check gets if not None, the lanes' brief)."""
    return start_preflight(spec, timeout_scale).brief()


#: A part's run not run: an earlier part of the check failed in it, so `_result` takes that
#: part's failure and never looks at this one (no message exists for it: shown, it would fail).
NOT_RUN = Failure(Outcome.FAILED, Kind.DETAIL, detail="not-run")


def run_unit(unit: Unit, settings: Settings, in_lane: bool = False,
             quiet: frozenset[int] = frozenset()) -> tuple[list[Failure | None], float]:
    """Every run of one unit (one per seed in `settings.seeds`), and the seconds they took.
    `in_lane`: this process is a lane (`lanes`), where a check that starts no process of its
    own runs its judge without a fork of its own (grader.harness.processes.sandbox, `inline`). `quiet`:
    the runs (by index) an earlier part of the check failed in (`lanes.Reported`): `_result`
    takes that part's failure, so they are not run at all (`NOT_RUN`). A run after this unit's
    first failing run is never the one reported either, but its outcome is kept (a sweep's, a
    repeat's): it runs with `Lab.detailed` False, the same outcome with less said."""
    start = time.monotonic()
    body: Callable = unit.check.body
    if unit.part is not None:
        body = functools.partial(body, part=unit.part)
    inline = in_lane and not unit.check.family.starts_processes
    for module in unit.check.family.preload:  # once here, not in each forked judge
        importlib.import_module(module)
    runs: list[Failure | None] = []
    for number, seed in enumerate(settings.seeds):
        if number in quiet:  # an earlier part failed in this run: nothing of it is kept
            runs.append(NOT_RUN)
            continue
        # once a run of this unit failed, a later run's failure is never the one reported (the
        # check's is its first failing run's, `_result`): only its outcome is kept
        detailed = all(run is None for run in runs)
        runs.append(_run_once(unit.check, body, settings, seed, inline, detailed))
    return runs, time.monotonic() - start


def _run_once(info: CheckInfo, body: Callable, settings: Settings, seed: int,
              inline: bool, detailed: bool = True) -> Failure | None:
    timeout = info.timeout * settings.timeout_scale
    call_timeout = timeout + 5 if info.call_timeout is None \
        else info.call_timeout * settings.timeout_scale

    def judge():
        # The check's folder is made by its judge, in the judge's own folder (a forked judge's,
        # or its lane's): the only place its jail lets it write (grader.harness.processes.sandbox).
        with tempfile.TemporaryDirectory(prefix="check-", dir=workroot.folder()) as workdir:
            alone = not info.family.starts_processes
            return checkrun.run_check(body, settings.spec, workdir, seed,
                                      call_timeout=call_timeout, check=info.id,
                                      hung=dict(settings.hung), detailed=detailed,
                                      alone=alone, model=contract_model() if alone else None)

    with cwd_on_path():
        return sandbox.run(judge, timeout=timeout, inline=inline)


def _assemble(checks: list[CheckInfo], units: list[Unit],
              done: Iterator[tuple[int, tuple[list[Failure | None], float]]],
              settings: Settings) -> Iterator[CheckResult]:
    """Results in lesson order, each once every unit of it and of the checks before it is done."""
    finished: dict[int, tuple[list[Failure | None], float]] = {}
    first_unit, position = {}, 0
    for info in checks:
        first_unit[info.id] = position
        position += info.parts
    next_check = 0
    for index, outcome in done:
        finished[index] = outcome
        while next_check < len(checks):
            info = checks[next_check]
            mine = range(first_unit[info.id], first_unit[info.id] + info.parts)
            if any(i not in finished for i in mine):
                break
            yield _result(info, [finished[i][0] for i in mine],
                          sum(finished[i][1] for i in mine), settings)
            next_check += 1


def _result(info: CheckInfo, parts: list[list[Failure | None]], duration: float,
            settings: Settings) -> CheckResult:
    """One check's result from its parts' runs: run r's failure is the first part's, in part
    order, that did not pass in run r; the check's is the first run's that did not pass."""
    runs = [next((part[r] for part in parts if part[r] is not None), None)
            for r in range(len(settings.seeds))]
    failure = next((f for f in runs if f is not None), None)
    return CheckResult(id=info.id, points=info.points, outcome=outcome_of(failure),
                       result=failure, duration=duration,
                       runs=[outcome_of(f) for f in runs] if len(runs) > 1 else [],
                       seeds=list(settings.seeds) if settings.swept else [])


class cwd_on_path:
    """`lab.queue` and a student's own modules resolve from the folder the grader runs in."""

    def __enter__(self):
        cwd = os.getcwd()
        self.added = cwd if cwd not in sys.path else None
        if self.added:
            sys.path.insert(0, cwd)

    def __exit__(self, *exc):
        if self.added and self.added in sys.path:
            sys.path.remove(self.added)
