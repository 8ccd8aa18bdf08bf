"""A graded file named queue.py (how batch, Gradescope and students name it) must not shadow the
stdlib `queue` that threads and concurrent.futures use once its folder is on sys.path."""

import shutil
import subprocess
import sys

from conftest import ROOT


def test_a_file_named_queue_py_does_not_shadow_the_stdlib(tmp_path):
    shutil.copy(ROOT / "solutions" / "queue.py", tmp_path / "queue.py")
    probe = (
        "import sys; from grader.harness.target.loader import load; load(sys.argv[1]);"
        "from concurrent.futures import ThreadPoolExecutor;"
        "pool = ThreadPoolExecutor(1); print(pool.submit(abs, -7).result())"
    )
    proc = subprocess.run([sys.executable, "-c", probe, str(tmp_path / "queue.py")], cwd=ROOT,
                          capture_output=True, text=True, timeout=60)
    assert proc.stdout.strip() == "7", proc.stderr
