"""`python -m grader watch`, measured from outside as a student sees it: the seconds from a save
(the file written, as an editor does) to the first verdict on the screen (the first pass's
summary) and to the whole grade's, over N saves alternating the mutant and the solution in a
temporary copy. Run by `python -m bench.grade --watch N`, printed with its other figures."""

from __future__ import annotations

import os
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SOLUTION = ROOT / "solutions" / "queue.py"
MUTANT = ROOT / "tests" / "mutants" / "tokens_finish_by_id_only.py"
FIRST = ("First verdict in", "Graded in")  # the status line of a verdict's screen
FINAL = "Graded in"
PERFECT = "Score: 100 / 100"
WAIT = 300.0  # seconds: a safety net for one grade


class Screen:
    """The watcher's output lines, each with the monotonic time it was read."""

    def __init__(self, stream):
        self.lines: list[tuple[float, str]] = []
        self.lock = threading.Lock()
        self.thread = threading.Thread(target=self._read, args=(stream,), daemon=True)
        self.thread.start()

    def _read(self, stream):
        for line in stream:
            with self.lock:
                self.lines.append((time.monotonic(), line.rstrip("\n")))

    def mark(self) -> int:
        with self.lock:
            return len(self.lines)

    def wait_for(self, words: tuple[str, ...], after: int) -> tuple[float, int]:
        """(time read, index) of the first line after index `after` holding one of `words`."""
        deadline = time.monotonic() + WAIT
        while time.monotonic() < deadline:
            with self.lock:
                for i in range(after, len(self.lines)):
                    if any(w in self.lines[i][1] for w in words):
                        return self.lines[i][0], i
            time.sleep(0.01)
        raise TimeoutError(f"no {words} on the watcher's screen within {WAIT:g} s")

    def line(self, index: int) -> str:
        with self.lock:
            return self.lines[index][1]


def interruptible() -> dict:
    """Popen's keyword arguments that give the child Ctrl-C as a terminal gives it: SIGINT's
    default action, whatever this process inherited. A shell starting a command in the
    background without job control (`cmd &` in a script) leaves SIGINT ignored, the ignoring is
    inherited, and Python then installs no KeyboardInterrupt of its own: the watcher would never
    hear the SIGINT sent to end it."""
    if os.name != "posix":
        return {}
    return {"preexec_fn": lambda: signal.signal(signal.SIGINT, signal.SIG_DFL)}


def save_to_verdict(saves: int, *, root: Path = ROOT, env: dict | None = None) -> dict:
    """Seconds from each save to the first verdict and to the whole grade (lists, medians,
    p90s), and whether every whole grade was the right one (the solution 100/100, the mutant
    less). `root`: the checkout whose grader watches (the working directory; the files saved
    are this checkout's), `env` its environment (default: this one's)."""
    firsts, finals, right = [], [], True
    with tempfile.TemporaryDirectory(prefix="leaselab-watch-") as folder:
        target = Path(folder) / "queue.py"
        shutil.copy(SOLUTION, target)
        for part in MUTANT.parent.glob("_*.py"):  # what the mutant imports
            shutil.copy(part, Path(folder) / part.name)
        env = {**(os.environ if env is None else env), "NO_COLOR": "1", "LANG": "C.UTF-8"}
        env.pop("LC_ALL", None)
        proc = subprocess.Popen([sys.executable, "-m", "grader", "watch", "--impl", str(target)],
                                cwd=root, env=env, stdin=subprocess.DEVNULL,
                                stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
                                **interruptible())
        try:
            screen = Screen(proc.stdout)
            screen.wait_for((FINAL,), 0)  # the grade of the file as it was at the start
            for n in range(saves):
                source = MUTANT if n % 2 == 0 else SOLUTION
                mark = screen.mark()
                target.write_text(source.read_text(encoding="utf-8"), encoding="utf-8")
                saved = time.monotonic()
                first, _ = screen.wait_for(FIRST, mark)
                final, index = screen.wait_for((FINAL,), mark)
                firsts.append(first - saved)
                finals.append(final - saved)
                _, index = screen.wait_for(("Score:",), index)  # the line after the status
                right = right and (PERFECT in screen.line(index)) == (source == SOLUTION)
        finally:
            try:
                proc.send_signal(signal.SIGINT)  # Ctrl-C, as a student ends it
            except ValueError:  # Windows' Popen sends no SIGINT (CTRL_C_EVENT is console-wide)
                proc.terminate()
            try:
                code = proc.wait(timeout=WAIT)
            except subprocess.TimeoutExpired:
                proc.kill()
                code = proc.wait()
    return {"saves": saves, "first": statistics.median(firsts), "first_p90": p90(firsts),
            "final": statistics.median(finals), "final_p90": p90(finals),
            "firsts": [round(s, 3) for s in firsts], "finals": [round(s, 3) for s in finals],
            "right_verdicts": right, "exit": code}


def p90(values: list[float]) -> float:
    if len(values) == 1:
        return values[0]
    return statistics.quantiles(values, n=10, method="inclusive")[-1]


def lines(figures: dict) -> list[str]:
    return [f"Watch: {figures['saves']} saves alternating {MUTANT.stem} and the solution "
            f"(median, p90):",
            f"  save -> first verdict redrawn: {figures['first']:.2f} s "
            f"(p90 {figures['first_p90']:.2f} s)",
            f"  save -> whole grade redrawn:   {figures['final']:.2f} s "
            f"(p90 {figures['final_p90']:.2f} s); right verdicts: "
            f"{'yes' if figures['right_verdicts'] else 'NO'}; exit on Ctrl-C: {figures['exit']}"]
