"""Where a submission's `queue.py` is: one rule for `batch` and the Gradescope autograder.

A submission folder is graded by, in this order of preference:
1. `FOLDER/queue.py` (the file handed in on its own);
2. `FOLDER/lab/queue.py` (a clone of the student repository);
3. the only `queue.py` anywhere below FOLDER (an LMS download that nests folders).
Hidden folders, `__pycache__`, virtual environments and `site-packages` are never searched.
No queue.py, or several candidates in case 3, is a submission that cannot be graded.

A submission folder is untrusted input: symbolic links are never followed (neither a linked
folder nor a linked queue.py is a submission or part of one), FIFOs, sockets and devices are
never opened, and what a copy takes is bounded (`copied_files`).
"""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass
from pathlib import Path

FILENAME = "queue.py"
SKIPPED_DIRS = {"__pycache__", "node_modules", "site-packages", "venv", ".venv", "env"}
#: What the copy of a folder submission may hold, at most (files and folders; bytes).
MAX_ENTRIES, MAX_TOTAL_BYTES, MAX_FILE_BYTES = 2000, 20 * 1024 * 1024, 5 * 1024 * 1024


#: Which bound a submission can be over (TooLarge.kind).
TOO_LARGE_KINDS = ("file", "entries", "total")


class TooLarge(Exception):
    """A submission over the copy's bounds: `kind` is 'file' (one file over MAX_FILE_BYTES,
    named by `file`), 'entries' (over MAX_ENTRIES) or 'total' (over MAX_TOTAL_BYTES)."""

    def __init__(self, kind: str, file: str = ""):
        super().__init__(kind, file)
        self.kind = kind
        self.file = file


class NoSubmission(Exception):
    """No gradable queue.py: `kind` is 'missing', 'ambiguous' (several candidates) or
    'not_regular' (what was handed in is a symbolic link, FIFO, socket or device: never
    opened)."""

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
    for preferred in ((FILENAME,), ("lab", FILENAME)):
        if _regular_below(folder, *preferred):
            return folder.joinpath(*preferred)
    found = sorted(_search(folder))
    if len(found) == 1:
        return found[0]
    raise NoSubmission("ambiguous" if found else "missing", found)


def queue_py_of(submission: Submission) -> Path:
    """The queue.py that grades `submission` (the file itself, or `find_queue_py` in its
    folder); raise NoSubmission, 'not_regular' for what is neither a regular file nor a real
    folder."""
    try:
        mode = os.lstat(submission.path).st_mode
    except OSError:
        raise NoSubmission("missing") from None
    if stat.S_ISREG(mode):
        return submission.path
    if stat.S_ISDIR(mode):
        return find_queue_py(submission.path)
    raise NoSubmission("not_regular")


def discover(directory: Path) -> list[Submission]:
    """The submissions in `directory`, by name: every folder, and every `.py` file (a single
    queue.py, named after the file: `alice.py` is alice). Hidden entries are skipped. A
    symbolic link (to a folder or a file), or a `.py` that is a FIFO, socket or device, is a
    submission too, named the same way: one that cannot be graded (`queue_py_of`: never
    followed nor opened), so that the gradebook says so instead of leaving the student out."""
    subs = []
    for entry in sorted(Path(directory).iterdir()):
        if entry.name.startswith((".", "_")):
            continue
        try:
            mode = os.lstat(entry).st_mode
        except OSError:  # gone since the listing
            continue
        if stat.S_ISDIR(mode):
            subs.append(Submission(entry.name, entry))
        elif entry.suffix == ".py" and not stat.S_ISLNK(mode):  # a file, a FIFO, a device...
            subs.append(Submission(entry.stem, entry))
        elif stat.S_ISLNK(mode):
            subs.append(Submission(entry.stem if entry.suffix == ".py" else entry.name, entry))
    return subs


def copied_files(folder: Path) -> list[Path]:
    """The files a copy of the submission `folder` takes, relative to it: regular files only
    (no symlink, FIFO, socket or device), none hidden or compiled, none in a skipped folder.
    Raise TooLarge past MAX_ENTRIES files and folders, MAX_TOTAL_BYTES in all, or a file over
    MAX_FILE_BYTES. Folders that cannot be read are left out."""
    folder = Path(folder)
    found, entries, total = [], 0, 0
    pending = [folder]
    while pending:
        for entry in _scan(pending.pop()):
            if entry.is_dir(follow_symlinks=False) and not skipped_dir(Path(entry.path)):
                pending.append(Path(entry.path))
            elif entry.is_file(follow_symlinks=False) and not entry.name.startswith(".") \
                    and not entry.name.endswith(".pyc"):
                found.append(Path(entry.path).relative_to(folder))
                total += _size(entry, found[-1])
            else:  # a symlink, FIFO, socket or device; hidden, compiled or skipped
                continue
            entries += 1
            if entries > MAX_ENTRIES or total > MAX_TOTAL_BYTES:
                raise TooLarge("entries" if entries > MAX_ENTRIES else "total")
    return sorted(found)


def skipped_dir(path: Path) -> bool:
    """A folder neither searched nor copied: hidden, a cache, a virtual environment (by name, or
    by its pyvenv.cfg whatever its name)."""
    return path.name.startswith(".") or path.name in SKIPPED_DIRS \
        or os.path.lexists(path / "pyvenv.cfg")


def _size(entry: os.DirEntry, relative: Path) -> int:
    try:
        size = entry.stat(follow_symlinks=False).st_size
    except OSError:  # gone meanwhile: the copy leaves it out
        return 0
    if size > MAX_FILE_BYTES:
        raise TooLarge("file", relative.as_posix())
    return size


def _scan(folder: Path) -> list[os.DirEntry]:
    try:
        with os.scandir(folder) as entries:
            return list(entries)
    except OSError:  # a folder we may not read is left out, like a hidden one
        return []


def _is_regular(path: Path) -> bool:
    """A regular file itself, not a symbolic link to one (nor a FIFO, ...)."""
    try:
        return stat.S_ISREG(os.lstat(path).st_mode)
    except OSError:
        return False


def _regular_below(folder: Path, *parts: str) -> bool:
    """folder/parts... is a regular file reached through real folders only (no symlink)."""
    for depth in range(1, len(parts)):
        try:
            if not stat.S_ISDIR(os.lstat(folder.joinpath(*parts[:depth])).st_mode):
                return False
        except OSError:
            return False
    return _is_regular(folder.joinpath(*parts))


def _search(folder: Path):
    """Every regular queue.py below `folder`; os.walk never enters a linked folder."""
    for root, dirs, files in os.walk(folder):
        dirs[:] = [d for d in dirs if not skipped_dir(Path(root, d))]
        if FILENAME in files and _is_regular(Path(root, FILENAME)):
            yield Path(root) / FILENAME
