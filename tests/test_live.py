"""The live line (grader/report/live.py): on a terminal, each verdict as it comes in, redrawn in
place and erased before the report; on anything else, nothing but the report."""

from __future__ import annotations

import io
import os
import subprocess
import sys

import pytest

from conftest import ROOT, family_checks, points
from grader.report.live import LiveLine
from grader.results import CheckResult, Failure, Outcome


class Terminal(io.StringIO):
    def isatty(self):
        return True


def results():
    return [CheckResult("finish-before-expiry", 2, Outcome.PASSED),
            CheckResult("finish-at-expiry", 4, Outcome.FAILED, Failure(Outcome.FAILED)),
            CheckResult("finish-after-expiry", 2, Outcome.PASSED)]


def test_each_verdict_redraws_one_line_in_place_and_clear_erases_it(monkeypatch):
    monkeypatch.setenv("COLUMNS", "200")
    screen = Terminal()
    live = LiveLine(screen, 3, "en")
    for result in results():
        live.show(result)
    live.clear()
    drawn = screen.getvalue().split("\r\033[K")
    assert drawn[0] == "" and drawn[-1] == ""  # every draw starts by erasing; the last erases
    assert drawn[1:4] == [
        "✓ finish-before-expiry   1 of 3 checks graded, 0 not passed so far",
        "✗ finish-at-expiry   2 of 3 checks graded, 1 not passed so far",
        "✓ finish-after-expiry   3 of 3 checks graded, 1 not passed so far"]


def test_a_hidden_check_is_neither_drawn_nor_counted(monkeypatch):
    """A check the instructor's config hides (grader.config `show`) has no verdict on the live
    line either: it would flash by, then the report keeps it back."""
    monkeypatch.setenv("COLUMNS", "200")
    screen = Terminal()
    live = LiveLine(screen, 2, "en", frozenset({"finish-at-expiry"}))
    for result in results():
        live.show(result)
    live.clear()
    assert "finish-at-expiry" not in screen.getvalue()
    assert "2 of 2 checks graded, 0 not passed so far" in screen.getvalue()


def test_the_line_never_wraps(monkeypatch):
    monkeypatch.setenv("COLUMNS", "30")
    screen = Terminal()
    LiveLine(screen, 3, "ja").show(results()[1])
    line = screen.getvalue().removeprefix("\r\033[K")
    assert "\n" not in line and sum(2 if ord(c) > 0x2E7F else 1 for c in line) <= 29


def test_nothing_is_written_where_the_output_is_not_a_terminal():
    stream = io.StringIO()
    live = LiveLine(stream, 3, "en")
    for result in results():
        live.show(result)
    live.clear()
    assert stream.getvalue() == "" and live.done == 3 and live.not_passed == 1


def test_a_grade_on_a_terminal_shows_verdicts_before_the_report_and_erases_them():
    pty = pytest.importorskip("pty", reason="no pseudo-terminals here (Windows): the live line"
                              " is drawn on a console, which a test cannot open")
    pid, fd = pty.fork()
    if pid == 0:  # the grader, its output a terminal
        os.chdir(ROOT)
        os.execve(sys.executable, [sys.executable, "-m", "grader", "--impl", "solutions.queue",
                                   "--no-history", "-k", "boundaries"],
                  {**os.environ, "NO_COLOR": "1", "COLUMNS": "200"})
    out = b""
    while True:
        try:
            chunk = os.read(fd, 65536)
        except OSError:  # the child closed the terminal
            break
        if not chunk:
            break
        out += chunk
    os.waitpid(pid, 0)
    text = out.decode()
    live, _, report = text.rpartition("\r\033[K")
    boundaries = family_checks("boundaries")
    n, full = len(boundaries), points(*boundaries)
    assert boundaries[0] == "finish-before-expiry"
    assert f"✓ finish-before-expiry   1 of {n} checks graded" in live
    assert f"{n} of {n} checks graded" in live
    assert report.lstrip().startswith("Lease lab — grading")
    assert f"Score: {full} / {full}" in report


def test_a_grade_on_a_pipe_has_no_live_line():
    proc = subprocess.run([sys.executable, "-m", "grader", "--impl", "solutions.queue",
                           "--no-history", "-k", "finish-at-expiry"], cwd=ROOT,
                          capture_output=True, text=True, timeout=120)
    assert "\r" not in proc.stdout and "\033[K" not in proc.stdout
    assert proc.stdout.startswith("Lease lab — grading")
