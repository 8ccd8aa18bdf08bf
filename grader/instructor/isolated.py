"""Grade one submission in its own process, so a submission that hangs or crashes costs only
its own result.

The grader runs as `python -m grader --impl ... --json ...` in a new session, in a private work
directory holding a copy of the submission (the original is never written to) and its own
TMPDIR, and with `--no-history`: no .leaselab-history.json is written beside the copy, and the
hint policy counts no local runs. A wall-clock limit bounds the whole run; on expiry, and after
every run, every process left in that session is killed: the grader's sandbox puts each check
in its own process group, so killing one group would leave a spinning check behind.

Inside `forking()` (batch, on Linux) the grader is not started afresh for each submission: one
fork server (grader.instructor.fork_server), started once with the grader imported, forks a
child that sets itself up as that command would run (new session, the work directory, the
environment, stdin on /dev/null, stdout and stderr to the log) and runs the grader's main with
the same arguments; the limit, the session killed afterwards and the strays ended are the same.
Where the fork server cannot serve a grade, it runs the old way.

Whatever happens, the answer is a results.json-shaped dict: the grader's own, or a not-graded
one (grader.report.results_json: score 0, every check failed with the reason).
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import socket
import stat
import subprocess
import sys
import threading
import time
from dataclasses import dataclass
from pathlib import Path

from grader.harness.judge.world import fresh_seed
from grader.harness.processes import forkloop, hygiene, jail, zygote
from grader.harness.target.sealing import SEALED_ENV
from grader.report.messages import INSTRUCTOR_TOO_LARGE, text
from grader.report.results_json import CRASHED, GRADED, TIMED_OUT, TOO_LARGE, not_graded, read

from .submission import MAX_ENTRIES, MAX_FILE_BYTES, MAX_TOTAL_BYTES, TooLarge, copied_files

DEFAULT_LIMIT = 300.0  # seconds of wall-clock time per submission: a safety net only
PACKAGE_ROOT = Path(__file__).resolve().parents[2]  # holds grader/ and lab/
LOG_TAIL = 2000
MB = 1024 * 1024

_live: set[int] = set()
_live_lock = threading.Lock()


@dataclass
class Outcome:
    status: str
    results: dict
    duration: float
    log: str = ""
    seed: int | None = None  # what the grade's worlds were drawn from (None: it never ran)


def grade(queue_py: Path, workdir: Path, *, limit: float = DEFAULT_LIMIT, lang: str = "en",
          timeout_scale: float = 1.0, with_folder: bool = True,
          select: str | None = None, config: str | Path | None = None,
          seed: int | None = None, check_jobs: int | None = None,
          shown_as: str | None = None) -> Outcome:
    """Grade `queue_py` in `workdir` (an empty folder) within `limit` seconds. `with_folder`:
    the submission is the folder holding queue.py (helper modules come along), else the file.
    `select`: only the checks matching this -k expression (pytest's syntax). `seed`: what the checks'
    worlds are drawn from; default: a fresh one, so that a recorded grade uses scenarios the
    code cannot have learned (grader.harness.judge.world); it is in the results, to replay.
    `check_jobs`: how many checks the grader runs at once (its --jobs; default: the cores);
    batch grades with 1, its own --jobs being the parallelism. `shown_as`: the name the
    student knows the file by (`lab/queue.py` in their folder, `alice.py`), which the results
    say wherever they would name the private copy (`submission/queue.py:4`: `own_names`)."""
    seed = fresh_seed() if seed is None else seed
    start = time.monotonic()
    try:
        target = _copy_submission(Path(queue_py), Path(workdir), with_folder)
    except TooLarge as large:
        message = text(INSTRUCTOR_TOO_LARGE(large.kind), lang, file=large.file,
                       files=MAX_ENTRIES, total=MAX_TOTAL_BYTES // MB, size=MAX_FILE_BYTES // MB)
        return Outcome(TOO_LARGE, not_graded(TOO_LARGE, message, lang),
                       time.monotonic() - start)
    except OSError as exc:  # e.g. a path too long for the work folder: still a row
        message = text("instructor.copy-failed", lang, error=f"{type(exc).__name__}: {exc}")
        return Outcome(CRASHED, not_graded(CRASHED, message, lang), time.monotonic() - start)
    out = Path(workdir) / "results.json"
    log_path = Path(workdir) / "grader.log"
    tmp = Path(workdir) / "tmp"
    tmp.mkdir()
    env = _grade_env(tmp)
    argv = ["--impl", str(target), "--json", str(out), "--lang", lang,
            "--timeout-scale", f"{timeout_scale:g}", "--replay", str(seed),
            "--no-history"]  # a recorded grade leaves no run history in the submission
    if check_jobs is not None:
        argv += ["--jobs", str(check_jobs)]
    if select:
        argv += ["-k", select]
    if config:  # the instructor's config file: its detail level and visibilities
        argv += ["--config", str(Path(config).resolve())]
    hygiene.become_subreaper()  # what a killed grader left detached comes back to us
    with open(log_path, "wb") as log:
        code = _run_forked(argv, Path(workdir), env, log, limit)
        if code is _NOT_FORKED:
            code = _run_fresh(argv, Path(workdir), env, log, limit)
    duration = time.monotonic() - start
    log_text = log_path.read_text(encoding="utf-8", errors="replace")
    if code is None:
        message = text("instructor.timed-out", lang, limit=f"{limit:g}")
        return Outcome(TIMED_OUT, not_graded(TIMED_OUT, message, lang), duration, log_text, seed)
    results = read(out) if code in (0, 1) else None
    if results is None:
        tail = log_text[-LOG_TAIL:].strip()
        message = text("instructor.crashed", lang, code=code) + ("\n" + tail if tail else "")
        return Outcome(CRASHED, not_graded(CRASHED, message, lang), duration, log_text, seed)
    if shown_as:
        results = own_names(results, {str(target): shown_as,
                                      str(target.relative_to(workdir)): shown_as})
    return Outcome(GRADED, results, duration, log_text, seed)


def own_names(data, names: dict[str, str]):
    """`data` (a results object) with every string naming the graded copy (each key of `names`,
    the longest first: the absolute path holds the relative one) naming the student's own file
    instead."""
    if isinstance(data, str):
        for copy in sorted(names, key=len, reverse=True):
            data = data.replace(copy, names[copy])
        return data
    if isinstance(data, dict):
        return {k: own_names(v, names) for k, v in data.items()}
    if isinstance(data, list):
        return [own_names(v, names) for v in data]
    return data


_NOT_FORKED = object()


def _grade_env(tmp: Path | None) -> dict:
    """The grader's environment: no reference, no tests (sealed), no colours, no bytecode."""
    env = {**os.environ, "PYTHONPATH": _pythonpath(), "NO_COLOR": "1",
           "PYTHONDONTWRITEBYTECODE": "1", SEALED_ENV: "1"}
    if tmp is not None:
        env["TMPDIR"] = str(tmp)
    return env


def _run_fresh(argv: list[str], workdir: Path, env: dict, log, limit: float) -> int | None:
    """`python -m grader argv` in a fresh interpreter; its exit code, None past the limit."""
    with _live_lock:  # a sweep never sees a grader started but not yet listed
        proc = subprocess.Popen([sys.executable, "-m", "grader", *argv], cwd=workdir, env=env,
                                stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT,
                                start_new_session=True)
        _live.add(proc.pid)
    try:
        code = proc.wait(timeout=limit)
    except subprocess.TimeoutExpired:
        code = None
    finally:
        kill_session(proc.pid)
        proc.wait()
        with _live_lock:
            _live.discard(proc.pid)
            hygiene.end_strays(keep=_ours())  # every live grader is a child of ours
    return code


def _run_forked(argv: list[str], workdir: Path, env: dict, log, limit: float,
                errors=None, server: "_ForkServer | None" = None):
    """The same grade forked by the fork server (`server`, else the batch's), if one runs and
    can serve it: its exit code, None past the limit; _NOT_FORKED where it cannot (nothing has
    started then). `errors`: a file for its stderr apart (else it goes to `log`)."""
    server = _server if server is None else server
    if server is None:
        return _NOT_FORKED
    try:
        with _live_lock:  # as _run_fresh: listed as soon as it exists
            proc = server.grade(argv, workdir, env, log.fileno(),
                                None if errors is None else errors.fileno())
            _live.add(proc.pid)
    except zygote.ZygoteUnavailable:
        return _NOT_FORKED
    timed_out = False
    try:
        proc.wait(timeout=limit)
    except subprocess.TimeoutExpired:
        timed_out = True
    finally:
        proc.kill_group()  # the server kills its session, reaps it, ends the strays: then says
        if proc.returncode is None:  # the server ended without telling: do its work here
            kill_session(proc.pid)
        with _live_lock:
            _live.discard(proc.pid)
            if proc.returncode is None:  # its orphans come to us, the server's subreaper
                hygiene.end_strays(keep=_ours())
    if timed_out:
        return None
    return proc.returncode if proc.returncode is not None else -9


def _ours() -> set[int]:
    """Children of this process a sweep must leave alone: live graders and the fork server."""
    server = _server
    return set(_live) | ({server.process.pid} if server is not None else set())


# -- the fork server ------------------------------------------------------------------------------
class _ForkServer:
    """The batch's handle on its fork server (grader.instructor.fork_server). `env`: what it
    starts with, and so what the grades it forks start with (the batch's by default; the
    project's tests start one with theirs)."""

    def __init__(self, env: dict | None = None):
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        env = _grade_env(None) if env is None else env
        try:
            command = [sys.executable, "-m", "grader.instructor.fork_server",
                       "--door", str(theirs.fileno()), "--parent", str(os.getpid())]
            if threading.current_thread() is threading.main_thread():
                command.append("--pdeathsig")  # not from a thread: it fires when *that* ends
            self.process = subprocess.Popen(
                command, pass_fds=(theirs.fileno(),), cwd=PACKAGE_ROOT, env=env,
                stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                close_fds=True)
        except BaseException:
            ours.close()
            raise
        finally:
            theirs.close()
        self.door = ours
        self.startup_env = forkloop.startup_env(env)

    def grade(self, argv: list[str], cwd: Path, env: dict, log_fd: int,
              err_fd: int | None = None) -> zygote.ForkedTarget:
        """Have the server fork `python -m grader argv`, its output on `log_fd` (its stderr on
        `err_fd` when given); ZygoteUnavailable where it cannot."""
        if self.process.poll() is not None:
            raise zygote.ZygoteUnavailable("the fork server has ended")
        if forkloop.startup_env(env) != self.startup_env:
            raise zygote.ZygoteUnavailable("another environment at start-up")
        data = json.dumps({"op": "grade", "argv": argv, "cwd": str(Path(cwd).resolve()),
                           "env": env}, separators=(",", ":")).encode("utf-8")
        lease, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            try:
                socket.send_fds(self.door, [data], [theirs.fileno(), log_fd]
                                + ([] if err_fd is None else [err_fd]))
            finally:
                theirs.close()
            answer, rest, pidfds = forkloop.read_line(lease, zygote.ANSWER_TIMEOUT,
                                                     with_fds=True)
            if not answer.startswith("pid ") or not answer[4:].isdigit():
                forkloop.close_fds(pidfds)
                raise zygote.ZygoteUnavailable(f"the fork server answered {answer[:40]!r}")
        except BaseException as exc:
            lease.close()  # if the server forks late, the closed lease gets the child killed
            if isinstance(exc, OSError) and not isinstance(exc, zygote.ZygoteUnavailable):
                raise zygote.ZygoteUnavailable(f"no answer from the fork server: {exc}") \
                    from None
            raise
        return zygote.ForkedTarget(int(answer[4:]), lease, rest, pidfds[0] if pidfds else None)

    def stop(self) -> None:
        """Ask the server to end its grades and itself; wait for it (bounded)."""
        if self.process.poll() is None:
            lease, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
            try:
                socket.send_fds(self.door, [b'{"op":"exit"}'], [theirs.fileno()])
                theirs.close()
                forkloop.read_line(lease, forkloop.REAP_TIMEOUT + 1)
            except OSError:
                pass
            finally:
                theirs.close()
                lease.close()
        self.door.close()
        try:
            self.process.wait(timeout=forkloop.REAP_TIMEOUT + 1)
        except subprocess.TimeoutExpired:  # hung or stopped: its children become ours
            self.process.kill()
            self.process.wait()


_server: _ForkServer | None = None


def fork_supported() -> bool:
    """Whether grades can be forked here (Linux, fd passing, pidfds: as the zygote)."""
    return zygote.supported() and hasattr(os, "waitid") and hasattr(os, "pidfd_open")


@contextlib.contextmanager
def forking():
    """Inside: every grade() is forked by one fork server, started now (call it before any
    thread that grades starts: the server then dies with this thread). Where none can run,
    grades run as they do outside."""
    global _server
    if _server is not None or not fork_supported():
        yield
        return
    try:
        _server = _ForkServer()
    except OSError:
        yield
        return
    try:
        yield
    finally:
        server, _server = _server, None
        server.stop()


def kill_session(sid: int) -> None:
    """SIGKILL every process of session `sid` (the grader and whatever it left running)."""
    hygiene.kill_session(sid)


def kill_all() -> None:
    """Kill every submission still being graded (the batch was interrupted)."""
    with _live_lock:
        live = list(_live)
    for sid in live:
        kill_session(sid)


def _copy_submission(queue_py: Path, workdir: Path, with_folder: bool) -> Path:
    """Copy the submission into workdir/submission/ and return the queue.py to grade there.
    A folder submission brings the regular files beside its queue.py (submission.copied_files:
    no symlink followed, no FIFO opened, bounded; TooLarge past the bounds); a single file is
    renamed."""
    dest = workdir / "submission"
    dest.mkdir(parents=True)
    try:
        for relative in copied_files(queue_py.parent) if with_folder else []:
            (dest / relative).parent.mkdir(parents=True, exist_ok=True)
            _copy_regular(queue_py.parent / relative, dest / relative)
        if not (dest / "queue.py").is_file():
            _copy_regular(queue_py, dest / "queue.py")
    except TooLarge:
        shutil.rmtree(dest)  # nothing of it is graded, or looked into
        raise
    return dest / "queue.py"


def _copy_regular(src: Path, dst: Path) -> None:
    """Copy one regular file of at most MAX_FILE_BYTES, never through a symlink and never
    waiting on anything else (a FIFO swapped in since the listing is opened non-blocking and
    left out); a file that cannot be read is left out too."""
    try:
        fd = os.open(src, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0)
                     | getattr(os, "O_NONBLOCK", 0))
    except OSError:
        return
    with os.fdopen(fd, "rb") as f:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return
        data = f.read(MAX_FILE_BYTES + 1)
    if len(data) > MAX_FILE_BYTES:
        raise TooLarge("file", src.name)
    dst.write_bytes(data)


def _pythonpath() -> str:
    rest = os.environ.get("PYTHONPATH")
    return os.pathsep.join([str(PACKAGE_ROOT), *([rest] if rest else [])])


def class_note(lang: str) -> str | None:
    """The one line batch and the bundles say where this machine has no jail (no Landlock:
    macOS, Windows, an old kernel): grading one's own code is fine, a class of strangers'
    needs Linux (docs/instructors.md, threat model); None where there is one."""
    return text("ui.unjailed-class", lang) if jail.available() <= 0 else None
