"""Nothing shipped can be turned into a database (issue 37).

The code's SQL runs in the judge's process, which is not jailed, and SQLite writes a database into
any empty file it is told to open: `lab/__init__.py`, when it was empty, became an 8 KiB database
and every later `import lab` failed (the classmates graded after it got 0). No file the package
ships is empty.
"""

from __future__ import annotations

import subprocess

from conftest import ROOT

#: The packages pyproject.toml ships (their package data included).
PACKAGES = ("lab", "solutions", "grader")


def test_no_shipped_file_is_empty():
    """SQLite turns an empty file into a database when asked to open it: none may ship."""
    listed = subprocess.run(["git", "ls-files", "-z", *PACKAGES], cwd=ROOT, capture_output=True,
                            check=True).stdout.decode().split("\0")
    files = [name for name in listed if name]
    assert len(files) > 100, files  # the packages are listed
    assert [name for name in files if (ROOT / name).stat().st_size == 0] == []
