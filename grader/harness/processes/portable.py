"""The portable path: a grade where the interpreter cannot fork judges and targets as the Linux
path does (Windows, macOS: docs/DEVELOPING.md, "The portable path"), chosen by what this
interpreter can do (`forkless`), never by the platform's name.

On it every process is a fresh interpreter (`subprocess.Popen`, no `pass_fds`, no process
group, no session) that speaks the same JSON lines as its forked twin over its own stdin and
stdout, the only handles Windows lets a child inherit: the target server (`spawn_target`, a
launcher as `launch.spawn` is) and the runner's spawned lanes (grader.runner.spawned, started
with `Spawned`). A pipe is read by a thread of its own (`Reader`): `select` takes sockets only on
Windows. A process is ended with `Popen.kill`; a judge's timeout is a watchdog thread
(grader.harness.processes.sandbox), not SIGALRM.

May import: the standard library only (it is loaded before anything POSIX-only could be).
"""

from __future__ import annotations

import atexit
import functools
import json
import os
import queue
import subprocess
import sys
import threading

#: "1": take the portable path even where the fork path could run (the parity test, bench
#: --portable); anything else: chosen by `fork_path_usable`.
PORTABLE_ENV = "LEASELAB_PORTABLE"


def forkless() -> bool:
    """Whether this grade takes the portable path (read at each call: PORTABLE_ENV)."""
    return os.environ.get(PORTABLE_ENV) == "1" or not fork_path_usable()


@functools.lru_cache(maxsize=None)
def fork_path_usable() -> bool:
    """Whether this interpreter has everything the fork path stands on: `os.fork`, process
    groups (`os.killpg`, `os.setpgid`), SIGALRM timers, fd passing (`socket.send_fds`, the
    zygote's door), `fcntl` and `resource`, and the C library's `prctl` (the subreaper and the
    death signal that keep its processes from outliving it). macOS has fork but no prctl (and
    fork after threads is not safe there): it takes the portable path, as Windows does."""
    import signal
    import socket

    if not all((hasattr(os, "fork"), hasattr(os, "killpg"), hasattr(os, "setpgid"),
                hasattr(signal, "setitimer"), hasattr(signal, "SIGALRM"),
                hasattr(socket, "send_fds"))):
        return False
    try:
        import fcntl  # noqa: F401
        import resource  # noqa: F401
    except ImportError:
        return False
    try:
        from .jail import c_library

        c_library().prctl  # noqa: B018
    except Exception:  # no C library to load (Windows), or no prctl in it (macOS)
        return False
    return True


class Reader:
    """A thread that reads a pipe (a file object opened unbuffered in binary) to its end and
    hands the chunks over: `get(timeout)` gives the next one, b"" at the end, or raises
    queue.Empty. The thread closes the pipe at its end (nobody else does: no fd is closed
    under a read)."""

    def __init__(self, stream, name: str):
        self.stream = stream
        self.chunks: queue.SimpleQueue = queue.SimpleQueue()
        self.ended = False
        self.thread = threading.Thread(target=self._pump, name=name, daemon=True)
        self.thread.start()

    def _pump(self) -> None:
        try:
            fd = self.stream.fileno()
            while True:
                chunk = os.read(fd, 1 << 16)
                if not chunk:
                    break
                self.chunks.put(chunk)
        except (OSError, ValueError):
            pass
        finally:
            try:
                self.stream.close()
            except OSError:
                pass
            self.chunks.put(b"")

    def get(self, timeout: float | None) -> bytes:
        if self.ended:
            return b""
        chunk = self.chunks.get(timeout=timeout)
        self.ended = not chunk
        return chunk


class Lines:
    """JSON lines (bytes, without their newline) read from a `Reader`; None at the end."""

    def __init__(self, reader: Reader):
        self.reader, self.buffer = reader, b""

    def get(self, timeout: float | None) -> bytes | None:
        """The next line, None at the pipe's end, queue.Empty after `timeout` seconds."""
        while b"\n" not in self.buffer:
            chunk = self.reader.get(timeout)
            if not chunk:
                return None
            self.buffer += chunk
        line, _, self.buffer = self.buffer.partition(b"\n")
        return line


#: How a fresh interpreter runs a target server: `python -m grader.harness.target ARGS`, the
#: server's arguments (grader.harness.target.__main__: the server imported once, the collector
#: off while it imports).
TARGET_SERVER = "grader.harness.target"


def python_command(module: str, *args: str, python: str = sys.executable) -> list[str]:
    return [python, "-m", module, *args]


class Spawned:
    """A fresh interpreter running `python -m module args`, talking JSON lines over its stdin
    (ours to write: `send`) and its stdout (`lines`); its stderr is ours."""

    def __init__(self, module: str, *args: str, cwd: str | None = None,
                 env: dict | None = None):
        self.process = subprocess.Popen(python_command(module, *args), stdin=subprocess.PIPE,
                                        stdout=subprocess.PIPE, cwd=cwd, env=env, bufsize=0)
        self.pid = self.process.pid
        self.lines = Lines(Reader(self.process.stdout, f"spawned-{self.pid}"))

    def send(self, line: bytes) -> bool:
        """Write one line (False: it is gone, or stopped reading)."""
        try:
            self.process.stdin.write(line.rstrip(b"\n") + b"\n")
            self.process.stdin.flush()
            return True
        except (OSError, ValueError):
            return False

    def close_input(self) -> None:
        try:
            self.process.stdin.close()
        except OSError:
            pass

    def end(self, wait: float = 0.0) -> None:
        """Close its stdin (an idle process then ends on its own); kill it if it has not ended
        within `wait` seconds; reap it."""
        self.close_input()
        try:
            self.process.wait(timeout=wait)
            return
        except subprocess.TimeoutExpired:
            pass
        kill(self.process)


def kill(process) -> None:
    """End a process we spawned and reap it: `Popen.kill` (SIGKILL, TerminateProcess)."""
    try:
        process.kill()
    except OSError:
        pass
    try:
        process.wait(timeout=10)
    except subprocess.TimeoutExpired:  # stuck in the kernel: leave it
        pass


class SpawnedTarget:
    """A target server started by `spawn_target`: as much of a Popen as TargetProcess uses
    (`pid`, `returncode`, `poll`, `wait`, `kill`) and `reader`, the thread that reads its stdout
    (TargetProcess reads that instead of select on a fd). Killed by us, it ended as SIGKILL
    would say on POSIX (-9), whatever the platform made of `Popen.kill` (Windows: exit code 1),
    so that a kill reads the same to the judge everywhere."""

    def __init__(self, process: subprocess.Popen):
        self.popen = process
        self.pid = process.pid
        self.reader = Reader(process.stdout, f"target-{process.pid}")
        self.killed = False

    @property
    def returncode(self) -> int | None:
        code = self.popen.returncode
        return KILLED if self.killed and code is not None and code >= 0 else code

    def poll(self) -> int | None:
        self.popen.poll()
        return self.returncode

    def wait(self, timeout: float | None = None) -> int | None:
        self.popen.wait(timeout)
        return self.returncode

    def kill(self) -> None:
        if self.popen.returncode is not None:  # reaped already: the pid may be another's
            return
        self.killed = True
        try:
            self.popen.kill()
        except OSError:
            pass


KILLED = -9  # a process ended by SIGKILL, as Popen says on POSIX


#: What of a target's environment a waiting spare is told with its spec, not started with: they
#: name the target's own folders (TMPDIR...) and jail, which differ from one target to the next.
LATE_ENV = ("TMPDIR", "SQLITE_TMPDIR", "TEMP", "TMP", "LEASELAB_JAIL_WRITE")

_spares: dict[tuple, list[subprocess.Popen]] = {}
_spares_lock = threading.Lock()
_replenish = True


def spares_wanted(wanted: bool) -> None:
    """Whether `spawn_target` starts the next spare when it takes one (yes, until told
    otherwise): a spawned lane told that its unit is the grade's last (grader.runner.spawned)
    says no, and its target processes then take the spare that waits, if any, and start no
    other for a target process that will not come."""
    global _replenish
    _replenish = wanted


def spawn_target(spec: str, *, python: str = sys.executable, cwd: str | None = None,
                 env: dict | None = None, log: str | None = None):
    """A launcher (grader.harness.processes.launch): the target server in a fresh interpreter
    that talks over its stdin and stdout (`--stdio`). Returns (process, the fd the judge writes
    requests to, -1): the judge reads its messages from `process.reader`.

    An interpreter's start (about a fifth of a second) is not waited for: each start takes a
    spare that has already started and imported the server and waits to be told which target
    to load (`--await`), and starts the next spare for the same python, folder and environment
    (`LATE_ENV` aside), which the next target process of this judge takes. LEASELAB_SPARES=0
    starts each one fresh instead (to measure what the spares save)."""
    env = dict(os.environ if env is None else env)
    if log or os.environ.get("LEASELAB_SPARES") == "0":
        return _started(_popen(["--stdio", spec], python, cwd, env, log))
    spare = _spare(python, cwd, env, take=True)
    late = {k: env.get(k) for k in LATE_ENV}
    line = json.dumps({"spec": spec, "env": late}).encode() + b"\n"
    try:
        spare.stdin.write(line)
        spare.stdin.flush()
    except OSError:  # it died meanwhile: its end is what the judge reads
        pass
    return _started(spare)


def start_spare(python: str = sys.executable, cwd: str | None = None,
                env: dict | None = None, count: int = 1) -> None:
    """Start the spares (`count` in all, with those waiting already) the next `spawn_target`s
    with this python, folder and environment will take: a lane, before its first check; a
    grade, before it imports the grader (two: the preflight's target and the lesson's first
    check's, grader.__main__). Those targets then wait for no start-up."""
    if os.environ.get("LEASELAB_SPARES") != "0":
        _spare(python, cwd, dict(os.environ if env is None else env), take=False, count=count)


def _spare(python: str, cwd: str | None, env: dict, take: bool, count: int = 1):
    """With `take`: the oldest spare for this python, folder and environment (`LATE_ENV`
    aside), started now if there is none, and the next one started if none is left waiting;
    without: only make sure `count` wait."""
    base = {k: v for k, v in env.items() if k not in LATE_ENV}
    key = (python, cwd, tuple(sorted(base.items())))
    with _spares_lock:
        waiting = _spares.pop(key, [])
        for other in [k for k in _spares if k != key]:  # another grade's, another folder's
            for process in _spares.pop(other):
                kill(process)
        for process in [p for p in waiting if p.poll() is not None]:
            kill(process)
            waiting.remove(process)
        spare = waiting.pop(0) if take and waiting else None
        if take and spare is None:
            spare = _popen(["--stdio", "--await"], python, cwd, base, None)
        while len(waiting) < (int(_replenish) if take else count):
            waiting.append(_popen(["--stdio", "--await"], python, cwd, base, None))
        _spares[key] = waiting
    return spare


def _popen(args: list[str], python: str, cwd: str | None, env: dict, log: str | None):
    log_file = open(log, "ab") if log else subprocess.DEVNULL
    try:
        return subprocess.Popen(
            python_command(TARGET_SERVER, *args, python=python),
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=log_file, cwd=cwd, env=env,
            bufsize=0)
    finally:
        if log:
            log_file.close()


def _started(process: subprocess.Popen):
    out = os.dup(process.stdin.fileno())  # the judge's own fd, closed by it (TargetProcess)
    process.stdin.close()
    return SpawnedTarget(process), out, -1


def stop_spares() -> None:
    """End the waiting spares (also at exit; a spare whose stdin closes ends on its own)."""
    with _spares_lock:
        while _spares:
            for process in _spares.popitem()[1]:
                kill(process)


atexit.register(stop_spares)


def main(argv: list[str] | None = None) -> int:
    """`python -m grader.harness.processes.portable MODULE [ARG...]`: start the spare target
    server this process's first target process will take (`start_spare`, with the environment
    a target gets: `launch.scrubbed`), before anything but this module is imported, then return
    `MODULE.main([ARG...])`. The portable path starts its lanes so (grader.runner.spawned): the
    spare's start-up and imports overlap the lane's own, and its first check waits for
    neither."""
    import importlib

    from .launch import scrubbed

    args = list(sys.argv[1:] if argv is None else argv)
    if not args:
        print("usage: python -m grader.harness.processes.portable MODULE [ARG...]",
              file=sys.stderr)
        return 2
    start_spare(env=scrubbed(os.environ))
    return importlib.import_module(args[0]).main(args[1:])


if __name__ == "__main__":
    # Run main() from the module imported under its real name: the spare it starts is the one
    # `spawn_target` (grader.harness.processes.portable, imported by the judge) takes.
    from grader.harness.processes import portable as _portable

    sys.exit(_portable.main())
