"""Grade one submission in its own process, so a submission that hangs or crashes costs only
its own result.

The grader runs as `python -m grader --impl ... --json ...` in a new session, in a private work
directory holding a copy of the submission (the original is never written to) and its own
TMPDIR, and with `--no-history`: no .leaselab-history.json is written beside the copy, and the
hint policy counts no local runs. A wall-clock limit bounds the whole run; on expiry, and after
every run, every process left in that session is killed: the grader's sandbox puts each check
in its own process group, so killing one group would leave a spinning check behind.

Whatever happens, the answer is a results.json-shaped dict: the grader's own, or a not-graded
one (grader.report.results_json: score 0, every check failed with the reason).
"""

from __future__ import annotations

import os
import shutil
import stat
import subprocess
import sys
import threading
import time
from dataclasses import dataclass
from pathlib import Path

from grader.harness import sandbox
from grader.harness.target_server import SEALED_ENV
from grader.harness.world import fresh_seed
from grader.report.messages import INSTRUCTOR_TOO_LARGE, text
from grader.report.results_json import (CRASHED, GRADED, TIMED_OUT, TOO_LARGE, not_graded,
                                        read)

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
          seed: int | None = None) -> Outcome:
    """Grade `queue_py` in `workdir` (an empty folder) within `limit` seconds. `with_folder`:
    the submission is the folder holding queue.py (helper modules come along), else the file.
    `select`: only the checks matching this pytest -k expression. `seed`: what the checks'
    worlds are drawn from; default: a fresh one, so that a recorded grade uses scenarios the
    code cannot have learned (grader.harness.world); it is in the results, to replay."""
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
    env = {**os.environ, "PYTHONPATH": _pythonpath(), "TMPDIR": str(tmp), "NO_COLOR": "1",
           "PYTHONDONTWRITEBYTECODE": "1", SEALED_ENV: "1"}  # no reference, no tests
    cmd = [sys.executable, "-m", "grader", "--impl", str(target), "--json", str(out),
           "--lang", lang, "--timeout-scale", f"{timeout_scale:g}", "--replay", str(seed),
           "--no-history"]  # a recorded grade leaves no run history in the submission
    if select:
        cmd += ["-k", select]
    if config:  # the instructor's config file: its detail level and visibilities
        cmd += ["--config", str(Path(config).resolve())]
    sandbox.become_subreaper()  # what a killed grader left detached comes back to us
    with open(log_path, "wb") as log:
        with _live_lock:  # a sweep never sees a grader started but not yet listed
            proc = subprocess.Popen(cmd, cwd=workdir, env=env, stdin=subprocess.DEVNULL,
                                    stdout=log, stderr=subprocess.STDOUT,
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
                sandbox.end_strays(keep=set(_live))  # every live grader is a child of ours
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
    return Outcome(GRADED, results, duration, log_text, seed)


def kill_session(sid: int) -> None:
    """SIGKILL every process of session `sid` (the grader and whatever it left running)."""
    sandbox.kill_session(sid)


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

