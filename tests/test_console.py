"""Output on any console (grader/report/console.py): a console whose encoding cannot write the
reports' symbols (a Windows console's cp1252, PYTHONIOENCODING=ascii) gets ASCII stand-ins, never
a UnicodeEncodeError; the files the grader writes stay UTF-8."""

from __future__ import annotations

import subprocess
import sys

import pytest

from conftest import MUTANTS, ROOT, grader_env
from grader.report import console

MUTANT = str(MUTANTS / "deadline_no_clamp.py")


def run(encoding: str, *args: str, input: str = "") -> subprocess.CompletedProcess:
    env = grader_env({"PYTHONIOENCODING": encoding})
    proc = subprocess.run([sys.executable, "-m", "grader", *args], cwd=ROOT, env=env,
                          input=input.encode(), capture_output=True, timeout=300)
    return proc


@pytest.mark.parametrize("encoding", ["cp1252", "ascii"])
def test_a_grade_on_a_console_that_cannot_write_its_symbols(encoding, tmp_path):
    html = tmp_path / "report.html"
    proc = run(encoding, "--impl", MUTANT, "--html", str(html))
    out = proc.stdout.decode(encoding)  # every byte is of the console's encoding
    assert proc.returncode == 1, proc.stderr.decode(encoding, "replace")
    assert "Traceback" not in out + proc.stderr.decode(encoding)
    assert "x With the lease cut off" in out           # ✗
    assert "  >      0 ms  A claims" in out             # ▶
    assert "      !=lease_until  1000       100" in out  # ≠, the row table's columns kept
    assert "        token        1          1" in out
    assert "Score: 86 / 100" in out
    assert "✗" in html.read_text(encoding="utf-8")      # the file is UTF-8 whatever the console


@pytest.mark.parametrize("args, input", [(["quiz", "--lang", "ja"], "q\n"), (["checks"], ""),
                                         (["hint", "finish-at-expiry"], ""),
                                         (["--impl", "lab/queue.py", "--lang", "ja"], "")])
def test_every_command_on_an_ascii_console(args, input):
    proc = run("ascii", *args, input=input)
    assert proc.returncode in (0, 1), proc.stderr.decode("ascii", "replace")
    assert b"Traceback" not in proc.stdout + proc.stderr
    proc.stdout.decode("ascii")


def test_stand_ins_keep_what_the_symbols_mean():
    line = "▶ ✗ ✓ — → … “x” ·"
    assert line.encode("ascii", console.HANDLER) == b'> x v - -> ... "x" -'
    assert "  ≠ id  1".encode("cp1252", console.HANDLER) == b"  !=id  1"
    assert "a≠b".encode("ascii", console.HANDLER) == b"a!=b"
    assert "日本".encode("ascii", console.HANDLER) == b"??"
