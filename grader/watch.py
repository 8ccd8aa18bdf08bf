"""`python -m grader watch [--impl FILE] [grading options]`: regrade whenever the file under grade,
or a .py file beside it (in its folder), is saved, and redraw a short summary each time
(`grader.report.summary`: the score, what to fix first with its one-line problem, how many
checks failed).

Watching. The folder is polled every POLL seconds, comparing each file's (mtime_ns, ctime_ns,
size, inode). No watcher library: watchdog or watchfiles would be one more dependency for every
student who installs the grader, a poll of a handful of files costs nothing, and it sees an
editor's write-then-rename over the file like a plain write. A change after a quiet spell is graded
at once, and what its grade says is shown only once the files have stayed as they were for SETTLE
seconds and are still as the grade found them (an editor writes a file in several steps: the
next step ends a grade of the half-written file before it shows anything, and the first pass
takes longer than SETTLE, so the wait costs nothing). A change that comes less than SETTLE after
the one before (a burst of steps) is graded once nothing has changed for SETTLE seconds: one
grade started in vain a burst at most. A file that does not compile is graded all the same, and
the summary shows that cause.

Grading. A grade runs in a child forked from this process (which imports the grader once and
starts the zygote once, so a grade costs a fork, not an interpreter's start, and its target
processes are forked too), in a session of its own, in two passes: first
every check but SECOND_PASS, redrawn as soon as they are done; then SECOND_PASS: the families
that declare `watch_pass=2` (`checkdef.FAMILIES`: those whose checks start processes of their
own, and the random timelines, the longest check of a grade); one pass when -k selects none of SECOND_PASS (the partial screen lists only those it selects).
Both passes are one run of the grader (one preflight, one set of lanes, no lane idle between
them): every lane takes the first pass's checks before the second's (`iter_checks`'
short_first), and the first screen is drawn once they are all in.
A save during a grade ends that grade (the child and every process it started) and grades the
new file once it has settled: one grade at a time, never a queue. Ctrl-C (or SIGTERM) ends the
grade the same way; the exit status is then 130. The grading options are the grader's own
(`cli.parser`): -k narrows both passes, --config decides what the screen shows of each check
(--instructor, the instructor's copy, shows every check whatever its `show` says), and a
report file asked for (--json, --html, ...) is written after each whole grade, removed when the next starts (no verdict of an older file stays).

The screen. On a terminal it is cleared and redrawn; anywhere else (a pipe, a file, TERM=dumb)
each redraw is printed after a SEPARATOR line, with no escape code (colours as everywhere:
a terminal without NO_COLOR).
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import queue
import os
import re
import select
import shutil
import signal
import stat
import sys
import time
import traceback
from dataclasses import dataclass, field
from pathlib import Path

from . import cli, config as configs
from .checkdef import FAMILIES, all_checks, check_families
from grader.harness.processes import hygiene, portable, sandbox, zygote
from grader.harness.target.loader import display_name, is_path
from .report import files, outputs, summary
from .report.messages import default_lang, text
from .report.render import Style, width
from .report.wrapping import wrap
from .results import CheckResult, check_result_from_json, check_result_to_json
from .runner import GraderError, iter_checks, selected

POLL = 0.025   # seconds between two looks at the folder (a stat of a handful of files)
SETTLE = 0.05  # seconds the files must stay as they are before a verdict about them is shown
#                (an editor's steps of one save come within milliseconds; a later change
#                restarts the grade anyway)
#: The families whose checks run in the second pass, after the first redraw.
SECOND_PASS = tuple(f.name for f in FAMILIES if f.watch_pass == 2)
SEPARATOR = "-" * 40
CLEAR = "\033[H\033[2J"


def main(argv: list[str]) -> int:
    lang = cli.chosen_lang(argv)
    p = cli.parser(lang)
    p.prog, p.description = "python -m grader watch", text("cli.command.watch", lang)
    args = p.parse_command(argv)
    if isinstance(args, int):  # --help, or a bad argument
        return args
    args.seed = cli.chosen_seed(args.seed)  # one world for the session: saves stay comparable
    problem = cli.bad_paths(args)
    target = None if problem else watched_file(args.impl)
    if target is None:
        problem = problem or (f"--impl {args.impl}: no such module here (give a module name or "
                              "the path of a .py file)")
    if problem:
        print(f"grader: {problem}", file=sys.stderr)
        return 2
    try:
        config = configs.load(args.config, set(all_checks()), check_families())
    except configs.ConfigError as exc:
        print(f"grader: {exc}", file=sys.stderr)
        return 2
    config.instructor = args.instructor  # the instructor's copy: every check, whatever `show`
    return Watch(args, target, args.lang or default_lang(), config).run()


def watched_file(impl: str) -> Path | None:
    """The file `--impl` names (a path, or where the module is found from here), or None."""
    if is_path(impl):
        return Path(impl).absolute()
    if os.getcwd() not in sys.path:  # as the runner does: modules resolve from here
        sys.path.insert(0, os.getcwd())
    try:
        spec = importlib.util.find_spec(impl)
    except (ImportError, ValueError):
        return None
    return Path(spec.origin) if spec is not None and spec.has_location and spec.origin else None


def snapshot(target: Path) -> dict[str, tuple]:
    """What the watched files look like now: {name: (mtime_ns, ctime_ns, size, inode)} for the
    target and every .py file beside it (hidden ones, editors' lock and swap files, left out)."""
    folder = target.parent
    try:
        names = os.listdir(folder)
    except OSError:
        names = []
    found = {}
    for name in names:
        if name != target.name and (name.startswith(".") or not name.endswith(".py")):
            continue
        try:
            st = os.stat(folder / name)
        except OSError:  # gone since the listing, or a dangling link
            continue
        if stat.S_ISREG(st.st_mode):
            found[name] = (st.st_mtime_ns, st.st_ctime_ns, st.st_size, st.st_ino)
    return found


def second_pass(select: str | None) -> list[str]:
    """The ids of the second pass's checks that the user's -k selects, in lesson order (the
    partial screen lists them as still running); none: one pass (a -k that selects nothing, or
    cannot be read, is the grade's to say)."""
    try:
        return [c.id for c in selected(select) if c.family.watch_pass == 2]
    except GraderError:
        return []


@dataclass
class Grade:
    """The grade of one change, run in a child: its pid (= its session), the pipe it reports on
    (until the child has ended), the time of the change and the files as it found them, what it
    said that is not shown yet, and the results of the passes shown."""
    pid: int
    fd: int               # -1 once the child has ended and been reaped
    saved: float          # wall-clock time of the change (shown)
    since: float          # monotonic time of the change (the seconds shown are counted from it)
    state: dict           # the files as they were when it started (`snapshot`)
    buffer: bytes = b""
    held: list[dict] = field(default_factory=list)  # what it said, not shown yet (`show`)
    results: list[CheckResult] = field(default_factory=list)
    finished: bool = False
    spawned: portable.Spawned | None = None  # the portable path's grade (fd is SPAWNED)


#: A spawned grade's `fd` while it runs: there is no fd (a thread reads its stdout).
SPAWNED = 1 << 30


class Watch:
    def __init__(self, args, target: Path, lang: str, config: configs.Config, out=None):
        self.args, self.target, self.lang, self.config = args, target, lang, config
        self.out = out or sys.stdout
        self.style = Style.for_stream(self.out)
        self.tty = self.out.isatty() and os.environ.get("TERM") != "dumb"
        self.later = second_pass(args.select)
        self.passes = 2 if self.later else 1
        self.grade: Grade | None = None
        self.note = cli.unjailed_note(lang)  # under the header of every screen, if any

    # -- the loop --------------------------------------------------------------------------------
    def run(self) -> int:
        hygiene.become_subreaper()  # what a killed grade left detached comes back to us
        zygote.start()  # every grade's targets fork from it (it is not in a grade's session)
        old_term = signal.signal(signal.SIGTERM, _interrupt)
        old_int = signal.getsignal(signal.SIGINT)
        try:
            self.loop()
        except KeyboardInterrupt:
            pass
        except BrokenPipeError:  # nobody reads the screen any more
            pass
        finally:
            signal.signal(signal.SIGINT, signal.SIG_IGN)  # a second Ctrl-C must not cut this
            self.cancel()
            hygiene.end_strays(set())  # a child forked just before the interrupt was recorded
            signal.signal(signal.SIGTERM, old_term)
            signal.signal(signal.SIGINT, old_int)
        if self.tty:
            self.out.write("\n")
            self.out.flush()
        return 130

    def loop(self) -> None:
        state = snapshot(self.target)
        self.start(time.time(), time.monotonic(), state)
        change = None   # (wall, monotonic) time of a burst's change not graded yet
        last = float("-inf")  # monotonic time of the last change seen
        while True:
            self.wait(POLL)
            now, seen = snapshot(self.target), time.monotonic()
            if now != state:
                state, burst, last = now, seen - last < SETTLE, seen
                if burst:  # a step of the same save: graded once the steps are over
                    self.cancel()  # its verdict would be about a file that is no more
                    change = change or (time.time(), seen)
                else:  # after a quiet spell: at once (`show` holds it back till it settles)
                    self.start(time.time(), seen, state)
                    change = None
            elif change is not None and seen - last >= SETTLE:
                self.start(*change, state)
                change = None

    # -- one grade -------------------------------------------------------------------------------
    def start(self, saved: float, since: float, state: dict) -> None:
        self.cancel()
        for path in outputs.asked(self.args).values():
            files.remove_stale(path)  # no earlier verdict stays beside a file being graded
        if portable.forkless():  # the portable path: a grade is a spawned interpreter
            request = {"args": {k: getattr(self.args, k) for k in SPAWNED_OPTIONS},
                       "later": self.later, "passes": self.passes}
            child = portable.Spawned("grader.watch", "--grade", json.dumps(request))
            child.close_input()
            self.grade = Grade(child.pid, SPAWNED, saved, since, state, spawned=child)
            self.draw(text("watch.grading", self.lang, time=_clock(saved)))
            return
        read_fd, write_fd = os.pipe()
        pid = os.fork()
        if pid == 0:
            os.close(read_fd)
            self._child(write_fd)  # never returns
        os.close(write_fd)
        self.grade = Grade(pid, read_fd, saved, since, state)
        self.draw(text("watch.grading", self.lang, time=_clock(saved)))

    def _child(self, fd: int) -> None:
        os._exit(_report_or_say_why(lambda: self._forked_child(fd), fd))

    def _forked_child(self, fd: int) -> None:
        """The forked grade: a session of its own, dies with the watcher, no screen."""
        os.setsid()  # a session of its own: ended whole by `cancel`
        _die_with(os.getppid())
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        signal.signal(signal.SIGINT, signal.SIG_DFL)
        null = os.open(os.devnull, os.O_RDWR)
        for stream in (0, 1, 2):  # the screen is the parent's
            os.dup2(null, stream)
        grade_and_report(self.args, self.later, self.passes, fd)

    def wait(self, timeout: float) -> None:
        """Up to `timeout` seconds: read what the grade says, and show it (`show`)."""
        grade = self.grade
        if grade is None or grade.fd < 0:
            time.sleep(timeout)
        elif grade.spawned is not None:  # read by a thread (select takes sockets only there)
            try:
                line = grade.spawned.lines.get(timeout)
            except queue.Empty:
                line = b""
            if line is None:
                self.reap(grade)
            elif line:
                grade.held.append(json.loads(line))
        elif select.select([grade.fd], [], [], timeout)[0]:
            chunk = os.read(grade.fd, 1 << 16)
            if not chunk:
                self.reap(grade)
            else:
                *lines, grade.buffer = (grade.buffer + chunk).split(b"\n")
                grade.held += [json.loads(line) for line in lines]
        if grade is not None:
            self.show(grade)

    def show(self, grade: Grade) -> None:
        """Redraw with what `grade` has said, once its files have stayed as they were for SETTLE
        seconds and are still as it found them; else later (a change is the loop's to see: it
        starts the grade over)."""
        ended = grade.fd < 0 and not grade.finished
        if not (grade.held or ended):
            return
        if time.monotonic() - grade.since < SETTLE or snapshot(self.target) != grade.state:
            return
        held, grade.held = grade.held, []
        for message in held:
            self.heard(grade, message)
        if ended and not grade.finished:
            grade.finished = True
            self.draw(text("watch.error", self.lang, error=text("watch.ended", self.lang)))

    def heard(self, grade: Grade, message: dict) -> None:
        seconds = f"{time.monotonic() - grade.since:.1f}"
        if "error" in message:
            grade.finished = True
            self.draw(text("watch.error", self.lang, error=message["error"].strip()))
            return
        grade.results += [check_result_from_json(r) for r in message["results"]]
        final = message["pass"] == self.passes
        # the grader's own report (a save is no run of the local history: no streak grows
        # with every keystroke's save)
        report = cli.report_of_args(self.args, grade.results, self.lang, self.config,
                                    time.monotonic() - grade.since, use_history=False)
        if final:
            grade.finished = True
            problem = cli.write_reports(self.args, report, self.config)  # there once the
            status = text("watch.graded", self.lang, seconds=seconds,    # screen says so
                          time=_clock(grade.saved))
            if problem:
                status += f"\ngrader: {problem}"
            self.draw(status, summary.from_view(report, self.style))
        else:
            status = text("watch.partial", self.lang, seconds=seconds, time=_clock(grade.saved),
                          ids=", ".join(self.later))
            self.draw(status, summary.from_view(report, self.style, running=self.later))

    def reap(self, grade: Grade) -> None:
        """The child closed its pipe: reap it and whatever it left (what it said stays, to be
        shown)."""
        if grade.spawned is not None:  # its lanes end when their stdin (its pipes) closes
            grade.spawned.end()
            grade.fd = -1
            return
        _end_session(grade.pid)
        # Reaps the child, and the orphans a subreaper inherited; not the zygote (a child too).
        hygiene.end_strays({pid for pid in (zygote.own_pid(),) if pid is not None})
        os.close(grade.fd)
        grade.fd = -1

    def cancel(self) -> None:
        """End the grade running (its child, and every process started under it); what it said
        and was not shown yet is dropped."""
        grade, self.grade = self.grade, None
        if grade is not None and grade.fd >= 0:
            self.reap(grade)

    # -- the screen ------------------------------------------------------------------------------
    def draw(self, status: str, body: list[str] = ()) -> None:
        header = self.style("dim", text("watch.header", self.lang,
                                        target=display_name(self.args.impl)))
        lines = [header, *([self.note] if self.note else []), status,
                 *([""] + list(body) if body else [])]
        if self.tty:  # wrapped at the terminal's width (a pipe or a file gets it all)
            columns = shutil.get_terminal_size().columns
            lines = [part for line in lines for part in fold(line, columns - 1, self.lang)]
        screen = "\n".join(lines)
        self.out.write((CLEAR if self.tty else SEPARATOR + "\n") + screen + "\n")
        self.out.flush()


_ESCAPE = re.compile(r"\033\[[0-9;]*m")


def fold(line: str, columns: int, lang: str) -> list[str]:
    """`line` as lines of at most `columns` columns: as it is when it fits, else wrapped between
    words under its own indentation (the sentence that says what to fix is read whole, where a
    cut at the edge took its end off); a wrapped line loses its colours. A word wider than the
    screen is cut (`fit`)."""
    plain = _ESCAPE.sub("", line)
    if width(plain) <= columns:
        return [line]
    body = plain.lstrip(" ")
    indent = " " * (len(plain) - len(body))
    return [fit(part, columns) for part in wrap(body, lang, indent, indent + "  ", columns)]


def fit(line: str, columns: int) -> str:
    """`line` cut to `columns` columns of a terminal, ending in "…" when cut; colour codes take
    no column, and a cut line ends with a reset so no colour runs on."""
    if width(_ESCAPE.sub("", line)) <= columns:
        return line
    out, used, i = [], 0, 0
    while i < len(line):
        code = _ESCAPE.match(line, i)
        if code:
            out.append(code.group())
            i = code.end()
            continue
        if used + width(line[i]) > columns - 1:
            break
        out.append(line[i])
        used += width(line[i])
        i += 1
    return "".join(out) + "…" + ("\033[0m" if "\033" in line else "")


def grade_and_report(args, later: list[str], passes: int, fd: int) -> None:
    """The grade of a watch's child (forked, or spawned on the portable path): every check in
    one run of the grader, said on `fd` as one message per pass."""
    later = set(later)
    two = passes == 2
    first_ids = [c.id for c in selected(args.select) if c.id not in later]
    first: list[CheckResult] = []
    rest: list[CheckResult] = []
    shown = not two  # one pass: its screen is the whole grade's
    # One run of the grader for both passes: every lane runs the first pass's checks
    # before the second's (short_first), the first screen comes once they are all in.
    for result in iter_checks(args.impl, timeout_scale=args.timeout_scale,
                              select=args.select or None, repeat=args.repeat,
                              seed=args.seed, jobs=args.jobs, short_first=True):
        (rest if result.id in later else first).append(result)
        if not shown and len(first) == len(first_ids):
            shown = True
            if first:  # a first pass -k left empty has nothing to show
                sandbox.write_message(fd, {"pass": 1, "results": [
                    check_result_to_json(r) for r in first]})
    final = rest if two else first + rest
    sandbox.write_message(fd, {"pass": passes,
                               "results": [check_result_to_json(r) for r in final]})


def _report_or_say_why(grade, fd: int) -> int:
    """Run `grade()`; an error it raised is said on `fd`; the exit code."""
    try:
        grade()
    except GraderError as exc:
        sandbox.write_message(fd, {"error": str(exc)})
    except BaseException:
        try:
            sandbox.write_message(fd, {"error": traceback.format_exc()})
        except BaseException:
            return 70
    return 0


#: What a spawned grade (the portable path) is told of the grading options.
SPAWNED_OPTIONS = ("impl", "timeout_scale", "select", "repeat", "seed", "jobs")


def spawned_grade(argv: list[str]) -> int:
    """`python -m grader.watch --grade JSON`: a watch's grade on the portable path (no fork),
    started by the watcher; it says its passes on its stdout, as a forked one on its pipe."""
    request = json.loads(argv[1])
    fd = os.dup(1)
    null = os.open(os.devnull, os.O_RDWR)
    for stream in (1, 2):  # nothing else of it (nor of its lanes) reaches the pipe or the screen
        os.dup2(null, stream)
    args = argparse.Namespace(**request["args"])
    return _report_or_say_why(
        lambda: grade_and_report(args, request["later"], request["passes"], fd), fd)


def _interrupt(signum, frame):
    raise KeyboardInterrupt


def _clock(wall: float) -> str:
    return time.strftime("%H:%M:%S", time.localtime(wall))


def _end_session(sid: int) -> None:
    """SIGKILL every process of session `sid` (Linux /proc; elsewhere its first group)."""
    hygiene.kill_session(sid)


def _die_with(parent: int) -> None:
    """Linux: this process is SIGKILLed when its parent ends (a watcher killed outright leaves
    no grade running); elsewhere a no-op."""
    try:
        import ctypes

        ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    except (OSError, AttributeError):
        return
    if os.getppid() != parent:  # it ended before the call
        os._exit(1)


_PR_SET_PDEATHSIG = 1


if __name__ == "__main__" and sys.argv[1:2] == ["--grade"]:
    sys.exit(spawned_grade(sys.argv[1:]))
