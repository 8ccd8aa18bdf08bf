"""Run one check in a forked child process, so student code cannot hang or crash the grader.

The child reports over a pipe, one JSON object per line: `{"step": ...}` before each call into
the target (so a hang or an exit can say what was running), then one `{"result": ...}`: the
JSON form of a `grader.results.Failure`, or `{"outcome": "passed"}`.
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

from grader.results import Failure, Kind, Outcome, result_from_json, result_to_json

_progress_fd: int | None = None


def report_step(step: dict) -> None:
    """Child side: tell the parent what is about to run (no-op outside a sandbox)."""
    if _progress_fd is not None:
        _write(_progress_fd, {"step": step})


def _write(fd: int, obj: dict) -> None:
    data = (json.dumps(obj, default=repr) + "\n").encode()
    while data:
        data = data[os.write(fd, data):]


def run(body: Callable[[], Failure | None], timeout: float) -> Failure | None:
    """Run `body()` in a child; return its failure (None: passed), or how the child died.

    Failures made here: timed out (with the step), exited (with the step and the exit code or
    signal), and grader-bug when `body` itself raised.
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
            result = Failure.grader_bug(traceback.format_exc())
        try:
            _write(write_fd, {"result": result_to_json(result)})
        except BaseException:
            code = 70
        os._exit(code)

    os.close(write_fd)
    try:
        return _collect(pid, read_fd, timeout)
    finally:
        os.close(read_fd)


def _collect(pid: int, fd: int, timeout: float) -> Failure | None:
    deadline = time.monotonic() + timeout
    buffer = b""
    last_step = None
    result = None
    while True:
        left = deadline - time.monotonic()
        if left <= 0:
            _kill(pid)
            return _timed_out(last_step, timeout)
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
        return result_from_json(result)
    if status is None:
        return _timed_out(last_step, timeout)
    if os.WIFSIGNALED(status):
        how = {"signal": signal.Signals(os.WTERMSIG(status)).name}
    else:
        how = {"code": os.WEXITSTATUS(status)}
    return Failure(Outcome.ERRORED, Kind.EXITED, step=last_step, **how)


def _timed_out(step: dict | None, timeout: float) -> Failure:
    return Failure(Outcome.TIMED_OUT, step=step, timeout=timeout)


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
