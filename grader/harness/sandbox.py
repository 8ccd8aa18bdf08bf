"""Run one check in a forked child process, so student code cannot hang or crash the grader.

The child reports over a pipe, one JSON object per line: `{"step": ...}` before each call into
the target (so a hang or an exit can say what was running), then one `{"result": ...}`.
The parent waits at most `timeout` seconds of wall-clock time (a safety net for hangs only:
checks themselves run on logical time), then kills the child's whole process group.
"""

from __future__ import annotations

import json
import os
import select
import signal
import time
import traceback
from typing import Callable

_progress_fd: int | None = None


def report_step(step: dict) -> None:
    """Child side: tell the parent what is about to run (no-op outside a sandbox)."""
    if _progress_fd is not None:
        _write(_progress_fd, {"step": step})


def _write(fd: int, obj: dict) -> None:
    data = (json.dumps(obj, default=repr) + "\n").encode()
    while data:
        data = data[os.write(fd, data):]


def run(body: Callable[[], dict], timeout: float) -> dict:
    """Run `body()` in a child; return its result dict, or one describing how the child died.

    `body` returns a JSON-serialisable dict with at least `outcome`. Results made here:
    `{"outcome": "timed_out", "step": ...}` and `{"outcome": "errored", "kind": "exited", ...}`.
    """
    global _progress_fd
    read_fd, write_fd = os.pipe()
    pid = os.fork()
    if pid == 0:  # child
        os.close(read_fd)
        try:
            os.setpgid(0, 0)  # own process group: a timeout kills grandchildren too
        except OSError:
            pass
        _progress_fd = write_fd
        code = 0
        try:
            _redirect_stdin()
            result = body()
        except BaseException:  # a bug in the check itself, not in the target
            result = {"outcome": "errored", "kind": "grader-bug", "error": traceback.format_exc()}
        try:
            _write(write_fd, {"result": result})
        except BaseException:
            code = 70
        os._exit(code)

    os.close(write_fd)
    try:
        return _collect(pid, read_fd, timeout)
    finally:
        os.close(read_fd)


def _collect(pid: int, fd: int, timeout: float) -> dict:
    deadline = time.monotonic() + timeout
    buffer = b""
    last_step = None
    result = None
    while True:
        left = deadline - time.monotonic()
        if left <= 0:
            _kill(pid)
            return {"outcome": "timed_out", "step": last_step, "timeout": timeout}
        ready, _, _ = select.select([fd], [], [], left)
        if not ready:
            continue
        chunk = os.read(fd, 65536)
        if not chunk:
            break
        buffer += chunk
        *lines, buffer = buffer.split(b"\n")
        for line in lines:
            message = json.loads(line)
            if "step" in message:
                last_step = message["step"]
            else:
                result = message["result"]
    status = _reap(pid, deadline)
    if result is not None:
        return result
    if status is None:
        return {"outcome": "timed_out", "step": last_step, "timeout": timeout}
    if os.WIFSIGNALED(status):
        how = {"signal": signal.Signals(os.WTERMSIG(status)).name}
    else:
        how = {"code": os.WEXITSTATUS(status)}
    return {"outcome": "errored", "kind": "exited", "step": last_step, **how}


def _reap(pid: int, deadline: float) -> int | None:
    # The pipe closed: the child is exiting (or closed the pipe itself and goes on running).
    while True:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            return status
        if time.monotonic() > deadline:
            _kill(pid)
            return None
        time.sleep(0.002)


def _kill(pid: int) -> None:
    for target in (lambda: os.killpg(pid, signal.SIGKILL), lambda: os.kill(pid, signal.SIGKILL)):
        try:
            target()
        except (ProcessLookupError, PermissionError):
            pass
    try:
        os.waitpid(pid, 0)
    except ChildProcessError:
        pass


def _redirect_stdin() -> None:
    devnull = os.open(os.devnull, os.O_RDONLY)
    os.dup2(devnull, 0)
    os.close(devnull)
