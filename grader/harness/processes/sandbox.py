"""Run one check's judge so that neither a hang nor a crash of the code under grade reaches the grader.

The judge of a check (its body, the Lab, the target process's proxy) never imports the code
under grade: that runs in a target process the judge starts (`target_client`), forked by the
zygote. `run(body, timeout)` runs the judge in one of two ways:

- **Forked** (the default): in a child of its own, which reports over a pipe, one JSON object per
  line: `{"step": ...}` before each call into the target (so a hang or an exit can say what was
  running), then one `{"result": ...}`: the JSON form of a `grader.results.Failure`, or
  `{"outcome": "passed"}`. The child is jailed to its own folder (`jail.enter_judge`: it, and
  the code's SQL it runs on its connections, write nothing else; it makes its check's folder
  there). Each line carries a secret drawn before the fork (`token`); a line
  without it was not written by the judge and is never believed. The child is not dumpable, so
  a target process of the same user (not root) cannot open its fds or read its memory. The
  parent waits at most `timeout` seconds of wall-clock time (a safety net for hangs only: checks
  themselves run on logical time), then kills the child's whole process group, and sweeps
  whatever the check left behind (`grader.harness.processes.hygiene`, the process hygiene the lanes,
  watch and the batch use too).
- **Here** (`inline=True`, where the zygote runs): in this process, for a check that starts no
  process of its own but its target processes (the zygote's children, not ours). The calling
  process is a lane of the runner (grader.runner.lanes): a forked copy of the grading process,
  not dumpable, jailed to its own folder as a forked judge is (`become_lane`), that runs one
  check at a time and has imported no code under grade either. No process that is not jailed
  runs a judge here (the pytest plugin forks its judges: grader.runner.grade_check), but with the
  plugin's --pdb.
  `timeout` is a SIGALRM that raises in the judge (every wait of the judge is a select or a
  sleep, which the signal interrupts), the last step is kept in memory, and the target
  processes get the CPU limit a forked judge would have passed them. It saves the fork of the
  judge and its copy-on-write faults: about half of a quick check's CPU. The lane's parent
  keeps a second safety net (lanes.BACKSTOP).
- **Watched** (the portable path, grader.harness.processes.portable: no fork, no SIGALRM): in
  this process too, always; this process is a spawned lane (grader.runner.spawned) or the
  preflight's spawned judge. `timeout` is a watchdog thread: when it fires it kills every
  target process the judge started (`on_time_up`: `Popen.kill`), so whatever the judge waits
  for ends at once, and the run is timed out with its last step, as the alarm's would be. No
  jail, no limits: the platforms of that path have neither (docs/DEVELOPING.md).
"""

from __future__ import annotations

import contextlib
import json
import os
import secrets
import select
import signal
import threading
import time
import traceback
from dataclasses import dataclass
from typing import Callable

from grader.results import Failure, Kind, Outcome, result_from_json, result_to_json

from . import jail, portable, workroot, zygote
from .hygiene import (become_subreaper, child_pids, end_strays, not_dumpable, own_children,
                      redirect_stdin, sweep)

_progress_fd: int | None = None
_token: str | None = None  # this run's secret: the parent believes only lines that carry it
_here = False  # a judge runs in this process now (`inline`): its steps are kept in _last_step
_last_step: dict | None = None


def report_step(step: dict) -> None:
    """Judge side: say what is about to run (no-op outside a sandbox)."""
    global _last_step
    if _here:
        _last_step = step
    elif _progress_fd is not None:
        write_message(_progress_fd, {"step": step, "token": _token})


def write_message(fd: int, obj: dict) -> None:
    """`obj` as one JSON line on `fd`, written whole (a pipe may take it in several writes)."""
    data = (json.dumps(obj, default=repr) + "\n").encode()
    while data:
        data = data[os.write(fd, data):]


def run(body: Callable[[], Failure | None | dict], timeout: float,
        inline: bool = False) -> Failure | None | dict:
    """Run `body()` in a child; return its failure (None: passed), or how the child died.
    `inline`: run it here instead, where that can be done (see the module's docstring). A body
    may return a dict of plain data instead (the runner's probe): it comes back as it is.

    Failures made here: timed out (with the step), exited (with the step and the exit code or
    signal), and grader-bug when `body` itself raised.
    """
    if portable.forkless():
        return run_watched(body, timeout)
    if inline and _can_run_here():
        return _run_here(body, timeout)
    return finish(start(body, timeout))


@dataclass
class Started:
    """A judge `start` forked, whose answer `finish` collects."""
    pid: int
    fd: int  # its pipe's read end
    token: str
    before: set[int]  # our children when it was forked (the sweep leaves them alone)
    own: str  # its folder (grader.harness.processes.workroot)
    timeout: float
    began: float  # time.monotonic() at the fork


def start(body: Callable[[], Failure | None | dict], timeout: float) -> Started:
    """`run`'s fork, without waiting for its answer: the judge runs `body()` while this
    process goes on (the runner's preflight, while the checks load and the lanes start)."""
    global _progress_fd, _token
    become_subreaper()
    zygote.start()  # before the fork: the check's judge inherits it and forks its targets there
    before = child_pids()
    token = secrets.token_hex(16)
    # The judge makes its folders (its targets' scratch, the probe's databases) in one of its
    # own, removed here once it is swept: a judge killed (its timeout, a resource limit) before
    # its own clean-up ran leaves nothing (grader.harness.processes.workroot).
    own = workroot.make("judge-")
    try:
        read_fd, write_fd = os.pipe()
        pid = os.fork()
    except BaseException:
        workroot.remove(own)
        raise
    if pid == 0:  # child
        workroot.enter(own)
        os.close(read_fd)
        not_dumpable()
        _token = token
        try:
            os.setpgid(0, 0)  # own process group: a timeout kills grandchildren too
        except OSError:
            pass
        _progress_fd = write_fd
        code = 0
        try:
            redirect_stdin()
            _limit_resources(timeout)
            jail.enter_judge([own])  # it writes only its own folder (and so does the code's SQL)
            result = body()
        except BaseException:  # a bug in the check itself, not in the target
            result = Failure.grader_bug(traceback.format_exc())
        message = ({"data": result} if isinstance(result, dict)
                   else {"result": result_to_json(result)})
        try:
            write_message(write_fd, {**message, "token": token})
        except BaseException:
            code = 70
        os._exit(code)

    os.close(write_fd)
    return Started(pid, read_fd, token, before, own, timeout, time.monotonic())


def finish(started: Started, keep: set[int] | frozenset = frozenset()) -> Failure | None | dict:
    """The answer of the judge `start` forked (what `run` returns), within its timeout counted
    from the fork; then it and what it left are swept, but our children in `keep` (processes
    forked since that are not its: the lanes)."""
    try:
        left = max(0.0, started.timeout - (time.monotonic() - started.began))
        return _collect(started.pid, started.fd, left, started.token, started.timeout)
    finally:
        os.close(started.fd)
        zygote.settle()  # targets whose judge was just killed are gone: their orphans are ours
        sweep(started.pid, started.before | set(keep))
        workroot.remove(started.own)  # nothing of the judge's runs any more


class _TimeUp(BaseException):
    """The judge run here went past its timeout (raised by SIGALRM; not an Exception, so that
    no `except Exception` of a check takes it for the target's error)."""


_time_up = False  # the alarm of the judge run here has fired


def _alarm(signum, frame) -> None:
    global _time_up
    _time_up = True
    raise _TimeUp


def _can_run_here() -> bool:
    return (hasattr(signal, "setitimer") and threading.current_thread() is threading.main_thread()
            and zygote.start())


def _run_here(body: Callable[[], Failure | None], timeout: float) -> Failure | None:
    """`run`, in this process: SIGALRM at `timeout`, the target processes limited as a forked
    judge's would be, a sweep only if something became our child meanwhile (a target spawned
    where the zygote could not fork it: that one has the lane's limits, without the CPU one).
    An alarm swallowed where Python cannot raise (a finalizer's `__del__`) leaves the judge to
    the lane's backstop."""
    global _here, _last_step, _time_up
    _here, _last_step, _time_up = True, None, False
    previous = signal.signal(signal.SIGALRM, _alarm)
    cpu = int(timeout) + CPU_SLACK
    zygote.limit_children({"RLIMIT_CPU": (cpu, cpu + 5)})
    try:
        try:
            signal.setitimer(signal.ITIMER_REAL, timeout)
            result = body()
        finally:
            signal.setitimer(signal.ITIMER_REAL, 0)
    except _TimeUp:
        result = _timed_out(_last_step, timeout)
    except BaseException:
        # After the alarm, whatever the check's clean-up raised on its way out (a `finally`
        # that asks the target process the alarm's unwinding closed: TargetClosed) is the
        # timeout's consequence, not a bug of the check: the code under grade hung.
        result = (_timed_out(_last_step, timeout) if _time_up
                  else Failure.grader_bug(traceback.format_exc()))  # a bug of the check itself
    finally:
        signal.signal(signal.SIGALRM, previous)
        _here, _time_up = False, False
        zygote.limit_children({})
    # No zygote.settle(): a target closed here was killed and reaped before close() returned,
    # one whose lease closed early the zygote ends on its own, and neither is ever our child.
    keep = {zygote.own_pid()} - {None}
    if own_children() - keep:  # a target spawned where the zygote failed, or its orphans
        end_strays(keep)
    return result


_killers: list = []  # what ends the watched judge's target processes (`on_time_up`)


def on_time_up(kill: Callable[[], None]) -> None:
    """Judge side: `kill` ends a process this judge started; a watched run's watchdog calls it
    when the run's time is up (kept only while a run is watched: a no-op elsewhere)."""
    if _watched:
        _killers.append(kill)
        if _time_up:  # started after the watchdog fired: ended at once too
            kill()


_watched = False  # a watched run is under way in this process
_deadline = 0.0  # when its watchdog fires (`starting` moves it)


_starting = 0  # target processes being started now, on any thread of the watched run
_lock = threading.Lock()


@contextlib.contextmanager
def starting():
    """Judge side: around a fresh interpreter's start, up to the moment it begins to import the
    code under grade (the target server's "loading": grader.harness.judge.target_client). That
    start-up (a fifth of a second, seconds on a loaded machine) does not count against a
    watched run's timeout, as the zygote's fork, which the fork path's timeouts count, takes
    milliseconds; the import of the code under grade counts on both paths. The watchdog does
    not fire while a start is under way, and the deadline moves on by its length (a no-op
    outside a watched run)."""
    global _starting, _deadline
    if not _watched:
        yield
        return
    began = time.monotonic()
    with _lock:
        _starting += 1
    try:
        yield
    finally:
        with _lock:
            _starting -= 1
            _deadline += time.monotonic() - began


_one_watched = threading.Lock()  # one watched run at a time in a process (its state is global)


def run_watched(body: Callable[[], Failure | None | dict], timeout: float,
                stop: threading.Event | None = None) -> Failure | None | dict:
    """`run` on the portable path, in this process: a watchdog thread ends the judge's target
    processes at `timeout` (`on_time_up`), then the run is timed out with its last step,
    whatever the judge made of their end. It may run on any thread (the grading process runs
    the preflight's judge on one of its own: grader.runner.spawned.WatchedPreflight); a second
    watched run waits for the first to end. `stop`, once set, ends it as its timeout would, at
    once (a run nobody will wait for any more)."""
    with _one_watched:
        return _run_watched(body, timeout, stop)


def _run_watched(body: Callable[[], Failure | None | dict], timeout: float,
                 stop: threading.Event | None) -> Failure | None | dict:
    global _here, _last_step, _time_up, _watched, _deadline
    _here, _last_step, _time_up, _watched = True, None, False, True
    _deadline = time.monotonic() + timeout
    done = threading.Event()

    def watchdog() -> None:
        global _time_up
        while not done.wait(max(_POLL, _deadline - time.monotonic()) if stop is None
                            else _POLL):
            if stop is not None and stop.is_set():
                break
            if time.monotonic() >= _deadline and not _starting:
                break
        else:
            return
        _time_up = True
        for kill in list(_killers):
            try:
                kill()
            except Exception:  # already ended, or closed meanwhile
                pass

    dog = threading.Thread(target=watchdog, name="judge-watchdog", daemon=True)
    dog.start()
    try:
        result = body()
    except BaseException:
        result = None if _time_up else Failure.grader_bug(traceback.format_exc())
    finally:
        done.set()
        dog.join()
        _killers.clear()
        _here, _watched = False, False
    if _time_up:
        result = _timed_out(_last_step, timeout)
    return result


def abandon(started: Started, keep: set[int] | frozenset = frozenset()) -> None:
    """End the judge `start` forked without its answer (the grade stops before it needs it),
    and sweep it as `finish` does."""
    _kill(started.pid, reap=False)  # (reaped by finish)
    finish(started, keep)


def _collect(pid: int, fd: int, timeout: float, token: str,
             whole: float | None = None) -> Failure | None:
    """Read the child's messages until its result, its end, or `timeout` more seconds (`whole`:
    the timeout a report names, counted from the fork). The pipe's end is not waited for: a
    process the code under grade forked may hold it open (it is swept)."""
    deadline = time.monotonic() + timeout
    timeout = timeout if whole is None else whole
    reader = _Messages(fd, token)
    status = None
    while reader.result is None:
        left = deadline - time.monotonic()
        if left <= 0:
            _kill(pid)
            return _timed_out(reader.last_step, timeout)
        if select.select([fd], [], [], min(left, _POLL))[0]:
            if not reader.read():
                break
            continue
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:  # ended without a result: read what it wrote before it went
            while select.select([fd], [], [], 0)[0] and reader.read():
                pass
            break
        status = None
    if status is None:
        status = _reap(pid, deadline)
    if reader.result is not None:
        data = reader.result.get("data")
        return data if data is not None else result_from_json(reader.result)
    if reader.forged:
        return Failure(Outcome.ERRORED, Kind.PROTOCOL, error=reader.forged, step=reader.last_step)
    if status is None:
        return _timed_out(reader.last_step, timeout)
    if os.WIFSIGNALED(status) and os.WTERMSIG(status) in LIMIT_SIGNALS:
        return Failure(Outcome.RESOURCE_LIMIT, Kind.RESOURCE_LIMIT,
                       error=LIMIT_SIGNALS[os.WTERMSIG(status)], step=reader.last_step)
    if os.WIFSIGNALED(status):
        how = {"signal": signal.Signals(os.WTERMSIG(status)).name}
    else:
        how = {"code": os.WEXITSTATUS(status)}
    return Failure(Outcome.ERRORED, Kind.EXITED, step=reader.last_step, **how)


_POLL = 0.05  # seconds between looks at whether the child has ended (when it says nothing)


class _Messages:
    """The child's lines on the pipe: the last step it announced, and its result. A line
    without this run's token was not written by the judge (the code under grade reached the
    pipe): it is never believed, and the check is errored if nothing else arrives."""

    def __init__(self, fd: int, token: str):
        self.fd, self.buffer, self.token = fd, b"", token
        self.last_step: dict | None = None
        self.result: dict | None = None
        self.forged: str | None = None

    def read(self) -> bool:
        """Read what is there; False at the pipe's end."""
        chunk = os.read(self.fd, 65536)
        if not chunk:
            return False
        *lines, self.buffer = (self.buffer + chunk).split(b"\n")
        if len(self.buffer) > 16 << 20:  # no line of the judge's is that long
            self.forged, self.buffer = "an endless line on the verdict pipe", b""
        for line in lines:
            try:
                message = json.loads(line)
                genuine = type(message) is dict and message.get("token") == self.token
            except ValueError:
                genuine = False
            if not genuine:
                self.forged = self.forged or "a line on the verdict pipe the judge did not write"
            elif "step" in message:
                self.last_step = message["step"]
            elif self.result is None and "result" in message:
                self.result = message["result"]
            elif self.result is None and type(message.get("data")) is dict:
                self.result = {"data": message["data"]}
        return True


def _timed_out(step: dict | None, timeout: float) -> Failure:
    return Failure(Outcome.TIMED_OUT, step=step, timeout=timeout)


def _reap(pid: int, deadline: float) -> int | None:
    # The child gave its result (or the pipe closed): it is exiting, or goes on running.
    pidfd = _pidfd(pid)
    try:
        while True:
            done, status = os.waitpid(pid, os.WNOHANG)
            if done:
                return status
            left = deadline - time.monotonic()
            if left <= 0:
                _kill(pid)
                return None
            if pidfd is None:
                time.sleep(0.002)
            else:  # readable once the child has ended: no polling
                select.select([pidfd], [], [], left)
    finally:
        if pidfd is not None:
            os.close(pidfd)


def _pidfd(pid: int) -> int | None:
    try:
        return os.pidfd_open(pid)
    except (AttributeError, OSError):  # not Linux 5.3+, or Python below 3.9
        return None


def _kill(pid: int, reap: bool = True) -> None:
    for target in (lambda: os.killpg(pid, signal.SIGKILL), lambda: os.kill(pid, signal.SIGKILL)):
        try:
            target()
        except (ProcessLookupError, PermissionError):
            pass
    if not reap:
        return
    try:
        os.waitpid(pid, 0)
    except ChildProcessError:
        pass


# -- what a check may use -------------------------------------------------------------------------
#: Limits of a check's process and every process it starts (they are inherited): address space,
#: the size of one file it writes, and CPU seconds beyond its wall-clock timeout (a safety net
#: for code that spins in several threads). Names as in the catalogue's limit.* words.
MEMORY_BYTES = 2 * 1024 ** 3
FILE_BYTES = 256 * 1024 ** 2
CPU_SLACK = 10
LIMIT_SIGNALS = {getattr(signal, "SIGXCPU", -1): "cpu-time",
                 getattr(signal, "SIGXFSZ", -2): "file-size"}


def _limit_resources(timeout: float | None) -> None:
    """Child side: set the limits (where the platform has them; never raise). No CPU limit
    without `timeout` (a lane: its CPU time adds up over many checks)."""
    try:
        import resource
    except ImportError:  # not on this platform
        return
    limits = [(resource.RLIMIT_AS, MEMORY_BYTES, MEMORY_BYTES),
              (resource.RLIMIT_FSIZE, FILE_BYTES, FILE_BYTES)]
    if timeout is not None:
        cpu = int(timeout) + CPU_SLACK
        limits.append((resource.RLIMIT_CPU, cpu, cpu + 5))
    for which, soft, hard in limits:
        try:
            resource.setrlimit(which, (soft, hard))
        except (ValueError, OSError):
            pass


def become_lane() -> None:
    """Make this process (a forked lane of the runner, in its own folder: workroot.enter) a
    place where judges may run `inline`: a subreaper of its own, not dumpable, stdin from
    /dev/null, the memory and file-size limits of a forked judge (the CPU limit is each target
    process's, given by `_run_here`), and jailed as a forked judge is: it writes only its own
    folder (`jail.enter_judge`)."""
    become_subreaper(again=True)
    not_dumpable()
    redirect_stdin()
    _limit_resources(None)
    jail.enter_judge([workroot.folder()])
