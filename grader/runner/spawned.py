"""The lanes of the portable path (grader.harness.processes.portable: no fork): each lane is a
fresh interpreter (`python -m grader.runner.spawned lane`) that runs the units it is handed one
at a time, as a forked lane does (grader.runner.lanes), and the preflight's judge is one too
(`... spawned preflight`).

The grading process talks to a lane over the lane's stdin and stdout, in the forked lanes' words:
first a setup line (`{"setup": {"settings", "units"}}`: the lane rebuilds the units from the
check ids), then the brief (a JSON object), then a unit's number (and its quiet runs) per line;
the lane answers `{"unit", "runs", "duration"}`. Results are data, read with json. A unit's
timeout is the lane's watchdog (grader.harness.processes.sandbox.run_watched); the grading
process keeps the lanes' backstop (`lanes.backstop`) and ends an overdue lane with `Popen.kill`.
Every unit runs here: no check's judge needs a fork of its own on this path.
"""

from __future__ import annotations

import json
import os
import queue
import sys
import threading
import time
from typing import Callable, Iterator

from grader.checkdef import Part, all_checks
from grader.harness.judge import target_client
from grader.harness.processes import portable, sandbox
from grader.results import Failure, result_from_json, result_to_json

from . import lanes


#: Seconds a spawned judge may take to start (a fresh interpreter that imports the grader) on
#: top of its own timeout, before the grading process gives up on it.
START_SLACK = 20.0


def _settings_json(settings) -> dict:
    return {"spec": settings.spec, "timeout_scale": settings.timeout_scale,
            "seeds": list(settings.seeds), "swept": settings.swept,
            "hung": [list(h) for h in settings.hung]}


def _units_json(units) -> list:
    return [[unit.check.id, None if unit.part is None else unit.part.index] for unit in units]


class _Lane:
    """A spawned lane: its process, the unit it runs and when its answer is overdue."""

    def __init__(self, units, settings, events: queue.Queue):
        self.process = portable.Spawned("grader.runner.spawned", "lane")
        self.pid = self.process.pid
        self.unit: int | None = None
        self.deadline = 0.0
        self.alive = True
        self.process.send(json.dumps({"setup": {"settings": _settings_json(settings),
                                                "units": _units_json(units)}}).encode())
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

    def give(self, index: int, units, settings, quiet: frozenset[int]) -> None:
        self.unit = index
        self.deadline = time.monotonic() + lanes.backstop(units[index], settings)
        self.process.send(f"{index} {','.join(map(str, sorted(quiet)))}".rstrip().encode())


def run(units, jobs: int, settings, long: list[int], short: list[int],
        meanwhile: Callable[[set[int]], tuple[object, dict]] = lambda keep: (None, lanes.GUESS),
        long_first: int | None = None) -> Iterator:
    """grader.runner.lanes.run, with spawned lanes: the same answers in the same words."""
    events: queue.Queue = queue.Queue()
    first = lanes.long_lanes(jobs) if long_first is None else long_first
    order = lanes.Queues(long, short, first)
    reported = lanes.Reported(units)
    pool: list[_Lane] = []
    ended: list[_Lane] = []
    completed = False

    def give_next(lane: _Lane, number: int) -> None:
        index = order.take(number)
        lane.give(index, units, settings, reported.quiet(index))

    def replace(lane: _Lane, brief: dict) -> None:
        lane.alive = False
        lane.process.end()
        ended.append(lane)
        if order:
            fresh = _Lane(units, settings, events)
            fresh.brief(brief)
            number = pool.index(lane)
            pool[number] = fresh
            give_next(fresh, number)

    try:
        for _ in range(min(jobs, len(units))):
            pool.append(_Lane(units, settings, events))
        for number, lane in enumerate(pool):
            lane.brief(lanes.GUESS)
            give_next(lane, number)
        answer, brief = meanwhile({lane.pid for lane in pool})
        if brief != lanes.GUESS:  # every unit again, on lanes that know what the preflight said
            for lane in pool:
                lane.alive = False
                lane.process.end()
            ended += pool
            order, reported = lanes.Queues(long, short, first), lanes.Reported(units)
            pool = [_Lane(units, settings, events) for _ in range(len(pool))]
            for number, lane in enumerate(pool):
                lane.brief(brief)
                give_next(lane, number)
        else:
            brief = lanes.GUESS
        yield answer
        while any(lane.unit is not None for lane in pool):
            busy = [lane for lane in pool if lane.unit is not None]
            wait = max(0.0, min(lane.deadline for lane in busy) - time.monotonic())
            try:
                lane, line = events.get(timeout=wait)
            except queue.Empty:
                lane, line = None, None
            if lane is not None and (not lane.alive or lane not in pool):
                continue  # an ended lane's last words
            if lane is not None and line is not None:
                message = json.loads(line)
                runs = [result_from_json(r) for r in message["runs"]]
                index, lane.unit = message["unit"], None
                reported.done(index, runs)
                yield index, (runs, message["duration"])
                if order:
                    give_next(lane, pool.index(lane))
                continue
            if lane is not None:  # it ended without answering
                if lane.unit is not None:
                    unit, lane.unit = lane.unit, None
                    yield unit, lanes.lost(settings, "ended while it ran this check")
                    replace(lane, brief)
                continue
            now = time.monotonic()
            for lane in [lane for lane in pool if lane.unit is not None and now > lane.deadline]:
                unit, lane.unit = lane.unit, None
                yield unit, lanes.lost(settings, "did not answer in time while it ran this"
                                       " check (its judge could not be stopped)")
                replace(lane, brief)
        completed = True
    finally:
        for lane in pool + ended:
            lane.alive = False
            lane.process.end(wait=1.0 if completed else 0.0)


class SpawnedPreflight:
    """The preflight's judge as a spawned process (grader.runner.Preflight's interface)."""

    def __init__(self, spec: str, timeout_scale: float, timeout: float):
        self.process = portable.Spawned("grader.runner.spawned", "preflight")
        self.started = self.process  # its `pid`, as a forked preflight's Started has
        self.timeout, self.began = timeout, time.monotonic()
        self.answered = False
        self.process.send(json.dumps({"spec": spec, "timeout_scale": timeout_scale}).encode())
        self.process.close_input()

    def answer(self, keep=frozenset()) -> tuple[Failure | None, dict[str, float]]:
        self.answered = True
        answer = self._collect()
        if isinstance(answer, dict):
            return None, dict(answer["hung"])
        return answer, {}

    def _collect(self) -> Failure | dict | None:
        deadline = self.began + self.timeout
        try:
            while True:
                left = deadline - time.monotonic()
                if left <= 0:
                    return Failure.grader_bug("the preflight's judge did not answer in time")
                try:
                    line = self.process.lines.get(left)
                except queue.Empty:
                    continue
                if line is None:
                    code = self.process.process.wait()
                    return Failure.grader_bug(f"the preflight's judge ended (exit code {code})"
                                              " without an answer")
                message = json.loads(line)
                if "data" in message:
                    return message["data"]
                return result_from_json(message["result"])
        finally:
            self.process.end(wait=5.0)

    def abandon(self, keep=frozenset()) -> None:
        if not self.answered:
            self.answered = True
            self.process.end()

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
    target_client.start_spare()  # its first check's target is ready when that check starts
    setup = json.loads(inbox.readline())["setup"]
    settings, units = _settings(setup["settings"]), _units(setup["units"])
    for line in iter(inbox.readline, b""):
        line = line.strip()
        if line.startswith(b"{"):  # the brief, before the first unit
            settings = settings.briefed(json.loads(line))
            continue
        answer = lanes.answer_unit(units, settings, line)
        try:
            _write(out, answer)
        except OSError:  # the grading process wants no more answers
            return


def serve_preflight(inbox, out) -> None:
    from grader.runner import cwd_on_path, preflight_body, preflight_timeout

    target_client.start_spare()  # while the grading process sends what to probe
    setup = json.loads(inbox.readline())
    body = preflight_body(setup["spec"], setup["timeout_scale"])
    with cwd_on_path():
        result = sandbox.run(body, preflight_timeout(setup["timeout_scale"]))
    _write(out, {"data": result} if isinstance(result, dict)
           else {"result": result_to_json(result)})


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if args not in (["lane"], ["preflight"]):
        print("usage: python -m grader.runner.spawned lane|preflight", file=sys.stderr)
        return 2
    inbox, out = _protocol_streams()
    if os.getcwd() not in sys.path:  # lab.queue and the student's modules, as in the grader
        sys.path.insert(0, os.getcwd())
    (serve_lane if args == ["lane"] else serve_preflight)(inbox, out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
