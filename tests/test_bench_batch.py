"""Smoke test of bench/batch.py: a class of four runs end to end (no timing is asserted)."""

import subprocess
import sys

from conftest import ROOT


def test_the_batch_benchmark_runs():
    proc = subprocess.run([sys.executable, str(ROOT / "bench" / "batch.py"), "--count", "4",
                           "--hangs", "0", "--crashes", "1"],
                          cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert "speed-up:" in proc.stdout
    assert "1 crash" in proc.stdout and "4 graded" in proc.stdout
