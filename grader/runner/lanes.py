"""Checks at once: `jobs` lanes, each a forked copy of the grading process that runs the units
it is handed one at a time, exactly as the grading process runs them when there is one lane.

A lane is a judge: it is forked from the grading process before any check ran and never imports
the code under grade (that runs only in target processes, which the zygote forks: they inherit
no fd of a lane). It is a subreaper of its own, so what a check left detached comes back to the
lane that ran it and is swept there, at the end of that check, as with one lane; nothing of one
lane's checks is ever killed by another's sweep. It is jailed to its own folder (`lane-*`: it and
the code's SQL its judges run write nothing else; grader.harness.processes.sandbox.become_lane).

Before its first unit a lane is told a brief (one line, a JSON object: the runner's
`Settings.briefed`): at once the one the preflight nearly always gives (`GUESS`: nothing hung),
so that the lanes work while the preflight runs; a preflight that gives another ends them, and
new lanes run every unit on it. Every lane runs every check knowing the same. The grading process
then hands a lane one unit at a time (a line: the unit's number) and the lane
answers with one line: `{"unit", "runs": [result JSON, ...], "duration"}`. Results are data, read
with json, never unpickled. Units are handed out in `order` (long ones first), results come back
in any order; grader.runner puts them in lesson order. A lane that ends without answering (a
grader bug, or it was killed) gives its unit a grader-bug failure and the rest go to the others;
if none is left, a new lane is forked.
"""

from __future__ import annotations

import json
import os
import select
import signal
import time
import traceback
from typing import Callable, Iterator

from grader.harness.processes import hygiene, sandbox, stuck, workroot, zygote
from grader.results import Failure, Kind, Outcome, result_from_json, result_to_json


#: Seconds past a run's own timeout before the grading process gives up on a lane: the judge's
#: timeout (its SIGALRM, or its fork's kill) and its clean-up (a target's kill, the zygote's
#: reaping) come well before. A safety net for a judge that cannot be interrupted.
BACKSTOP = 20.0


def backstop(unit, settings) -> float:
    """How long one unit may take on a lane before its answer is overdue."""
    return len(settings.seeds) * (unit.check.timeout * settings.timeout_scale + BACKSTOP)


class _Lane:
    def __init__(self, units, settings, others: list["_Lane"]):
        self.units = units
        # The lane's folders live in one of its own, which the grading process removes once the
        # lane is reaped: a lane killed mid-check (its backstop, a signal) leaves nothing.
        self.folder = workroot.make("lane-")
        from_main, to_lane = os.pipe()  # (read end, write end)
        from_lane, to_main = os.pipe()
        self.mark = stuck.Mark()  # set while its judge runs the code's SQL (`overdue`)
        pid = os.fork()
        if pid == 0:  # the lane
            workroot.enter(self.folder)
            stuck.adopt(self.mark)
            for lane in others:  # else a lane would hold another's inbox open past its end
                lane.close()
            os.close(to_lane)
            os.close(from_lane)
            code = 0
            try:
                _serve(units, settings, from_main, to_main)
            except BaseException:
                traceback.print_exc()
                code = 70
            os._exit(code)
        os.close(from_main)
        os.close(to_main)
        self.pid, self.out, self.inbox = pid, to_lane, from_lane
        self.buffer = b""
        self.unit: int | None = None  # what it is running
        self.deadline = 0.0  # when its answer is overdue (`backstop`)

    def brief(self, brief: dict) -> None:
        os.write(self.out, (json.dumps(brief) + "\n").encode())

    def give(self, index: int, settings, quiet: frozenset[int] = frozenset()) -> None:
        """Unit `index` to run; `quiet`: its runs whose failure will not be the one reported
        (an earlier part of the same check failed in them: `Reported`)."""
        self.unit = index
        self.deadline = time.monotonic() + backstop(self.units[index], settings)
        os.write(self.out, (f"{index} {','.join(map(str, sorted(quiet)))}".rstrip() + "\n")
                 .encode())

    def close(self) -> None:
        self.mark.close()
        for fd in (self.out, self.inbox):
            if fd >= 0:
                try:
                    os.close(fd)
                except OSError:
                    pass
        self.out = self.inbox = -1


def _serve(units, settings, inbox: int, out: int) -> None:
    """The lane's life: run each unit it is given, answer, until its inbox closes."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)  # the grading process decides about Ctrl-C
    sandbox.become_lane()  # a subreaper (a fork does not inherit that), not dumpable, limited
    zygote.settle()  # answered once the zygote runs: no check's timeout counts its start-up
    pending = b""
    while True:
        chunk = os.read(inbox, 4096)
        if not chunk:
            return
        *lines, pending = (pending + chunk).split(b"\n")
        for line in lines:
            if line.startswith(b"{"):  # the brief, before the first unit
                settings = settings.briefed(json.loads(line))
                continue
            answer = answer_unit(units, settings, line)
            try:
                sandbox.write_message(out, answer)
            except BrokenPipeError:  # the grading process wants no more answers (it stopped)
                return


def answer_unit(units, settings, line: bytes) -> dict:
    """A lane's answer to the line that hands it a unit ("INDEX [QUIET,...]"): the unit run
    (`grader.runner.run_unit`, as in a lane), its runs as results JSON and its duration. The
    spawned lanes of the portable path answer with it too (grader.runner.spawned)."""
    from grader.runner import run_unit

    index, _, quiet = line.partition(b" ")
    index = int(index)
    quiet = frozenset(int(r) for r in quiet.split(b",") if r)
    try:
        runs, duration = run_unit(units[index], settings, in_lane=True, quiet=quiet)
        return {"unit": index, "runs": [result_to_json(f) for f in runs], "duration": duration}
    except Exception:  # a bug of the runner's own: every run of the unit says so
        bug = Failure.grader_bug(traceback.format_exc())
        return {"unit": index, "runs": [result_to_json(bug)] * len(settings.seeds),
                "duration": 0.0}


def run(units, jobs: int, settings, long: list[int], short: list[int],
        meanwhile: Callable[[set[int]], tuple[object, dict]] = lambda keep: (None, GUESS),
        long_first: int | None = None) -> Iterator:
    """Run `units` on `jobs` lanes; yield first the answer `meanwhile(lanes)` returns, called
    here once the lanes (their pids) are forked and have their first unit (the runner's
    preflight, `(answer, brief)`; the lanes start on the brief `GUESS`, and start again on the
    brief if it is another), then (unit number, (runs, duration)) as each is done.
    Every lane but the last takes the `long` units first, the last the `short` ones first
    (the lesson's first checks are done early), a lane whose queue is empty from the other: the short units are shared at the end, where the long ones would leave a lane
    running alone. `long_first`: how many lanes take the long units first instead (0: none,
    every lane runs the short ones before). Closing the generator ends the lanes at once."""
    hygiene.become_subreaper()
    before = hygiene.child_pids()
    first = long_lanes(jobs) if long_first is None else long_first
    queue = Queues(long, short, first)
    reported = Reported(units)
    lanes: list[_Lane] = []
    ended: list[_Lane] = []  # replaced after they died: still to be reaped
    completed = False

    def give_next(lane: _Lane, number: int) -> None:
        """The next unit of lane number `number`'s queue, to `lane`."""
        index = queue.take(number)
        lane.give(index, settings, reported.quiet(index))

    try:
        for _ in range(min(jobs, len(units))):
            lanes.append(_Lane(units, settings, lanes))
        # While the preflight runs, each lane already runs its first unit on the brief it
        # nearly always gives (nothing hung): what it then gives is the same, so is every
        # verdict. If it gives another, those lanes end and their units run again on it.
        for number, lane in enumerate(lanes):
            lane.brief(GUESS)
            give_next(lane, number)
        answer, brief = meanwhile({lane.pid for lane in lanes})
        if brief != GUESS:
            for lane in lanes:
                lane.close()
                _end(lane.pid, at_once=True)
            ended += lanes
            queue, reported = Queues(long, short, first), Reported(units)
            lanes = []
            for number in range(len(ended)):
                lane = _Lane(units, settings, lanes)
                lanes.append(lane)
                lane.brief(brief)
                give_next(lane, number)
        yield answer
        while any(lane.unit is not None for lane in lanes):
            busy = [lane for lane in lanes if lane.unit is not None]
            for lane, readable in _ready(busy):
                for index, outcome in (_answers(lane) if readable else ()):
                    reported.done(index, outcome[0])
                    yield index, outcome
                    if queue:
                        give_next(lane, lanes.index(lane))
                if lane.unit is not None and lane.inbox < 0:  # it ended without answering
                    yield lane.unit, lost(settings, "ended while it ran this check")
                elif lane.unit is not None and time.monotonic() > lane.deadline:
                    in_sql = lane.mark.running  # read before the kill: the judge's last word
                    lane.close()
                    _end(lane.pid, at_once=True)
                    yield lane.unit, overdue(units[lane.unit], settings, in_sql)
                else:
                    continue
                lane.unit = None
                if queue:
                    replacement = _Lane(units, settings, lanes)
                    replacement.brief(brief)
                    give_next(replacement, lanes.index(lane))
                    ended.append(lane)
                    lanes[lanes.index(lane)] = replacement
        completed = True
    finally:
        for lane in lanes + ended:
            lane.close()
        for lane in lanes + ended:
            _end(lane.pid, at_once=not completed)  # interrupted: its check is not waited for
        hygiene.end_strays(before)  # what the lanes' checks left to us
        for lane in lanes + ended:  # reaped: nothing writes there any more
            workroot.remove(lane.folder)


#: The brief the lanes start on while the preflight runs: no function hung.
GUESS = {"hung": []}


class Reported:
    """Which runs of a check's part can no longer be the ones a report tells: a check's failure
    in run r is its first part's, in part order, that failed in run r (grader.runner), so once
    part q failed in run r, run r of every later part is `quiet` (it may skip what only makes a
    failure readable: `grader.harness.judge.scenario.Lab.detailed`). Parts still running count as
    passing. Which runs are quiet depends on which lane was faster; what is reported never does
    (the failure told is a run no earlier part failed in, and a quiet run's outcome is the same)."""

    def __init__(self, units):
        self.units = units
        self.failed: dict[str, dict[int, set[int]]] = {}  # check id -> part -> failed runs

    def done(self, index: int, runs: list) -> None:
        unit = self.units[index]
        if unit.part is not None:
            self.failed.setdefault(unit.check.id, {})[unit.part.index] = {
                r for r, failure in enumerate(runs) if failure is not None}

    def quiet(self, index: int) -> frozenset[int]:
        unit = self.units[index]
        if unit.part is None:
            return frozenset()
        parts = self.failed.get(unit.check.id, {})
        return frozenset(r for part, runs in parts.items() if part < unit.part.index
                         for r in runs)


def long_lanes(jobs: int) -> int:
    """How many of `jobs` lanes take the long units first: all but the last (one at least)."""
    return max(1, jobs - 1)


class Queues:
    """The long and the short units; lanes numbered below `long_lanes` prefer the long."""

    def __init__(self, long: list[int], short: list[int], long_lanes: int):
        self.long, self.short, self.long_lanes = list(long), list(short), long_lanes

    def __bool__(self) -> bool:
        return bool(self.long or self.short)

    def take(self, lane: int) -> int:
        first, second = ((self.long, self.short) if lane < self.long_lanes
                         else (self.short, self.long))
        return (first or second).pop(0)


def _ready(lanes: list[_Lane]) -> list[tuple[_Lane, bool]]:
    """(lane, whether it has something to read) for the lanes that have, or are overdue (the
    first deadline ends the wait)."""
    wait = max(0.0, min(lane.deadline for lane in lanes) - time.monotonic())
    ready = select.select([lane.inbox for lane in lanes], [], [], wait)[0]
    now = time.monotonic()
    return [(lane, lane.inbox in ready) for lane in lanes
            if lane.inbox in ready or now > lane.deadline]


def _answers(lane: _Lane):
    """The answers the lane has written since the last look (marks it ended at its pipe's end)."""
    chunk = os.read(lane.inbox, 1 << 16)
    if not chunk:
        os.close(lane.inbox)
        lane.inbox = -1
        return
    *lines, lane.buffer = (lane.buffer + chunk).split(b"\n")
    for line in lines:
        answer = json.loads(line)
        runs = [result_from_json(r) for r in answer["runs"]]
        lane.unit = None
        yield answer["unit"], (runs, answer["duration"])


def lost(settings, what: str) -> tuple:
    bug = Failure.grader_bug(f"a lane of the grader {what}")
    return [bug] * len(settings.seeds), 0.0


def overdue(unit, settings, in_sql: bool) -> tuple:
    """The runs of `unit`, whose lane did not answer by its backstop: timed out in the code's
    SQL when the lane's judge was running a statement of it then (`stuck`: a wait for a lock as
    long as the code's own busy timeout, one function over a large value), else lost."""
    if not in_sql:
        return lost(settings, "did not answer in time while it ran this check (its judge could"
                              " not be stopped)")
    stopped = Failure(Outcome.TIMED_OUT, Kind.SQL_STUCK,
                      timeout=unit.check.timeout * settings.timeout_scale)
    return [stopped] * len(settings.seeds), 0.0


def _end(pid: int, at_once: bool) -> None:
    """Reap a lane whose inbox is closed (an idle lane ends on its own at once); kill it first
    when `at_once` or when it does not end within a second."""
    for _ in range(0 if at_once else 100):  # a bound, not a clock
        try:
            if os.waitpid(pid, os.WNOHANG)[0]:
                return
        except ChildProcessError:
            return
        time.sleep(0.01)
    try:
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
    except (ProcessLookupError, ChildProcessError):
        pass
