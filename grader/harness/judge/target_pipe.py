"""The judge's end of a target process's channel, and how that process starts and ends: which
launcher (`default_launcher`), the two pipes read and written with a timeout (`Pipe`), the kill
(`kill_target`, `end_target`). Split from target_client (issue 40), which turns what goes wrong
here into its errors (TargetTimeout, TargetEnded, ProtocolError).

Two ways to read: `select` on the fd (the fork path, Linux), or the chunks a thread reads from
the process's stdout (`portable.Reader`: the portable path, where `select` takes sockets only).
Nothing here imports a POSIX-only module.

May import: the standard library, grader.harness.wire and grader.harness.processes.
"""

from __future__ import annotations

import errno
import os
import queue
import select
import shutil
import signal
import subprocess
import time
from typing import Callable

from grader.harness import wire
from grader.harness.processes import portable, zygote
from grader.harness.processes.launch import LAUNCH_ENV, scrubbed, spawn


class PipeTimeout(Exception):
    """Nothing (or not all) went through within the time given."""


class PipeEnded(Exception):
    """The other end is closed: the process ended, or closed its channel."""


class PipeBroken(Exception):
    """What came is not a channel's traffic (a line too long, a message cut in half)."""


class Pipe:
    """Write lines to fd `out`; read lines from fd `in_`, or from `reader` when there is one
    (then `in_` is -1)."""

    def __init__(self, out: int, in_: int, reader: portable.Reader | None = None):
        self.out, self.in_, self.reader = out, in_, reader
        self.buffer = b""
        if reader is None:
            os.set_blocking(out, False)

    def send(self, data: bytes, timeout: float) -> None:
        deadline = time.monotonic() + timeout
        while data:
            try:
                data = data[os.write(self.out, data):]
            except BlockingIOError:
                left = deadline - time.monotonic()
                if left <= 0:
                    raise PipeTimeout from None
                select.select([], [self.out], [], left)
            except BrokenPipeError:
                raise PipeEnded from None
            except OSError as exc:  # Windows says EINVAL for a pipe whose reader is gone
                if self.reader is None or exc.errno not in (errno.EINVAL, errno.EPIPE):
                    raise
                raise PipeEnded from None

    def line(self, timeout: float) -> bytes:
        """The next line, without its newline."""
        buffer = self.buffer
        end = buffer.find(b"\n")
        if end < 0:
            deadline = time.monotonic() + timeout
            while end < 0:
                if len(buffer) >= wire.MAX_LINE:
                    raise PipeBroken(f"a message over {wire.MAX_LINE} bytes")
                left = deadline - time.monotonic()
                if left <= 0:
                    raise PipeTimeout
                chunk = self._chunk(left)
                if chunk is None:
                    continue
                if not chunk:
                    if buffer:
                        raise PipeBroken("the channel closed in the middle of a message")
                    raise PipeEnded
                end = chunk.find(b"\n")
                if end >= 0:
                    end += len(buffer)
                buffer = self.buffer = buffer + chunk
        line, self.buffer = buffer[:end], buffer[end + 1:]
        return line

    def _chunk(self, left: float) -> bytes | None:
        """What there is to read within `left` seconds (None: nothing yet; b"": the end)."""
        if self.reader is not None:
            try:
                return self.reader.get(left)
            except queue.Empty:
                return None
        ready, _, _ = select.select([self.in_], [], [], left)
        if not ready:
            return None
        try:
            return os.read(self.in_, 1 << 16)
        except OSError as exc:
            if exc.errno in (errno.EINTR, errno.EAGAIN):
                return None
            raise

    def quiet(self) -> bool:
        """Whether nothing is waiting behind the last line read (what the reader thread has
        already read counts as waiting)."""
        if self.reader is not None:
            while not self.reader.ended:
                try:
                    chunk = self.reader.get(0)
                except queue.Empty:
                    break
                self.buffer += chunk
        return not self.buffer


def default_launcher() -> Callable:
    """The launcher that LAUNCH_ENV names (read at each start); on the portable path
    (grader.harness.processes.portable.forkless) always `portable.spawn_target`."""
    if portable.forkless():
        return portable.spawn_target
    how = os.environ.get(LAUNCH_ENV, "auto")
    if how == "spawn":
        return spawn
    if how == "zygote":
        return zygote.launch_forked
    return zygote.launch


def kill_target(process) -> None:
    """SIGKILL a target's process group, from any thread, without reaping it: as the process
    knows how (a zygote's child: `kill_now`), else its group and itself where there are process
    groups, else `Popen.kill` (the portable path)."""
    if process.returncode is not None:  # reaped: its pid may be another's by now
        return
    kill_now = getattr(process, "kill_now", None)
    if kill_now is not None:  # forked by the zygote, which reaps it: it knows how
        kill_now()
        return
    kills = ((lambda: os.killpg(process.pid, signal.SIGKILL),
              lambda: os.kill(process.pid, signal.SIGKILL)) if hasattr(os, "killpg")
             else (process.kill,))
    for kill in kills:
        try:
            kill()
        except (ProcessLookupError, PermissionError):
            pass


def end_target(process, *fds: int, db=None, scratch: str | None = None) -> None:
    """Kill a target process and reap it; close our fds of its channel, the connections it
    held here (rolled back, as a crash's), and its scratch folder."""
    kill_group = getattr(process, "kill_group", None)
    if kill_group is not None:  # it alone knows whether pid is reaped
        kills = (kill_group,)
    elif hasattr(os, "killpg"):
        kills = (lambda: os.killpg(process.pid, signal.SIGKILL), process.kill)
    else:
        kills = (process.kill,)
    for kill in kills:
        try:
            kill()
        except (ProcessLookupError, PermissionError):
            pass
    try:
        process.wait(timeout=10)
    except subprocess.TimeoutExpired:  # an unkillable process (stuck in the kernel): leave it
        pass
    for fd in fds:
        try:
            os.close(fd)
        except OSError:
            pass
    if db is not None:  # the target's uncommitted work goes as a crash's would: rolled back
        db.close_all()
    if scratch is not None:
        shutil.rmtree(scratch, ignore_errors=True)


def start_spare() -> None:
    """On the portable path, a target server started ahead for the next TargetProcess of this
    process (grader.runner.spawned: a lane, before its first check)."""
    portable.start_spare(env=scrubbed(os.environ))
