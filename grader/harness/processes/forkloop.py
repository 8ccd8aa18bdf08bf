"""A fork server's loop, shared by the zygote (`grader.harness.target.zygote_server`) and the batch's
fork server (`grader.instructor.fork_server`), and what both sides of such a server's door use:
a request is one datagram with its fds, the lease first; an answer is one line on the lease
(`send_answer`, `read_line`). The protocol and the zygote's life are told in
`grader.harness.processes.zygote`.
"""

from __future__ import annotations

import errno
import json
import os
import select
import signal
import socket
import sys
import time
import traceback
from typing import Callable

try:
    import resource
except ImportError:  # not on this platform: no zygote either (zygote.supported())
    resource = None

#: How long a fork server waits for SIGKILLed children before it answers settle/exit anyway.
REAP_TIMEOUT = 5.0
MAX_REQUEST = 1 << 18  # bytes in one request datagram (an environment of a few KB is typical)
_PR_SET_PDEATHSIG = 1
_PR_SET_DUMPABLE = 4
#: Environment variables an interpreter reads at start-up: a fork cannot apply other values.
_STARTUP_PREFIXES = ("PYTHON", "LC_")
_STARTUP_NAMES = ("LANG", "HOME")  # HOME: the user site-packages on sys.path
#: The resource limits a start request carries (by RLIMIT_ name).
RLIMITS = tuple(name for name in dir(resource) if name.startswith("RLIMIT_")) if resource else ()


def read_line(sock: socket.socket, timeout: float, with_fds: bool = False):
    """One answer line from the zygote, and what came after it (and, `with_fds`, the fds that
    came with it); OSError on its end or on the timeout."""
    deadline = time.monotonic() + timeout
    data, fds = b"", []
    try:
        while b"\n" not in data:
            left = deadline - time.monotonic()
            if left <= 0 or not readable(sock, left):
                raise TimeoutError("the zygote did not answer in time")
            chunk, more, _, _ = socket.recv_fds(sock, 256, 1)
            fds += more
            if not chunk:
                raise ConnectionResetError("the zygote closed the lease without an answer")
            data += chunk
            if len(data) > 4096:
                raise ConnectionResetError("an answer without an end")
    except BaseException:
        close_fds(fds)
        raise
    line, rest = data.split(b"\n", 1)
    if with_fds:
        return line.decode("ascii", "replace"), rest, fds
    close_fds(fds)
    return line.decode("ascii", "replace"), rest


def readable(fd, timeout: float | None) -> bool:
    """Whether `fd` (an int or a socket) is readable within `timeout` seconds (None: wait);
    poll, not select: judge processes may hold fds above FD_SETSIZE."""
    poller = select.poll()
    poller.register(fd, select.POLLIN)
    return bool(poller.poll(None if timeout is None else max(0, int(timeout * 1000 + 0.999))))


def startup_env(env) -> dict:
    return {k: v for k, v in env.items()
            if k.startswith(_STARTUP_PREFIXES) or k in _STARTUP_NAMES}



class Child:
    def __init__(self, pid: int, lease: socket.socket):
        self.pid = pid
        self.lease: socket.socket | None = lease
        self.killed = False


class ForkLoop:
    """A fork server's loop (the zygote's, and the batch's fork server's:
    grader.instructor.fork_server): one thread, poll() over the door, the signal wake-up pipe
    and the leases; it never blocks on anything but them (and bounded waits for SIGKILLed
    children). A request is one datagram on the door with its fds, the lease first; "exit" is
    served here, every other op by `dispatch`, which a server defines (False: not an op of
    its own, the request is dropped). `fork` starts a child and hands its pid out on the lease."""

    MAX_FDS = 8
    #: A child's exit code when what it runs raises (as an interpreter ends on an uncaught one).
    CRASH_CODE = 1

    def __init__(self, door: socket.socket):
        self.door = door
        self.children: dict[int, Child] = {}  # pid -> child, until reaped
        self.leases: dict[int, Child] = {}  # lease fd -> child, until the lease closes
        self.ending = False
        self.wake_r, self.wake_w = os.pipe()
        os.set_blocking(self.wake_w, False)
        os.set_blocking(self.wake_r, False)
        signal.set_wakeup_fd(self.wake_w)
        signal.signal(signal.SIGCHLD, _nothing)
        signal.signal(signal.SIGTERM, self._terminate)
        signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is for the requester; it ends us
        self.poll = select.poll()
        self.poll.register(self.door, select.POLLIN)
        self.poll.register(self.wake_r, select.POLLIN)

    def _terminate(self, signum, frame) -> None:
        self.ending = True

    def run(self) -> int:
        while not self.ending:
            for fd, events in self.poll.poll():
                if fd == self.wake_r:
                    _drain(self.wake_r)
                elif fd == self.door.fileno():
                    try:
                        self.serve_door()
                    except Exception:  # a bug here must not end every later start: say it
                        traceback.print_exc()
                elif fd in self.leases:
                    self.serve_lease(fd)
                if self.ending:
                    break
            self.reap()
        self.end_all()
        return 0

    # -- requests ----------------------------------------------------------------------------------
    def serve_door(self) -> None:
        try:
            data, fds, flags, _ = socket.recv_fds(self.door, MAX_REQUEST, self.MAX_FDS)
        except InterruptedError:
            return
        except OSError:
            self.ending = True
            return
        if not data and not fds:  # every copy of the requesters' end is closed
            self.ending = True
            return
        if not fds or flags & (socket.MSG_TRUNC | socket.MSG_CTRUNC):
            close_fds(fds)
            return
        lease = socket.socket(fileno=fds[0])
        try:
            request = json.loads(data.decode("utf-8"))
            op = request["op"]
        except (ValueError, KeyError, TypeError):
            op = None
        if op == "exit" and len(fds) == 1:
            self.end_all()
            send_answer(lease, "bye")
            lease.close()
            self.ending = True
        elif op is None or not self.dispatch(op, request, lease, fds[1:]):
            lease.close()
            close_fds(fds[1:])

    def dispatch(self, op: str, request: dict, lease: socket.socket, fds: list[int]) -> bool:
        return False

    def fork(self, lease: socket.socket, fds: list[int], become: Callable[[], int]) -> None:
        """Fork a child that runs `become()` and exits with the code it returns (it never
        returns into this loop); `fds` are closed here once it is forked. The lease gets
        `pid N` with a pidfd, or `error E`; a lease already closed kills the child."""
        for stream in (sys.stdout, sys.stderr):
            try:
                stream.flush()
            except (OSError, ValueError, AttributeError):
                pass
        try:
            pid = os.fork()
        except OSError as exc:
            send_answer(lease, f"error {errno.errorcode.get(exc.errno, exc.errno)}")
            lease.close()
            close_fds(fds)
            return
        if pid == 0:  # the child: never returns from here
            code = self.CRASH_CODE
            try:
                code = become()
            except SystemExit as exc:  # as an interpreter ends on an uncaught SystemExit
                code = exit_code(exc.code)
            except BaseException:  # as an interpreter ends on an uncaught exception
                try:
                    traceback.print_exc()
                except BaseException:
                    pass
            finally:
                for stream in (sys.stdout, sys.stderr):
                    try:
                        stream.flush()
                    except BaseException:
                        pass
                os._exit(code)
        close_fds(fds)
        child = Child(pid, lease)
        self.children[pid] = child
        try:
            pidfds = [os.pidfd_open(pid)]  # unreaped, so surely this child
        except (AttributeError, OSError):
            pidfds = []
        answered = send_answer(lease, f"pid {pid}", pidfds)
        close_fds(pidfds)
        if answered:
            self.leases[lease.fileno()] = child
            self.poll.register(lease, select.POLLIN)
        else:  # the requester is gone already
            child.lease = None
            lease.close()
            self.kill(child)

    def serve_lease(self, fd: int) -> None:
        child = self.leases[fd]
        try:  # never waits: `settle` may have served this event already in its own poll
            data = child.lease.recv(64, socket.MSG_DONTWAIT)
        except BlockingIOError:
            return
        except OSError:
            data = b""
        if not data:  # the requester closed its end: it is done with the child, or it ended
            self.drop_lease(child)
        self.kill(child)  # "k", or the lease closed: the status follows when it is reaped

    def drop_lease(self, child: Child) -> None:
        if child.lease is not None:
            self.leases.pop(child.lease.fileno(), None)
            try:
                self.poll.unregister(child.lease)
            except (KeyError, ValueError):
                pass
            child.lease.close()
            child.lease = None

    def leave_loop(self, lease: socket.socket, out_fd: int | None,
                   err_fd: int | None = None) -> None:
        """In a forked child, first: what Popen does before exec, up to closing fds. A session
        of its own; signal handlers as a fresh interpreter has them; dumpable again (as an
        exec'd process is; the server itself is not); the loop's sockets let go of (their fds
        are closed by the caller; no socket object may close a reused fd); stdin on /dev/null,
        stdout on `out_fd` (None: /dev/null), stderr on `err_fd` (None: as stdout)."""
        os.setsid()
        signal.set_wakeup_fd(-1)
        for signum in (signal.SIGCHLD, signal.SIGTERM):
            signal.signal(signum, signal.SIG_DFL)
        signal.signal(signal.SIGINT, signal.default_int_handler)
        prctl(_PR_SET_DUMPABLE, 1)
        for sock in [self.door, lease] + [c.lease for c in self.children.values() if c.lease]:
            sock.detach()
        null = os.open(os.devnull, os.O_RDWR)
        os.dup2(null, 0)
        os.dup2(out_fd if out_fd is not None else null, 1)
        os.dup2(err_fd if err_fd is not None else out_fd if out_fd is not None else null, 2)

    def kill(self, child: Child) -> None:
        raise NotImplementedError

    def reap(self) -> None:
        raise NotImplementedError

    def end_all(self) -> None:
        raise NotImplementedError


def exit_code(code) -> int:
    if code is None:
        return 0
    if type(code) is int:
        return code & 0xFF
    try:
        print(code, file=sys.stderr)
    except BaseException:
        pass
    return 1



def send_answer(sock: socket.socket, line: str, fds: list[int] = ()) -> bool:
    try:
        sock.setblocking(False)
        data = line.encode("ascii") + b"\n"  # a few bytes into an empty buffer
        if fds:
            socket.send_fds(sock, [data], fds)
        else:
            sock.send(data)
        return True
    except OSError:
        return False
    finally:
        try:
            sock.setblocking(True)
        except OSError:
            pass


def close_fds(fds) -> None:
    for fd in fds:
        try:
            os.close(fd)
        except OSError:
            pass


def _drain(fd: int) -> None:
    try:
        while os.read(fd, 512):
            pass
    except OSError:
        pass


def _nothing(signum, frame) -> None:
    pass


def prctl(option: int, value: int) -> bool:
    try:
        from .jail import c_library  # loaded once: the children the zygote forks share it

        return c_library().prctl(option, value, 0, 0, 0) == 0
    except (OSError, AttributeError):
        return False


def server_door(argv: list[str] | None, module: str) -> tuple[socket.socket | None, int]:
    """A fork server's start (`python -m MODULE --door FD --parent PID [--pdeathsig]`): die
    with the parent if asked, not dumpable (a target of the same user cannot read or write its
    memory); its door, or None and the exit code (2: a wrong command line; 0: the parent has
    ended already)."""
    args = list(sys.argv[1:] if argv is None else argv)
    door_fd = parent = None
    pdeathsig = False
    while args:
        arg = args.pop(0)
        if arg == "--door" and args:
            door_fd = int(args.pop(0))
        elif arg == "--parent" and args:
            parent = int(args.pop(0))
        elif arg == "--pdeathsig":
            pdeathsig = True
        else:
            break
    if door_fd is None or parent is None:
        print(f"usage: python -m {module} --door FD --parent PID [--pdeathsig]", file=sys.stderr)
        return None, 2
    if pdeathsig:
        prctl(_PR_SET_PDEATHSIG, signal.SIGTERM)
    if os.getppid() != parent:  # the parent ended before we could watch it
        return None, 0
    prctl(_PR_SET_DUMPABLE, 0)
    return socket.socket(fileno=door_fd), 0

