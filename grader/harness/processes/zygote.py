"""The zygote's judge side: a prepared process that forks target servers, so that starting a
target process costs a fork, not an interpreter's start-up (docs/DEVELOPING.md has the figures).

Lives here: `start` (once per owner process, lazily on the first `launch`), `launch` (falls
back to `launch.spawn` where the zygote cannot serve a start) and `launch_forked` (never falls
back), `ForkedTarget` (a forked target, as much of a Popen as TargetProcess uses), `settle` and
`stop`.
The zygote process itself is `grader.harness.target.zygote_server`, on the fork loop it shares with the
batch's fork server (`grader.harness.processes.forkloop`). The door, the lease, what leaks from one child
to the next: docs/protocol.md, "The zygote".
"""

from __future__ import annotations

import atexit
import errno
import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time

from .forkloop import (MAX_REQUEST, REAP_TIMEOUT, RLIMITS, close_fds, read_line, readable,
                       startup_env)
from . import portable
from .launch import LAUNCH_ENV, spawn

try:
    import resource
except ImportError:  # not on this platform: no zygote either (see supported())
    resource = None

#: How long a requester waits for the zygote's `pid` (its own start-up included, on the first
#: request) before it takes the zygote as unusable and spawns instead.
ANSWER_TIMEOUT = 10.0
#: How long close() waits for the zygote to kill a target and say so before it kills it itself.
KILL_ANSWER_TIMEOUT = 2.0


class ZygoteUnavailable(OSError):
    """The zygote cannot serve this start (the reason says why); spawn instead."""


def supported() -> bool:
    """Whether this platform can run a zygote at all (Linux, AF_UNIX fd passing)."""
    return (sys.platform.startswith("linux") and hasattr(socket, "send_fds")
            and hasattr(socket, "SOCK_SEQPACKET") and hasattr(os, "fork") and resource is not None)


class _Handle:
    """A zygote as the owner started it, and as the owner's forks inherit it."""

    def __init__(self, python: str):
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        try:
            command = [python, "-m", "grader.harness.target.zygote_server",
                       "--door", str(theirs.fileno()), "--parent", str(os.getpid())]
            if threading.current_thread() is threading.main_thread():
                command.append("--pdeathsig")  # not from a thread: it fires when *that* ends
            self.process = subprocess.Popen(
                command, pass_fds=(theirs.fileno(),), stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, close_fds=True)
        except BaseException:
            ours.close()
            raise
        finally:
            theirs.close()
        self.door = ours
        self.owner = os.getpid()
        self.python = python
        self.startup_env = startup_env(os.environ)
        self.ids = (os.geteuid(), os.getegid())
        self.broken: str | None = None

    def alive(self) -> bool:
        if self.broken is not None:
            return False
        if self.owner == os.getpid() and self.process.poll() is not None:
            self.broken = f"the zygote ended (status {self.process.returncode})"
            return False
        return True

    def request(self, message: dict, fds: list[int]) -> socket.socket:
        """Send one request with a fresh lease; return our end of the lease."""
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            data = json.dumps(message, separators=(",", ":")).encode("utf-8")
            if len(data) > MAX_REQUEST:
                raise ZygoteUnavailable("the request is too large for the zygote")
            try:
                socket.send_fds(self.door, [data], [theirs.fileno(), *fds])
            except OSError as exc:
                if exc.errno != errno.EMSGSIZE:
                    self.broken = f"the zygote's door: {exc}"
                raise ZygoteUnavailable(f"cannot reach the zygote: {exc}") from None
        except BaseException:
            ours.close()
            raise
        finally:
            theirs.close()
        return ours

    def stop(self) -> None:
        """Owner only: ask the zygote to end its children and itself; wait for it (bounded)."""
        if self.owner != os.getpid():
            return
        if self.process.poll() is None:
            try:
                lease = self.request({"op": "exit"}, [])
                try:
                    read_line(lease, REAP_TIMEOUT + 1 if self.broken is None else 1.0)
                finally:
                    lease.close()
            except OSError:
                pass
        self.door.close()
        try:
            self.process.wait(timeout=REAP_TIMEOUT + 1 if self.broken is None else 1.0)
        except subprocess.TimeoutExpired:  # hung or stopped: its children become orphans
            self.process.kill()
            self.process.wait()
        self.broken = self.broken or "stopped"


_lock = threading.Lock()
_handle: _Handle | None = None
_atexit_registered = False
_forked = False  # this process is a fork of one that had this module (a sandbox's judge)


def _after_fork_in_child() -> None:
    global _lock, _forked
    _lock = threading.Lock()  # a thread of the parent may have held it at the fork
    _forked = True


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork_in_child)


def as_fresh_interpreter() -> None:
    """This process starts a zygote of its own on its first launch, as a fresh interpreter
    would, though it is a fork of one that had this module (a grade forked by the batch's fork
    server, grader.instructor.fork_server)."""
    global _forked
    _forked = False


def start(python: str = sys.executable) -> bool:
    """Make sure a zygote runs for this process (idempotent; the owner restarts a dead one, a
    fork of the owner never does). False if none can run here, or LAUNCH_ENV says "spawn". The
    grading process calls it before it forks its checks' judges, so that they all share it."""
    if os.environ.get(LAUNCH_ENV) == "spawn" or portable.forkless():
        return False
    return _usable(python, may_start=True) is not None


def _usable(python: str, may_start: bool) -> _Handle | None:
    global _handle, _atexit_registered
    if not supported():
        return None
    with _lock:
        if _handle is not None:
            if _handle.alive():
                return _handle
            if _handle.owner != os.getpid():
                return None  # inherited, and broken: this process spawns
            _handle.stop()
            _handle = None
        if not may_start:
            return None
        try:
            _handle = _Handle(python)
        except OSError:
            return None
        if not _atexit_registered:
            atexit.register(stop)
            _atexit_registered = True
        return _handle


def own_pid() -> int | None:
    """The pid of the zygote this process started (a child of it, which a sweep of this
    process's children must leave alone), or None."""
    handle = _handle
    if handle is None or handle.owner != os.getpid():
        return None
    return handle.process.pid


def stop() -> None:
    """End this process's zygote and its children, if this process started it (a fork of the
    owner leaves it alone)."""
    global _handle
    with _lock:
        handle = _handle
        if handle is None or handle.owner != os.getpid():
            return
        _handle = None
    handle.stop()


def settle(timeout: float = REAP_TIMEOUT + 1) -> None:
    """Return once the zygote has killed and reaped every target whose requester has gone (a
    judge killed on a timeout): after it, a sweep finds their detached children among its
    orphans. A no-op without a zygote; a zygote that does not answer is taken as broken (the
    owner's next start() replaces it)."""
    handle = _handle
    if handle is None or not handle.alive():
        return
    try:
        lease = handle.request({"op": "settle"}, [])
    except OSError:
        return
    try:
        read_line(lease, timeout)
    except OSError as exc:
        handle.broken = f"no answer to settle: {exc}"
    finally:
        lease.close()


def launch(spec: str, *, python: str = sys.executable, cwd: str | None = None,
           env: dict | None = None, log: str | None = None):
    """A launcher for TargetProcess: the zygote forks the target server; where it cannot, a
    fresh interpreter starts it (`launch.spawn`). A process starts its zygote on its
    first launch, unless it is a fork of a process that had this module and gave it none: a
    check's judge, forked for one check, would pay for a zygote to start one or two targets
    (the grading process calls start() before forking them)."""
    try:
        return _launch(spec, python, cwd, env, log, may_start=not _forked)
    except ZygoteUnavailable:
        return spawn(spec, python=python, cwd=cwd, env=env, log=log)


def launch_forked(spec: str, *, python: str = sys.executable, cwd: str | None = None,
                  env: dict | None = None, log: str | None = None):
    """A launcher for TargetProcess that only forks (starting a zygote if this process has
    none): ZygoteUnavailable where it cannot. Takes and returns what `launch.spawn`
    does."""
    return _launch(spec, python, cwd, env, log, may_start=True)


def _launch(spec: str, python: str, cwd, env: dict | None, log: str | None, may_start: bool):
    handle = _usable(python, may_start)
    if handle is None:
        raise ZygoteUnavailable("no zygote can run here")
    env = dict(os.environ if env is None else env)
    if any(type(k) is not str or type(v) is not str for k, v in env.items()):
        raise ZygoteUnavailable("an environment that is not str to str")
    why = _mismatch(handle, python, env)
    if why:
        raise ZygoteUnavailable(why)
    cwd = os.path.abspath(os.fspath(cwd)) if cwd is not None else os.getcwd()
    if not os.path.isdir(cwd):  # what Popen raises for a bad cwd, before anything starts
        raise FileNotFoundError(2, "No such file or directory", cwd)
    message = {"op": "start", "spec": spec, "cwd": cwd, "env": env, "umask": _umask(),
               "limits": _limits()}
    to_target, out = os.pipe()
    in_, from_target = os.pipe()
    log_fd = os.open(log, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_CLOEXEC, 0o666) \
        if log else None
    lease, pidfds = None, []
    try:
        lease = handle.request(message, [to_target, from_target]
                               + ([log_fd] if log_fd is not None else []))
        answer, rest, pidfds = read_line(lease, ANSWER_TIMEOUT, with_fds=True)
        if answer.startswith("error "):  # this start failed (fork: EAGAIN, ENOMEM), not the zygote
            raise ZygoteUnavailable(f"the zygote could not fork: {answer[6:60]}")
        if not answer.startswith("pid ") or not answer[4:].isdigit():
            handle.broken = f"the zygote answered {answer[:40]!r}"
            raise ZygoteUnavailable(handle.broken)
        child = ForkedTarget(int(answer[4:]), lease, rest, pidfds[0] if pidfds else None)
    except BaseException as exc:
        close_fds([in_, out] + pidfds)
        if lease is not None:
            lease.close()  # if the zygote forks late, the closed lease gets the child killed
        if isinstance(exc, OSError) and not isinstance(exc, ZygoteUnavailable):
            handle.broken = f"no answer from the zygote: {exc}"
            raise ZygoteUnavailable(handle.broken) from None
        raise
    finally:
        for fd in (to_target, from_target) + ((log_fd,) if log_fd is not None else ()):
            os.close(fd)
    return child, out, in_


class ForkedTarget:
    """A target process the zygote forked, as much of a Popen as TargetProcess uses: `pid`,
    `returncode`, `poll()`, `wait(timeout)`; `kill_group()` (SIGKILL its process group and wait
    for its status: the zygote does it, as it alone knows whether the pid is still its unreaped
    child) and `kill_now()` (SIGKILL it and its group from any thread, signal only, through the
    pidfd the zygote gave with the pid). Only `kill_now` may be called from another thread."""

    def __init__(self, pid: int, lease: socket.socket, buffered: bytes = b"",
                 pidfd: int | None = None):
        self.pid = pid
        self.returncode: int | None = None
        self.args = ["<forked by the zygote>"]
        self._lease: socket.socket | None = lease
        self._buffer = buffered
        self._lost = False  # the zygote ended without telling how the child did
        # The zygote's, taken before it could reap the child: that child, alive or dead. Kept
        # open as long as this object lives (kill_now may use it from any thread).
        self._pidfd = pidfd

    def poll(self) -> int | None:
        self._read(0)
        return self.returncode

    def wait(self, timeout: float | None = None) -> int | None:
        deadline = None if timeout is None else time.monotonic() + timeout
        while self.returncode is None and self._lease is not None:
            left = None if deadline is None else deadline - time.monotonic()
            if left is not None and left <= 0:
                raise subprocess.TimeoutExpired(self.args, timeout)
            self._read(left)
        return self.returncode

    def kill_group(self) -> None:
        if self.returncode is not None:
            return
        if self._lease is not None:
            try:
                self._lease.sendall(b"k")
            except OSError:
                self._read(0)
            else:  # the status follows at once, unless the zygote is hung (stopped)
                deadline = time.monotonic() + KILL_ANSWER_TIMEOUT
                while self._lease is not None and time.monotonic() < deadline:
                    self._read(max(0.0, deadline - time.monotonic()))
                if self._lease is not None:
                    self._lost = True
                    self._release()
        if self.returncode is None and self._lost:
            self.kill_now()  # the zygote is gone or hung; the child may run on

    def kill_now(self) -> None:
        """SIGKILL the child's process group and the child, only while the pidfd shows it
        alive (then its pid, and the group it leads, are still its own). Signal only: from any
        thread; the status comes, as ever, from the zygote."""
        if self.returncode is not None:
            return
        pidfd = self._pidfd
        if pidfd is None:  # no pidfd (a kernel before 5.3): as the Popen path does
            kills = (lambda: os.killpg(self.pid, signal.SIGKILL),
                     lambda: os.kill(self.pid, signal.SIGKILL))
        elif readable(pidfd, 0):  # it has ended: its pid may be reaped, reused
            return
        else:
            kills = (lambda: os.killpg(self.pid, signal.SIGKILL),
                     lambda: signal.pidfd_send_signal(pidfd, signal.SIGKILL))
        for kill in kills:
            try:
                kill()
            except (OSError, AttributeError):
                pass

    def _read(self, timeout: float | None) -> None:
        if self._lease is None:
            return
        chunk = None
        if b"\n" not in self._buffer:
            if not readable(self._lease, timeout):
                return
            try:
                chunk = self._lease.recv(256)
            except OSError:
                chunk = b""
            self._buffer += chunk
        if b"\n" in self._buffer:
            line = self._buffer.split(b"\n", 1)[0].decode("ascii", "replace")
            if line.startswith("status ") and line[7:].lstrip("-").isdigit():
                self.returncode = os.waitstatus_to_exitcode(int(line[7:]))
            else:
                self._lost = True
            self._release()
        elif not chunk:  # the zygote ended first
            self._lost = True
            self._release()

    def _release(self) -> None:
        if self._lease is not None:
            self._lease.close()
            self._lease = None

    def __del__(self):
        if getattr(self, "_pidfd", None) is not None:
            try:
                os.close(self._pidfd)
            except OSError:
                pass


def _mismatch(handle: _Handle, python: str, env: dict) -> str | None:
    if python != handle.python:
        return f"another python ({python})"
    if startup_env(env) != handle.startup_env:
        return "an environment that differs in what an interpreter reads at start-up"
    if (os.geteuid(), os.getegid()) != handle.ids:
        return "another user or group"
    return None


def _umask() -> int | None:
    """This process's umask without setting it (os.umask would, for a moment, for all threads)."""
    try:  # read as bytes: a text file would look its codec up, in every judge (a fork)
        with open("/proc/self/status", "rb") as status:
            for line in status:
                if line.startswith(b"Umask:"):
                    return int(line.split()[1], 8)
    except (OSError, ValueError, IndexError):
        pass
    return None


def _limits() -> list:
    """This process's limits, as a Popen child inherits them, but those `limit_children` sets."""
    limits = []
    for name in RLIMITS:
        try:
            soft, hard = _child_limits.get(name) or resource.getrlimit(getattr(resource, name))
        except (ValueError, OSError):
            continue
        limits.append([name, soft, hard])
    return limits


_child_limits: dict[str, tuple[int, int]] = {}


def limit_children(limits: dict[str, tuple[int, int]]) -> None:
    """The limits the targets this process has forked from now on get in place of its own,
    by RLIMIT_ name ({}: its own again): a judge run in a lane gives its targets the CPU limit a
    forked judge would have had and they inherited (grader.harness.processes.sandbox)."""
    global _child_limits
    _child_limits = dict(limits)
