"""`python -m grader watch`: driven as a student would, in a child process, on a copy of an
implementation in a temporary folder. Every wait has a deadline and every assertion is about
what the screen says, never about how long it took."""

from __future__ import annotations

import ast
import io
import json
import os
import shutil
import signal
import subprocess
import sys
import threading
import time
from argparse import Namespace
from pathlib import Path

import pytest

from grader import checkdef, cli, watch
from grader.config import Config
from grader.report import messages, summary
from grader.report.view import report_view
from grader.results import CheckResult, Failure, Kind, Outcome, check_result_to_json

from bench.watch import interruptible
from conftest import points, run_grader, windowsish_env

ROOT = Path(__file__).resolve().parent.parent
MUTANTS = ROOT / "tests" / "mutants"
SOLUTION = ROOT / "solutions" / "queue.py"
MUTANT = MUTANTS / "tokens_finish_by_id_only.py"  # fails lesson-timeline, among others
WAIT = 240.0  # seconds: a deadline for one grade on a loaded 2-core machine, not an expectation
FINAL = "Graded in"
PARTIAL = "still running:"


def student_folder(tmp_path: Path) -> Path:
    """A folder holding queue.py (the solution) and the mutants' shared parts it may import."""
    folder = tmp_path / "work"
    folder.mkdir()
    shutil.copy(SOLUTION, folder / "queue.py")
    for part in MUTANTS.glob("_*.py"):
        shutil.copy(part, folder / part.name)
    return folder


class Watching:
    """`python -m grader watch --impl PATH` in a child; its screens as they come, and every
    process that was ever under it (pid and start time, so a reused pid is not mistaken)."""

    def __init__(self, impl: Path, *extra: str, env: dict | None = None):
        env = {**os.environ, "NO_COLOR": "1", "LANG": "C.UTF-8", **(env or {})}
        env.pop("LC_ALL", None)
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "grader", "watch", "--impl", str(impl), *extra], cwd=ROOT,
            env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
            text=True, **interruptible())  # Ctrl-C heard however this suite was started
        self.lines: list[str] = []
        self.seen: set[tuple[int, str]] = set()
        self.lock = threading.Lock()
        self.done = threading.Event()
        self.threads = [threading.Thread(target=self._read, daemon=True),
                        threading.Thread(target=self._sample, daemon=True)]
        for t in self.threads:
            t.start()

    def _read(self):
        for line in self.proc.stdout:
            with self.lock:
                self.lines.append(line.rstrip("\n"))

    def _sample(self):
        while not self.done.is_set():
            found = descendants(self.proc.pid)
            with self.lock:
                self.seen |= found
            self.done.wait(0.02)

    def screens(self) -> list[str]:
        with self.lock:
            text = "\n".join(self.lines)
        return [s.strip("\n") for s in text.split(watch.SEPARATOR) if s.strip()]

    def finals(self) -> list[str]:
        return [s for s in self.screens() if FINAL in s]

    def wait_for(self, what: str, predicate) -> list[str]:
        deadline = time.monotonic() + WAIT
        while time.monotonic() < deadline:
            screens = self.screens()
            if predicate(screens):
                return screens
            if self.proc.poll() is not None:
                break
            time.sleep(0.05)
        self.stop()
        pytest.fail(f"never saw {what}; screens:\n" + "\n----\n".join(self.screens())
                    + f"\nstderr:\n{self.proc.stderr.read()}")

    def interrupt(self) -> tuple[int, str]:
        self.proc.send_signal(signal.SIGINT)
        code = self.proc.wait(timeout=WAIT)
        self.done.set()
        for t in self.threads:
            t.join(timeout=WAIT)
        return code, self.proc.stderr.read()

    def stop(self):
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()
        self.done.set()


def _stat(pid: int) -> list[str] | None:
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            data = f.read()
    except OSError:
        return None
    return data[data.rfind(b")") + 2:].decode().split()


def descendants(root: int) -> set[tuple[int, str]]:
    """(pid, start time) of every process under `root` now (Linux /proc)."""
    parent = {}
    for entry in os.listdir("/proc"):
        fields = _stat(int(entry)) if entry.isdigit() else None
        if fields:
            parent[int(entry)] = (int(fields[1]), fields[19])
    found, frontier = set(), {root}
    while frontier:
        frontier = {pid for pid, (ppid, _) in parent.items() if ppid in frontier}
        found |= {(pid, parent[pid][1]) for pid in frontier}
    return found


def still_alive(seen: set[tuple[int, str]]) -> list[int]:
    """The processes of `seen` that still run (a zombie or a dead one does not). Looked at
    once, right after the watcher has exited: it ends and reaps every process of a grade before
    it exits, so none may be left for a later look to miss."""
    return [pid for pid, start in seen
            if (fields := _stat(pid)) and fields[19] == start and fields[0] not in "ZX"]


needs_proc = pytest.mark.skipif(not os.path.isdir("/proc/self"), reason="reads /proc")


@needs_proc
def test_a_save_regrades_and_ctrl_c_ends_every_process(tmp_path):
    folder = student_folder(tmp_path)
    target = folder / "queue.py"
    w = Watching(target)
    try:
        screens = w.wait_for("the first grade", lambda s: any(FINAL in x for x in s))
        first = [s for s in screens if FINAL in s][0]
        assert "Score: 100 / 100" in first and "Every check passed." in first
        # the first pass is shown before the processes' checks have run
        assert any(PARTIAL in s and "race-one-winner" in s for s in screens)

        target.write_text(MUTANT.read_text(encoding="utf-8"), encoding="utf-8")
        w.wait_for("the mutant's grade", lambda s: len([x for x in s if FINAL in x]) >= 2)
        mutant = w.finals()[1]
        assert "Score: 100 / 100" not in mutant and "Score: " in mutant
        assert "[lesson-timeline]" in mutant  # the first failing check, named

        # a file that does not compile: that cause, and nothing else to read
        target.write_text("def claim(:\n", encoding="utf-8")
        w.wait_for("the syntax error's grade", lambda s: len([x for x in s if FINAL in x]) >= 3)
        broken = w.finals()[2]
        assert "Score: 0 / 100" in broken and "does not compile" in broken

        # a .py file beside it is watched too
        (folder / "helper.py").write_text("X = 1\n", encoding="utf-8")
        w.wait_for("the grade after a file beside it changed",
                   lambda s: len([x for x in s if FINAL in x]) >= 4)
        assert "does not compile" in w.finals()[3]

        code, stderr = w.interrupt()
    finally:
        w.stop()
    assert code in (0, 130)
    assert "Traceback" not in stderr
    assert "\033" not in "\n".join(w.lines)  # not a terminal: no clearing, no colour
    assert w.seen, "no grading process was ever seen"
    assert still_alive(w.seen) == []


@needs_proc
def test_watch_on_the_portable_path_grades_once_and_regrades_on_a_save(tmp_path):
    """Issue 42: under the simulated Windows (tests/windowsish: no fork, no process groups...)
    each grade is a spawned interpreter (`python -m grader.watch --grade`); the first grade
    comes, a save regrades, Ctrl-C ends the watcher, and nothing of its grades runs on."""
    folder = student_folder(tmp_path)
    target = folder / "queue.py"
    select = "finish-at-expiry or lesson-timeline"
    w = Watching(target, "-k", select, env=windowsish_env())
    try:
        w.wait_for("the first grade", lambda s: any(FINAL in x for x in s))
        first = w.finals()[0]
        assert "Score: {0} / {0}".format(points("finish-at-expiry", "lesson-timeline")) in first
        assert "Every check passed." in first

        target.write_text(MUTANT.read_text(encoding="utf-8"), encoding="utf-8")
        w.wait_for("the mutant's grade", lambda s: len([x for x in s if FINAL in x]) >= 2)
        mutant = w.finals()[1]
        assert "[lesson-timeline]" in mutant and "Every check passed." not in mutant
        code, stderr = w.interrupt()
    finally:
        w.stop()
    assert code in (0, 130) and "Traceback" not in stderr
    assert w.seen, "no grading process was ever seen"
    # A spawned grade's lanes and targets end once the process that started them is gone
    # (their stdin's end, grader.harness.target.lifeline.watch_parent): a deadline, not a hope.
    deadline = time.monotonic() + WAIT
    while still_alive(w.seen) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert still_alive(w.seen) == []


@needs_proc
def test_ctrl_c_during_a_grade_ends_it(tmp_path):
    folder = student_folder(tmp_path)
    w = Watching(folder / "queue.py")
    try:
        w.wait_for("a grade under way", lambda s: bool(w.seen) and any("Grading" in x for x in s))
        code, stderr = w.interrupt()
    finally:
        w.stop()
    assert code in (0, 130) and "Traceback" not in stderr
    assert still_alive(w.seen) == []


def test_a_save_during_a_grade_starts_the_grade_over(tmp_path):
    """Saved again before the first grade has finished: one grade of the new file comes, and
    none of the old one after it."""
    folder = student_folder(tmp_path)
    target = folder / "queue.py"
    w = Watching(target)
    try:
        w.wait_for("a grade under way", lambda s: bool(w.seen))
        target.write_text(MUTANT.read_text(encoding="utf-8"), encoding="utf-8")
        screens = w.wait_for("a finished grade", lambda s: any(FINAL in x for x in s))
        # the last grade is the mutant's, whether or not the first had finished before the save
        w.wait_for("the mutant's grade", lambda s: "[lesson-timeline]" in
                   [x for x in s if FINAL in x][-1])
        code, stderr = w.interrupt()
    finally:
        w.stop()
    assert screens and code in (0, 130) and "Traceback" not in stderr
    assert still_alive(w.seen) == []


@pytest.mark.parametrize("select, shows", [
    ("finish-at-expiry", "Score: {0} / {0}".format(points("finish-at-expiry"))),  # 1st pass only
    ("race-one-winner", "Score: {0} / {0}".format(points("race-one-winner"))),    # 2nd pass only
    ("no-such-check", "no check matches -k 'no-such-check'"),
])
def test_k_selects_in_both_passes(tmp_path, select, shows):
    w = Watching(student_folder(tmp_path) / "queue.py", "-k", select)
    try:
        screens = w.wait_for("the grade's end", lambda s: any(
            FINAL in x or "could not run" in x for x in s))
        code, stderr = w.interrupt()
    finally:
        w.stop()
    assert shows in screens[-1] and "Traceback" not in stderr and code in (0, 130)
    assert not any("Score: 0 / 0" in x for x in screens)


def test_a_report_file_is_written_after_each_whole_grade(tmp_path):
    out = tmp_path / "results.json"
    w = Watching(student_folder(tmp_path) / "queue.py", "-k", "finish-at-expiry", "--json",
                 str(out))
    try:
        w.wait_for("the grade's end", lambda s: any(FINAL in x for x in s))
        code, _ = w.interrupt()
    finally:
        w.stop()
    tests = json.loads(out.read_text(encoding="utf-8"))["tests"]
    assert [t["extra_data"]["check_id"] for t in tests] == ["finish-at-expiry"]
    assert code in (0, 130)


@pytest.mark.parametrize("impl", ["no/such/queue.py", "no_such_module_here"])
def test_a_target_that_does_not_exist_is_one_line_and_exit_2(impl):
    env = {**os.environ, "NO_COLOR": "1"}
    proc = subprocess.run([sys.executable, "-m", "grader", "watch", "--impl", impl], cwd=ROOT,
                          env=env, capture_output=True, text=True, timeout=WAIT)
    assert proc.returncode == 2
    assert proc.stdout == ""
    assert len(proc.stderr.strip().splitlines()) == 1 and impl in proc.stderr


# -- the parts, without a grade ------------------------------------------------------------------
def test_the_snapshot_sees_the_target_and_py_files_beside_it_only(tmp_path):
    target = tmp_path / "queue.py"
    target.write_text("a = 1\n")
    (tmp_path / "notes.txt").write_text("x")
    (tmp_path / ".#queue.py").write_text("lock")  # an editor's lock file
    before = watch.snapshot(target)
    assert set(before) == {"queue.py"}
    (tmp_path / "notes.txt").write_text("changed")
    assert watch.snapshot(target) == before
    (tmp_path / "helper.py").write_text("b = 2\n")
    assert set(watch.snapshot(target)) == {"queue.py", "helper.py"}
    replacement = tmp_path / "queue.py.new"  # saved by rename over the file: a new inode
    replacement.write_text("a = 1\n")
    os.replace(replacement, target)
    assert watch.snapshot(target)["queue.py"] != before["queue.py"]
    target.unlink()
    assert "queue.py" not in watch.snapshot(target)


def test_every_check_runs_in_exactly_one_pass():
    second = watch.second_pass(None)
    ids = [c.id for c in checkdef.all_checks().values()]
    later = {c.id for c in checkdef.all_checks().values()
             if checkdef.family(c.module) in watch.SECOND_PASS}
    assert second == [i for i in ids if i in later] and later
    first = [i for i in ids if i not in set(second)]  # the first pass: what the child runs first
    assert sorted(first + second) == sorted(ids) and not set(first) & set(second)
    # The second pass is the end of the lesson order: results come in that order, so the first
    # screen never waits for a second-pass check.
    assert ids[-len(second):] == second
    assert watch.second_pass("finish or race") == ["race-one-winner"]  # what the -k selects
    assert watch.second_pass("finish") == []  # no second-pass check: one pass
    assert watch.second_pass("((") == []  # the grade itself says it cannot read it


def test_the_process_families_are_the_modules_that_start_processes():
    """checkdef.PROCESS_FAMILIES names the check modules that start claimers or workers."""
    starting = set()
    for path in (ROOT / "grader" / "checks").glob("test_*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names = ([a.name for a in node.names] if isinstance(node, ast.ImportFrom) else [])
            module = node.module if isinstance(node, ast.ImportFrom) else ""
            if module in ("grader.harness.judge.children", "grader.harness.judge.workers") or (
                    module == "grader.harness.judge" and {"children", "workers"} & set(names)):
                starting.add(checkdef.family(path.stem))
    assert starting == set(checkdef.PROCESS_FAMILIES)


def _results() -> list[CheckResult]:
    failure = Failure(Outcome.FAILED, Kind.DETAIL, detail="row-unreadable", params={
        "job": 1, "error": "database is locked"})
    return [CheckResult("finish-at-expiry", 4, Outcome.FAILED, failure),
            CheckResult("finish-before-expiry", 2, Outcome.PASSED)]


def test_the_summary_is_the_score_the_first_failure_and_the_count():
    report = report_view(_results(), "en", target="lab/queue.py")
    lines = summary.from_view(report)
    assert lines[0].startswith("Score: 2 / 6") and "1 passed, 1 failed" in lines[0]
    assert "[finish-at-expiry]" in lines[1]
    assert "database is locked" in lines[2]
    assert len(lines) == 3
    partial = summary.from_view(report, running=["race-one-winner"])
    assert "1 more checks running" in partial[0]


def test_not_a_terminal_gets_a_separator_a_terminal_a_cleared_screen(monkeypatch):
    class Screen(io.StringIO):
        def __init__(self, tty):
            super().__init__()
            self.tty = tty

        def isatty(self):
            return self.tty

    monkeypatch.setenv("TERM", "xterm")
    monkeypatch.setenv("NO_COLOR", "1")
    args = Namespace(impl="lab.queue", select=None)
    for tty, starts in ((False, watch.SEPARATOR + "\n"), (True, watch.CLEAR)):
        out = Screen(tty)
        watch.Watch(args, ROOT / "lab" / "queue.py", "en", Config(), out).draw("status", ["body"])
        assert out.getvalue().startswith(starts)
        assert ("\033" in out.getvalue()) == tty


def test_a_line_too_wide_for_the_terminal_is_cut_colour_codes_taking_no_column():
    assert watch.fit("short", 10) == "short"
    assert watch.fit("a" * 12, 10) == "a" * 9 + "…"
    assert watch.fit("\033[1mScore\033[0m", 5) == "\033[1mScore\033[0m"
    cut = watch.fit("\033[31m✗\033[0m " + "x" * 20, 8)
    assert cut == "\033[31m✗\033[0m xxxxx…\033[0m"
    assert watch.fit("採点中です", 6) == "採点…"  # wide characters take two columns


def zygotes_of(pid: int) -> set[tuple[int, str]]:
    """(pid, start time) of the zygotes that are children of `pid`."""
    found = set()
    for child, start in descendants(pid):
        fields = _stat(child)
        try:
            with open(f"/proc/{child}/cmdline", "rb") as f:
                command = f.read()
        except OSError:
            continue
        if fields and int(fields[1]) == pid and b"grader.harness.target.zygote_server" in command:
            found.add((child, start))
    return found


@needs_proc
def test_one_zygote_serves_every_grade(tmp_path):
    """The watcher starts the zygote once; every grade's target processes fork from it. The
    sweep after a grade (which ends every other child of the watcher) leaves it alone: a grade
    that found it gone started each target as a fresh interpreter, twice as slow."""
    folder = student_folder(tmp_path)
    target = folder / "queue.py"
    w = Watching(target)
    try:
        w.wait_for("the first grade", lambda s: any(FINAL in x for x in s))
        before = zygotes_of(w.proc.pid)
        target.write_text(MUTANT.read_text(encoding="utf-8"), encoding="utf-8")
        w.wait_for("the mutant's grade", lambda s: len([x for x in s if FINAL in x]) >= 2)
        after = zygotes_of(w.proc.pid)
        w.interrupt()
    finally:
        w.stop()
    assert len(before) == 1 and after == before


def _arguments(target: Path) -> Namespace:
    return cli.parser("en").parse_args(["--impl", str(target)])


def _held_grade(target: Path, since: float) -> watch.Grade:
    """A grade whose child has ended (no process), having said its whole verdict."""
    message = {"pass": 1, "results": [check_result_to_json(r) for r in _results()]}
    return watch.Grade(pid=-1, fd=-1, saved=0.0, since=since, state=watch.snapshot(target),
                       held=[message])


@pytest.fixture
def watcher(tmp_path, monkeypatch):
    """(a Watch of tmp_path/queue.py writing to a StringIO, its clock): logical time, the
    test's to move (`clock[0] += ...`)."""
    monkeypatch.setenv("NO_COLOR", "1")
    target = tmp_path / "queue.py"
    target.write_text("a = 1\n")
    clock = [0.0]
    monkeypatch.setattr(watch.time, "monotonic", lambda: clock[0])
    return watch.Watch(_arguments(target), target, "en", Config(), io.StringIO()), clock


def test_a_verdict_is_shown_only_once_its_files_have_settled_as_the_grade_found_them(watcher):
    """A save after a quiet spell is graded at once; what the grade says waits until the files
    have stayed as they were for SETTLE seconds, and is never shown for files that changed
    since the grade started (the loop starts that grade over)."""
    w, clock = watcher
    w.passes = 1
    grade = w.grade = _held_grade(w.target, since=clock[0])
    w.show(grade)
    assert w.out.getvalue() == "" and grade.held  # too soon: an editor may be mid-save
    clock[0] += watch.SETTLE
    w.show(grade)
    assert "Score: 2 / 6" in w.out.getvalue() and grade.finished and not grade.held

    w.out.truncate(0)
    w.out.seek(0)
    grade = w.grade = _held_grade(w.target, since=clock[0])
    clock[0] += 10 * watch.SETTLE
    w.target.write_text("a = 22\n")  # changed since the grade started: its verdict is stale
    w.show(grade)
    assert w.out.getvalue() == "" and grade.held


def test_an_ended_grade_without_a_verdict_says_so_once_settled(watcher):
    w, clock = watcher
    grade = w.grade = watch.Grade(pid=-1, fd=-1, saved=0.0, since=clock[0],
                                  state=watch.snapshot(w.target))
    w.show(grade)
    assert w.out.getvalue() == ""
    clock[0] += watch.SETTLE
    w.show(grade)
    w.show(grade)
    assert w.out.getvalue().count("without a verdict") == 1


def test_a_save_after_a_quiet_spell_starts_at_once_a_burst_once_settled(watcher, monkeypatch):
    """The loop's decisions, one poll at a time on a logical clock: the first look grades; a
    change long after the last one grades at once; a change within SETTLE of the one before
    ends that grade and grades once nothing has changed for SETTLE."""
    w, clock = watcher
    monkeypatch.setattr(watch, "POLL", 1.0)  # logical units: exact sums
    monkeypatch.setattr(watch, "SETTLE", 2.0)
    states = iter([{"queue.py": 1},                                 # at the start
                   {"queue.py": 1}, {"queue.py": 2},                # quiet, then a save
                   {"queue.py": 3}, {"queue.py": 3}, {"queue.py": 3},  # a second step at once
                   {"queue.py": 3}])
    calls = []
    monkeypatch.setattr(watch, "snapshot", lambda target: next(states))
    monkeypatch.setattr(w, "start", lambda saved, since, state: calls.append(
        ("start", clock[0], state["queue.py"])))
    monkeypatch.setattr(w, "cancel", lambda: calls.append(("cancel", clock[0])))

    def wait(timeout):
        clock[0] += timeout

    monkeypatch.setattr(w, "wait", wait)
    with pytest.raises(StopIteration):  # the states run out: the loop ends there
        w.loop()
    assert calls == [("start", 0.0, 1),
                     ("start", 2.0, 2),   # the save, graded at once
                     ("cancel", 3.0),     # a step within SETTLE of it: that grade ends
                     ("start", 5.0, 3)]   # graded once nothing has changed for SETTLE


@pytest.mark.parametrize("policy, shown", [("never", False), ("always", True)])
def test_watch_writes_the_report_files_python_m_grader_writes(tmp_path, policy, shown):
    """One pipeline (grader.report.pipeline): watch's --json follows the config's hints policy
    as `python -m grader --json` does (it wrote every hint, `hints = "never"` or not)."""
    folder = student_folder(tmp_path)
    shutil.copy(MUTANTS / "boundary_finish_at_expiry_accepted.py", folder / "queue.py")
    config = tmp_path / "grader.toml"
    config.write_text(f'hints = "{policy}"\n', encoding="utf-8")
    hint = messages.text("check.finish-at-expiry.hint", "en")
    by_watch, by_grade = tmp_path / "watch.json", tmp_path / "grade.json"
    w = Watching(folder / "queue.py", "-k", "finish-at-expiry", "--config", str(config),
                 "--json", str(by_watch))
    try:
        w.wait_for("the grade's end", lambda s: any(FINAL in x for x in s))
        w.interrupt()
    finally:
        w.stop()
    proc = run_grader("--impl", str(folder / "queue.py"), "-k", "finish-at-expiry", "--config",
                      str(config), "--json", str(by_grade))
    assert proc.returncode == 1, proc.stderr
    outputs = [json.loads(p.read_text(encoding="utf-8"))["tests"][0]["output"]
               for p in (by_watch, by_grade)]
    assert [hint in output for output in outputs] == [shown, shown]
    assert outputs[0] == outputs[1]


def test_a_line_too_wide_for_the_terminal_is_wrapped_whole_not_cut():
    """The sentence that carries the fix ("... must quarantine it") fell off at the screen's edge;
    it is wrapped between words under its own indentation now."""
    sentence = ("    claim left job 2 as it was; every job past its deadline whose lease is not "
                "valid must be quarantined by the next claim, so claim must quarantine it")
    lines = watch.fold(sentence, 60, "en")
    assert len(lines) > 1 and all(len(line) <= 60 for line in lines)
    assert " ".join(part.strip() for part in lines) == sentence.strip()
    assert lines[0].startswith("    claim") and lines[1].startswith("      ")
    assert lines[-1].endswith("must quarantine it")
    assert watch.fold("\033[1mScore\033[0m", 40, "en") == ["\033[1mScore\033[0m"]
    styled = watch.fold("\033[31m✗\033[0m " + "word " * 20, 30, "en")
    assert all("\033" not in part and len(part) <= 30 for part in styled)


@pytest.mark.parametrize("instructor", [False, True])
def test_instructor_shows_the_checks_the_config_hides(tmp_path, instructor):
    """`watch --instructor` is the instructor's copy, as on the other commands: every check,
    whatever the config's `show` hides; without it the screen names no hidden check."""
    folder = student_folder(tmp_path)
    shutil.copy(MUTANTS / "boundary_finish_at_expiry_accepted.py", folder / "queue.py")
    config = tmp_path / "grader.toml"
    config.write_text('[checks.finish-at-expiry]\nshow = "hidden"\n', encoding="utf-8")
    w = Watching(folder / "queue.py", "-k", "finish-at-expiry", "--config", str(config),
                 *(["--instructor"] if instructor else []))
    try:
        screens = w.wait_for("the grade's end", lambda s: any(FINAL in x for x in s))
        w.interrupt()
    finally:
        w.stop()
    final = next(s for s in screens if FINAL in s)
    assert ("finish-at-expiry" in final) is instructor, final
    shown = points("finish-at-expiry") if instructor else 0
    assert f"Score: 0 / {shown}" in final, final
    # the student's screen says how many checks are hidden and their points, never which
    assert ("hidden until your instructor publishes them" in final) is not instructor, final
    # with only hidden checks graded, nothing says every check passed (their verdicts are not told)
    assert "Every check passed" not in final, final


@pytest.mark.skipif(os.name != "posix", reason="SIGINT's disposition is POSIX's")
def test_the_watcher_hears_ctrl_c_even_where_the_suite_ignores_it():
    """A suite started in the background of a script (`cmd &` without job control) inherits
    SIGINT ignored, and so would every watcher it starts: `interruptible` gives the child
    SIGINT's default, so Python's KeyboardInterrupt is installed as in a terminal."""
    probe = "import signal; print(signal.getsignal(signal.SIGINT) is signal.default_int_handler)"
    before = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        ignored = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True)
        heard = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                               **interruptible())
    finally:
        signal.signal(signal.SIGINT, before)
    assert (ignored.stdout.strip(), heard.stdout.strip()) == ("False", "True")
