"""Measuring one command from outside, the pieces bench.grade and bench.perf share.

- `run(cmd, cwd, env)`: wall time, CPU time of the whole process tree (os.wait4's rusage: every
  process of a grade is reaped by someone in the tree, the grader being a subreaper), the
  largest single process's ru_maxrss, the exit code, and the seconds to the first output line
  that is a check's verdict (stdout read as it comes). With `memory=True` a `TreeMemory` thread
  samples the tree's memory every 10 ms meanwhile.
- `TreeMemory`: the sum of RSS (/proc/PID/statm) and of PSS (/proc/PID/smaps_rollup, RSS where
  that is not readable: a target process made itself non-dumpable) over every descendant of one
  process, sessions or not; the peak of each sum.
- `traced(cmd, cwd, env)` and `strace_counts(lines)`: under `strace -f`, the processes, threads
  and programs started (clone/clone3/fork/vfork results, execve) and the fsync/fdatasync calls.
  Tracing slows a grade down several times: never time a traced run.
- `median`, `percentile`, `machine()`.

What it measures depends on what this interpreter has, never on the platform's name (issue 42:
`python -m bench.perf --portable` on a student's Windows or macOS laptop): without `pty` (Windows)
the output is read through a pipe, where a grader draws no live line (the first verdict is then
the report's first verdict line: `result["screen"]`); without `os.wait4` (Windows) only wall time,
`cpu` and `maxrss_mb` None and named in `result["not_measured"]` (NOT_MEASURED), never 0; without
/proc (macOS, Windows) the tree's memory likewise; without sessions the command is ended alone
(`Popen.kill`), not with its process group.
"""

from __future__ import annotations

import os
import platform
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

try:
    import pty  # POSIX only: Windows has no pseudo-terminal module
except ImportError:
    pty = None

#: The first characters of a check's verdict line in the terminal report (grader.report.view
#: MARKS: passed, failed, errored or out of a limit, timed out, not implemented) and of a shared
#: cause's heading ("▶ "), each followed by a space.
VERDICT_MARKS = ("✓", "✗", "!", "⏱", "·", "▶")
_ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")
STRACE = "/usr/bin/strace"
TIMEOUT = 600.0  # seconds: a safety net for one measured command
PAGE_KB = os.sysconf("SC_PAGE_SIZE") // 1024 if hasattr(os, "sysconf") else 4
#: What a figure this interpreter cannot give is (in a run's `not_measured`, the table, the JSON).
NOT_MEASURED = "not measured here"
#: The CPU time and ru_maxrss of the whole process tree: os.wait4's rusage (not on Windows).
TREE_USAGE = hasattr(os, "wait4")
#: The command in a session of its own, ended with its process group (not on Windows).
SESSIONS = hasattr(os, "setsid") and hasattr(os, "killpg")


def can_sample_memory() -> bool:
    """Whether TreeMemory can read the processes' memory here (/proc: Linux)."""
    return os.path.isfile(f"/proc/{os.getpid()}/statm")


def is_verdict(line: str) -> bool:
    """A check's (or a shared cause's) line of the terminal report."""
    line = _ANSI.sub("", line).lstrip()
    return len(line) > 1 and line[0] in VERDICT_MARKS and line[1] == " "


def shows_verdict(complete: list[bytes], pending: bytes, terminal: bool) -> bool:
    """Whether what was read so far shows a verdict: a complete line that is one, or, on a
    terminal, the line being drawn (a live line redrawn in place after a carriage return is on
    the screen before anything ends it: grader.report.live)."""
    lines = [*complete, pending] if terminal else complete
    return any(is_verdict(line.decode("utf-8", "replace")) for line in lines)


# -- one run -------------------------------------------------------------------------------------
def run(cmd: list[str], cwd: Path | str, env: dict, *, memory: bool = False,
        timeout: float = TIMEOUT, terminal: bool = False) -> dict:
    """Run `cmd` to its end, its stdout read through a pipe as it comes (`terminal`: a
    pseudo-terminal, as a student's shell gives it: a grader that redraws a line in place as
    verdicts come in is seen doing so; a line is then also ended by a carriage return).

    Returns wall (s), cpu (user + system of the process and every descendant reaped in the
    tree, s), maxrss_mb (the largest single process's ru_maxrss), code (exit status, negative
    for a signal), first_output and first_verdict (s from the start to the first stdout line,
    and to the first verdict line; None if there was none), screen ("terminal" or "pipe": what
    stdout was), stdout (text) and stderr_tail; with `memory`, also peak_rss_mb and peak_pss_mb
    (the peak of the tree's sum) and samples. A figure this interpreter cannot give (no
    os.wait4: cpu, maxrss_mb; no pty: a terminal; no /proc: the memory) is None, and
    `not_measured` maps its key to NOT_MEASURED (the key is there only then)."""
    terminal = terminal and pty is not None
    not_measured = {}
    if not TREE_USAGE:
        not_measured.update(cpu=NOT_MEASURED, maxrss_mb=NOT_MEASURED)
    if memory and not can_sample_memory():
        not_measured.update(peak_rss_mb=NOT_MEASURED, peak_pss_mb=NOT_MEASURED)
        memory = False
    with tempfile.TemporaryFile() as err:
        if terminal:
            fd, screen = pty.openpty()
        start = time.monotonic()
        proc = subprocess.Popen(cmd, cwd=cwd, env=env, stdin=subprocess.DEVNULL,
                                stdout=screen if terminal else subprocess.PIPE, stderr=err,
                                bufsize=0, **({"start_new_session": True} if SESSIONS else {}))
        if terminal:
            os.close(screen)
        else:
            fd = proc.stdout.fileno()
        sampler = TreeMemory(proc.pid) if memory else None
        if sampler:
            sampler.start()
        timer = threading.Timer(timeout, _kill_group, (proc,))
        timer.daemon = True
        timer.start()
        chunks, first_output, first_verdict, pending = [], None, None, b""
        try:
            while True:
                try:
                    chunk = os.read(fd, 65536)
                except OSError:  # a pseudo-terminal whose other end has closed
                    chunk = b""
                now = time.monotonic() - start
                if not chunk:
                    break
                chunks.append(chunk)
                pending += chunk.replace(b"\r", b"\n") if terminal else chunk
                *complete, pending = pending.split(b"\n")
                if complete and first_output is None:
                    first_output = now
                if first_verdict is None and shows_verdict(complete, pending, terminal):
                    first_verdict = now
            os.close(fd) if terminal else proc.stdout.close()
            if TREE_USAGE:
                _, status, usage = os.wait4(proc.pid, 0)
                wall = time.monotonic() - start
                proc.returncode = os.waitstatus_to_exitcode(status)
            else:
                proc.wait()
                wall = time.monotonic() - start
        finally:
            timer.cancel()
            if sampler:
                sampler.stop()
            if proc.returncode is None:  # interrupted: leave nothing running
                _kill_group(proc)
                proc.wait()
        if first_verdict is None and pending and is_verdict(pending.decode("utf-8", "replace")):
            first_verdict = wall
        err.seek(0)
        stderr_tail = err.read()[-2000:].decode("utf-8", "replace")
    result = {"wall": wall,
              "cpu": usage.ru_utime + usage.ru_stime if TREE_USAGE else None,
              "maxrss_mb": usage.ru_maxrss / 1024 if TREE_USAGE else None,
              "code": proc.returncode,
              "first_output": first_output, "first_verdict": first_verdict,
              "stdout": b"".join(chunks).decode("utf-8", "replace"), "stderr_tail": stderr_tail}
    if sampler:
        result.update(peak_rss_mb=sampler.peak_rss_kb / 1024,
                      peak_pss_mb=sampler.peak_pss_kb / 1024,
                      samples=sampler.samples, processes_seen=len(sampler.tree))
    elif "peak_rss_mb" in not_measured:
        result.update(peak_rss_mb=None, peak_pss_mb=None)
    result["screen"] = "terminal" if terminal else "pipe"
    if not_measured:
        result["not_measured"] = not_measured
    return result


def _kill_group(proc: subprocess.Popen) -> None:
    """End the command and, where it has a session of its own, every process in it."""
    try:
        os.killpg(proc.pid, 9) if SESSIONS else proc.kill()
    except OSError:
        pass


class TreeMemory(threading.Thread):
    """Samples, every `interval` s, the memory of `root` and every process descending from it
    (by parent links, whatever their session: a reparented orphan's parent is the grader, a
    subreaper); keeps the peak of the sums of RSS and of PSS, in kB."""

    def __init__(self, root: int, interval: float = 0.01):
        super().__init__(daemon=True)
        self.root, self.interval = root, interval
        self.tree: set[int] = {root}
        self.foreign: set[int] = set()
        self.peak_rss_kb = self.peak_pss_kb = 0
        self.samples = 0
        self._stop_event = threading.Event()

    def stop(self) -> None:
        self._stop_event.set()
        self.join()

    def run(self) -> None:
        while not self._stop_event.is_set():
            self.sample()
            self._stop_event.wait(self.interval)

    def sample(self) -> None:
        rss_sum = pss_sum = 0
        for name in os.listdir("/proc"):
            if not name.isdigit():
                continue
            pid = int(name)
            if pid in self.foreign or not self._in_tree(pid):
                continue
            rss = _rss_kb(pid)
            if rss is None:
                continue
            rss_sum += rss
            pss = _pss_kb(pid)
            pss_sum += rss if pss is None else pss
        self.samples += 1
        self.peak_rss_kb = max(self.peak_rss_kb, rss_sum)
        self.peak_pss_kb = max(self.peak_pss_kb, pss_sum)

    def _in_tree(self, pid: int) -> bool:
        chain = []
        while pid not in self.tree:
            if pid in self.foreign or pid <= 1:
                self.foreign.update(chain + [pid])
                return False
            chain.append(pid)
            pid = _ppid(pid)
            if pid is None:  # gone: decide again next time
                return False
        self.tree.update(chain)
        return True


def _ppid(pid: int) -> int | None:
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            stat = f.read()
    except OSError:
        return None
    return int(stat[stat.rindex(b")") + 2:].split()[1])


def _rss_kb(pid: int) -> int | None:
    try:
        with open(f"/proc/{pid}/statm", "rb") as f:
            return int(f.read().split()[1]) * PAGE_KB
    except (OSError, IndexError, ValueError):
        return None


def _pss_kb(pid: int) -> int | None:
    try:
        with open(f"/proc/{pid}/smaps_rollup", "rb") as f:
            for line in f:
                if line.startswith(b"Pss:"):
                    return int(line.split()[1])
    except (OSError, ValueError):
        return None
    return None


# -- traced runs ---------------------------------------------------------------------------------
def traced(cmd: list[str], cwd: Path | str, env: dict, timeout: float = TIMEOUT) -> dict:
    """`cmd` under `strace -f`: what strace_counts counts, and the exit code."""
    with tempfile.TemporaryDirectory(prefix="leaselab-strace-") as tmp:
        log = Path(tmp) / "strace.txt"
        proc = subprocess.run([STRACE, "-f", "-qq", "-e", "trace=process,fsync,fdatasync",
                               "-o", str(log), *cmd], cwd=cwd, env=env,
                              stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                              stderr=subprocess.DEVNULL, timeout=timeout)
        with open(log, encoding="utf-8", errors="replace") as f:
            counts = strace_counts(f)
    return {**counts, "code": proc.returncode}


_CALL = re.compile(r"^(\d+)\s+(?:<\.\.\. (\w+) resumed>|(\w+)\()(.*)$")
_RESULT = re.compile(r"\)\s+=\s+(-?\d+)")
_FORKS = ("clone", "clone3", "fork", "vfork")


def strace_counts(lines) -> dict:
    """From `strace -f` output (one line a call, `PID name(args) = result`, a call another
    process interrupted split into `<unfinished ...>` and `<... name resumed>`): processes
    (the traced command itself and every fork/vfork/clone/clone3 without CLONE_THREAD that
    returned a pid), threads (those with it), execs (successful execve/execveat, the first one
    the command's own), fsync and fdatasync calls (each call once, finished or not)."""
    counts = {"processes": 1, "threads": 0, "execs": 0, "fsync": 0, "fdatasync": 0}
    unfinished: dict[str, tuple[str, str]] = {}
    for line in lines:
        m = _CALL.match(line.rstrip("\n"))
        if not m:
            continue
        pid, resumed, called, rest = m.groups()
        if called:
            name, text = called, rest
            if name in ("fsync", "fdatasync"):
                counts[name] += 1
            if rest.endswith("<unfinished ...>"):
                unfinished[pid] = (name, rest)
                continue
        else:
            name, head = unfinished.pop(pid, (resumed, ""))
            text = head + rest
        result = _RESULT.search(text)
        if not result:
            continue
        value = int(result.group(1))
        if name in _FORKS and value > 0:
            counts["threads" if "CLONE_THREAD" in text else "processes"] += 1
        elif name in ("execve", "execveat") and value == 0:
            counts["execs"] += 1
    return counts


def strace_available() -> bool:
    return os.access(STRACE, os.X_OK)


# -- figures -------------------------------------------------------------------------------------
def median(values: list[float]) -> float | None:
    values = [v for v in values if v is not None]
    return statistics.median(values) if values else None


def percentile(values: list[float], pct: int) -> float | None:
    values = [v for v in values if v is not None]
    if not values:
        return None
    if len(values) == 1:
        return values[0]
    return statistics.quantiles(values, n=100, method="inclusive")[pct - 1]


def machine() -> dict:
    """What the figures were measured on."""
    model = "?"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    except OSError:  # no /proc (macOS, Windows)
        model = platform.processor() or "?"
    try:
        uptime = subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip()
    except OSError:
        uptime = "?"
    try:
        cores = len(os.sched_getaffinity(0))
    except AttributeError:
        cores = os.cpu_count()
    try:
        load = [round(x, 2) for x in os.getloadavg()]
    except (AttributeError, OSError):  # Windows has no load average
        load = None
    return {"nproc": cores, "cpu_count": os.cpu_count(), "cpu_model": model,
            "load": load, "uptime": uptime,
            "python": sys.version.split()[0], "python_path": sys.executable,
            "system": platform.system() or "?", "kernel": platform.release(),
            "strace": shutil.which("strace") or STRACE,
            "date": time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime())}
