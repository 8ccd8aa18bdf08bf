"""Where a submission's `queue.py` is: one rule for `batch` and the Gradescope autograder.

A submission folder is graded by, in this order of preference:
1. `FOLDER/queue.py` (the file handed in on its own);
2. `FOLDER/lab/queue.py` (a clone of the student repository);
3. the only `queue.py` anywhere below FOLDER (an LMS download that nests folders).
Hidden folders, `__pycache__`, virtual environments and `site-packages` are never searched.
No queue.py, or several candidates in case 3, is a submission that cannot be graded.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

FILENAME = "queue.py"
SKIPPED_DIRS = {"__pycache__", "node_modules", "site-packages", "venv", ".venv", "env"}


class NoSubmission(Exception):
    """No gradable queue.py: `kind` is 'missing' or 'ambiguous' (several candidates)."""

    def __init__(self, kind: str, candidates: list[Path] | None = None):
        super().__init__(kind)
        self.kind = kind
        self.candidates = candidates or []


@dataclass(frozen=True)
class Submission:
    name: str
    path: Path  # what was handed in: a folder or a single .py file


def find_queue_py(folder: Path) -> Path:
    """The queue.py that grades `folder` (see the module docstring); raise NoSubmission."""
    folder = Path(folder)
    for preferred in (folder / FILENAME, folder / "lab" / FILENAME):
        if preferred.is_file():
            return preferred
    found = sorted(_search(folder))
    if len(found) == 1:
        return found[0]
    raise NoSubmission("ambiguous" if found else "missing", found)


def queue_py_of(submission: Submission) -> Path:
    return submission.path if submission.path.is_file() else find_queue_py(submission.path)


def discover(directory: Path) -> list[Submission]:
    """The submissions in `directory`, by name: every folder, and every `.py` file (a single
    queue.py, named after the file: `alice.py` is alice). Hidden entries are skipped."""
    subs = []
    for entry in sorted(Path(directory).iterdir()):
        if entry.name.startswith((".", "_")):
            continue
        if entry.is_dir():
            subs.append(Submission(entry.name, entry))
        elif entry.is_file() and entry.suffix == ".py":
            subs.append(Submission(entry.stem, entry))
    return subs


def _search(folder: Path):
    for root, dirs, files in os.walk(folder):
        dirs[:] = [d for d in dirs if not d.startswith(".") and d not in SKIPPED_DIRS]
        if FILENAME in files:
            yield Path(root) / FILENAME
