"""The lanes of the portable path (grader.harness.processes.portable: no fork): each lane is a
fresh interpreter (`LANE`: `python -m grader.harness.processes.portable grader.runner.spawned
lane`, which starts the lane's first target server before it imports the lane) that runs the
units it is handed one at a time, as a forked lane does (grader.runner.lanes). The preflight's
judge is a thread of the grading process (`WatchedPreflight`), and so is the lesson's first
check's (`_Home`).

The grading process talks to a lane over the lane's stdin and stdout, in the forked lanes' words:
first a setup line (`{"setup": {"settings", "units"}}`: the lane rebuilds the units from the
check ids), then the brief (a JSON object), then a unit's number (and its quiet runs) per line;
the lane answers `{"unit", "runs", "duration"}`. Results are data, read with json. A unit's
timeout is the lane's watchdog (grader.harness.processes.sandbox.run_watched); the grading
process keeps the lanes' backstop (`lanes.backstop`) and ends an overdue lane with `Popen.kill`.
Every unit runs in a lane (or at home): no check's judge needs a fork of its own on this path.
"""

from __future__ import annotations

import json
import os
import queue
import sys
import threading
import time
import traceback
from typing import Callable, Iterator

from grader.checkdef import Part, all_checks
from grader.harness.judge import target_pipe
from grader.harness.processes import portable, sandbox, stuck, workroot
from grader.results import Failure, result_from_json

from . import lanes


#: Seconds past the preflight judge's own timeout (its watchdog's) before the grading process
#: stops waiting for its answer: a safety net for a judge that cannot be stopped.
END_SLACK = 20.0


def _settings_json(settings) -> dict:
    return {"spec": settings.spec, "timeout_scale": settings.timeout_scale,
            "seeds": list(settings.seeds), "swept": settings.swept,
            "hung": [list(h) for h in settings.hung]}


def _units_json(units) -> list:
    return [[unit.check.id, None if unit.part is None else unit.part.index] for unit in units]


#: How a lane starts: its first target process (a spare) first, then `main(["lane"])`
#: (grader.harness.processes.portable.main).
LANE = ("grader.harness.processes.portable", "grader.runner.spawned", "lane")

#: The line that tells a lane, before its unit, that no unit is left for any lane after that
#: one: its target processes then start no spare for a next unit that will not come
#: (`portable.spares_wanted`). Each spare is an interpreter started and imported for nothing
#: otherwise, one a lane at every grade's end. A unit that starts a second target process after
#: it starts that one afresh, as when no spare waits.
LAST = b"last"

class _Lane:
    """A spawned lane: its process, the unit it runs and when its answer is overdue."""

    def __init__(self, units, settings, events: queue.Queue, marks: str):
        self.process = portable.Spawned(*LANE)
        self.pid = self.process.pid
        self.unit: int | None = None
        self.deadline = 0.0
        self.alive = True
        self.mark = stuck.Mark.in_file(marks)  # set while its judge runs the code's SQL
        self.process.send(json.dumps({"setup": {"settings": _settings_json(settings),
                                                "units": _units_json(units),
                                                "mark": self.mark.path}}).encode())
        threading.Thread(target=self._pump, args=(events,), daemon=True,
                         name=f"lane-{self.pid}").start()

    def _pump(self, events: queue.Queue) -> None:
        while True:
            line = self.process.lines.get(None)
            events.put((self, line))
            if line is None:
                return

    def brief(self, brief: dict) -> None:
        self.process.send(json.dumps(brief).encode())

    def give(self, index: int, units, settings, quiet: frozenset[int],
             last: bool = False) -> None:
        """Hand it unit `index`; `last`: no unit is left for any lane after this one, so the
        lane starts no spare target server past the ones this unit takes (LAST)."""
        self.unit = index
        self.deadline = time.monotonic() + lanes.backstop(units[index], settings)
        if last:
            self.process.send(LAST)
        self.process.send(f"{index} {','.join(map(str, sorted(quiet)))}".rstrip().encode())


class _Home:
    """The grading process as a lane of its own, for the lesson's first check: its judge runs
    on a thread here (grader.harness.processes.sandbox.run_watched, one watched run at a time:
    after the preflight's), as soon as the preflight has answered, while the spawned lanes
    still start and import (this process has all of that done). That check's verdict is the
    first a report shows. It takes more units, the lesson's next ones, while no spawned lane
    has answered yet; never a check that starts processes of its own (those stay in lanes).
    Its answers come as a lane's do (`events`); overdue, it is told lost as a lane is, its
    thread left to end with this process."""

    def __init__(self, events: queue.Queue):
        self.events = events
        self.unit: int | None = None
        self.deadline = 0.0
        self.alive = True
        self.mark = stuck.Mark()  # this process's judges' (`stuck.adopt`)

    def give(self, index: int, units, settings, brief: dict) -> None:
        self.unit = index
        self.deadline = time.monotonic() + lanes.backstop(units[index], settings)
        briefed = settings.briefed(brief)

        def judge() -> None:
            answer = lanes.answer_unit(units, briefed, str(index).encode())
            self.events.put((self, json.dumps(answer).encode()))

        threading.Thread(target=judge, name="home-judge", daemon=True).start()


def _home_may_run(unit) -> bool:
    return not unit.check.family.starts_processes


def run(units, jobs: int, settings, long: list[int], short: list[int],
        meanwhile: Callable[[set[int]], tuple[object, dict]] = lambda keep: (None, lanes.GUESS),
        long_first: int | None = None) -> Iterator:
    """grader.runner.lanes.run, with spawned lanes (and this process's `_Home` for the lesson's
    first check): the same answers in the same words."""
    events: queue.Queue = queue.Queue()
    first = lanes.long_lanes(jobs) if long_first is None else long_first
    # the lesson's first check, kept for this process (`_Home`) if it is short
    kept = [0] if short[:1] == [0] and _home_may_run(units[0]) else []
    short = [i for i in short if i not in kept]
    order = lanes.Queues(long, short, first)
    reported = lanes.Reported(units)
    pool: list[_Lane] = []
    ended: list[_Lane] = []
    marks = workroot.make("marks-")  # the spawned lanes' marks (`stuck`)
    home = _Home(events)
    stuck.adopt(home.mark)
    answered = False  # a spawned lane has answered (`_Home` takes no more units then)
    completed = False

    def give_next(lane: _Lane, number: int) -> None:
        if order:
            index = order.take(number)
            lane.give(index, units, settings, reported.quiet(index), last=not order)

    def give_home(brief: dict) -> None:
        if kept:
            home.give(kept.pop(0), units, settings, brief)
        elif not answered and order.short and _home_may_run(units[order.short[0]]):
            home.give(order.short.pop(0), units, settings, brief)

    def replace(lane: _Lane, brief: dict) -> None:
        lane.alive = False
        lane.process.end()
        ended.append(lane)
        if order:
            fresh = _Lane(units, settings, events, marks)
            fresh.brief(brief)
            number = pool.index(lane)
            pool[number] = fresh
            give_next(fresh, number)

    try:
        # The lanes start (and import) while the preflight's judge runs, and are told what it
        # found before their first unit: no unit runs on a guess. The preflight's judge, then
        # the lesson's first check's (`_Home`), run in this process on target processes started
        # ahead (grader.__main__): the first verdict a report shows waits for no interpreter.
        pool.extend(_Lane(units, settings, events, marks)
                    for _ in range(min(jobs, len(units) - len(kept))))
        answer, brief = meanwhile(set())
        if answer is None:  # (a grade refused runs nothing more)
            give_home(brief)
        yield answer
        for number, lane in reversed(list(enumerate(pool))):  # the short units' lane first
            lane.brief(brief)
            give_next(lane, number)
        while home.unit is not None or any(lane.unit is not None for lane in pool):
            busy = [lane for lane in pool + [home] if lane.unit is not None]
            wait = max(0.0, min(lane.deadline for lane in busy) - time.monotonic())
            try:
                lane, line = events.get(timeout=wait)
            except queue.Empty:
                lane, line = None, None
            if lane is not None and (not lane.alive or (lane not in pool and lane is not home)):
                continue  # an ended lane's last words
            if lane is not None and line is not None:
                message = json.loads(line)
                runs = [result_from_json(r) for r in message["runs"]]
                index, lane.unit = message["unit"], None
                reported.done(index, runs)
                yield index, (runs, message["duration"])
                if lane is home:
                    give_home(brief)
                else:
                    answered = True
                    give_next(lane, pool.index(lane))
                continue
            if lane is not None:  # it ended without answering
                if lane.unit is not None:
                    unit, lane.unit = lane.unit, None
                    yield unit, lanes.lost(settings, "ended while it ran this check")
                    replace(lane, brief)
                continue
            now = time.monotonic()
            if home.unit is not None and now > home.deadline:
                unit, home.unit, home.alive = home.unit, None, False
                yield unit, lanes.overdue(units[unit], settings, home.mark.running)
                if not pool and order:  # nobody else to run the rest
                    pool.append(_Lane(units, settings, events, marks))
                    pool[0].brief(brief)
                    give_next(pool[0], 0)
            for lane in [lane for lane in pool if lane.unit is not None and now > lane.deadline]:
                unit, lane.unit = lane.unit, None
                yield unit, lanes.overdue(units[unit], settings, lane.mark.running)
                replace(lane, brief)
        completed = True
    finally:
        for lane in pool + ended:
            lane.alive = False
            lane.process.end(wait=1.0 if completed else 0.0)
            lane.mark.close()
        stuck.adopt(None)  # the home lane's judge thread, if overdue, sets a mark no one reads
        workroot.remove(marks)


class WatchedPreflight:
    """The preflight's judge on the portable path (grader.runner.Preflight's interface): a
    thread of the grading process, watched as a spawned lane's judge is
    (grader.harness.processes.sandbox.run_watched: at its timeout its target processes are
    killed). A judge never imports the code under grade (its target process does), so it needs
    no process of its own where there is no jail to put one in, and the first verdict waits
    for no interpreter's start-up and imports: the grading process has them already. The spare
    its target process leaves (grader.harness.processes.portable.spawn_target) is the target of
    the lesson's first check, judged here next (`_Home`)."""

    def __init__(self, spec: str, timeout_scale: float, timeout: float):
        from grader.runner import preflight_body

        self.pid = os.getpid()
        self.started = self  # its `pid`, as a forked preflight's Started has
        self.timeout = timeout
        self.answered = False
        self._answer: Failure | dict | None = None
        self._done, self._stop = threading.Event(), threading.Event()
        body = preflight_body(spec, timeout_scale)

        def judge() -> None:
            try:
                self._answer = sandbox.run_watched(body, timeout, stop=self._stop)
            except BaseException:  # a bug of the grader's own: the grade says so
                self._answer = Failure.grader_bug(traceback.format_exc())
            finally:
                self._done.set()

        threading.Thread(target=judge, name="preflight-judge", daemon=True).start()

    def answer(self, keep=frozenset()) -> tuple[Failure | None, dict[str, float]]:
        self.answered = True
        # Its own watchdog ends it at `timeout`; this wait is a safety net past that.
        if not self._done.wait(self.timeout + END_SLACK):
            self._stop.set()
            return Failure.grader_bug("the preflight's judge did not answer in time"), {}
        answer = self._answer
        if isinstance(answer, dict):
            return None, dict(answer["hung"])
        return answer, {}

    def abandon(self, keep=frozenset()) -> None:
        if not self.answered:
            self.answered = True
            self._stop.set()  # its target processes are killed, its thread ends
            self._done.wait(END_SLACK)

    def brief(self, keep=frozenset()) -> tuple[Failure | None, dict]:
        refused, hung = self.answer(keep)
        return refused, {"hung": sorted(hung.items())}


# -- the spawned process's side ---------------------------------------------------------------
def _protocol_streams():
    """This process's stdin and stdout, kept for the protocol; fds 0 and 1 then read the null
    device and write to stderr, so nothing else (a check's print, a child) reaches them."""
    read = os.fdopen(os.dup(0), "rb", buffering=0)
    write = os.fdopen(os.dup(1), "wb", buffering=0)
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.close(null)
    sys.stdout.flush()
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    return read, write


def _write(stream, obj: dict) -> None:
    stream.write((json.dumps(obj, default=repr) + "\n").encode())
    stream.flush()


def _settings(data: dict):
    from grader.runner import Settings

    return Settings(data["spec"], data["timeout_scale"], tuple(data["seeds"]), data["swept"],
                    tuple((f, float(t)) for f, t in data["hung"]))


def _units(data: list) -> list:
    from grader.runner import Unit

    checks = all_checks()
    return [Unit(checks[check], None if part is None else Part(part, checks[check].parts))
            for check, part in data]


def serve_lane(inbox, out) -> None:
    """The spawned lane's life: set up, then run each unit it is given, until stdin closes."""
    target_pipe.start_spare()  # (started already, before the imports: `LANE`)
    setup = json.loads(inbox.readline())["setup"]
    settings, units = _settings(setup["settings"]), _units(setup["units"])
    if setup.get("mark"):
        stuck.adopt(stuck.Mark(setup["mark"]))
    for line in iter(inbox.readline, b""):
        line = line.strip()
        if line.startswith(b"{"):  # the brief, before the first unit
            settings = settings.briefed(json.loads(line))
            continue
        if line == LAST:
            portable.spares_wanted(False)
            continue
        answer = lanes.answer_unit(units, settings, line)
        try:
            _write(out, answer)
        except OSError:  # the grading process wants no more answers
            return


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if args != ["lane"]:
        print("usage: python -m grader.runner.spawned lane", file=sys.stderr)
        return 2
    inbox, out = _protocol_streams()
    if os.getcwd() not in sys.path:  # lab.queue and the student's modules, as in the grader
        sys.path.insert(0, os.getcwd())
    serve_lane(inbox, out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
