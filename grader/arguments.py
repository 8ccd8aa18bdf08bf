"""Checks of command-line arguments shared by the commands (`python -m grader`, `batch`, ...):
argparse types for numbers, and the files a command reads or writes, checked before any work
starts. A problem is one line of plain English, which the command prints as `grader: ...`
before it exits with status 2.
"""

from __future__ import annotations

import argparse
import contextlib
import math
import os
import secrets
import stat
from collections.abc import Sequence
from pathlib import Path


class Parser(argparse.ArgumentParser):
    """argparse's parser, but a bad argument is one line, not the usage and then the error:
    `grader: <what is wrong> (see python -m grader --help)`, exit status 2."""

    def error(self, message: str):  # noqa: D102 (argparse's hook)
        self.exit(2, f"grader: {message} (see {self.prog} --help)\n")

    def parse_command(self, argv: Sequence[str] | None) -> argparse.Namespace | int:
        """A command's arguments (`argv`; None: the process's), or, when there is nothing to
        run, the status its main returns at once: 0 after the help, 2 after a bad argument's
        line. argparse would end the process; a command is also called in-process (`python -m
        grader COMMAND`, the tests), so main returns instead:

            args = p.parse_command(argv)
            if isinstance(args, int):  # --help, or a bad argument
                return args
        """
        try:
            return self.parse_args(argv)
        except SystemExit as exc:
            return 0 if exc.code == 0 else 2


def positive_int(text: str) -> int:
    """argparse type: a whole number >= 1."""
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError("must be at least 1")
    return value


FRESH = "fresh"


def seed(text: str) -> int | str:
    """argparse type: a seed, a whole number from 0 to 2**63-1, or FRESH: a seed to draw when
    grading starts (grader.harness.judge.world.fresh_seed), what a recorded grade uses."""
    if text == FRESH:
        return FRESH
    value = int(text)
    if not 0 <= value < 2 ** 63:
        raise argparse.ArgumentTypeError("must be a whole number from 0 to 2**63-1")
    return value


def positive_number(text: str) -> float:
    """argparse type: a finite number > 0 (not nan, not inf)."""
    value = float(text)
    if not (math.isfinite(value) and value > 0):
        raise argparse.ArgumentTypeError(f"must be a finite number above 0, not {text}")
    return value


def unreadable_file(path: str) -> str | None:
    """Why `path` is not a file the grader can read, or None when it is one. Never opens
    anything but a regular file (opening a FIFO would block)."""
    try:
        info = os.stat(path)
    except (FileNotFoundError, NotADirectoryError):
        return "no such file"
    except OSError as exc:  # a symlink loop, a name too long, a folder we may not enter
        return f"cannot be read ({exc.strerror})"
    if stat.S_ISDIR(info.st_mode):
        return "is a folder, not a .py file"
    if not stat.S_ISREG(info.st_mode):
        return "is not a regular file"
    try:
        with open(path, "rb"):
            pass
    except OSError as exc:
        return f"cannot be read ({exc.strerror})"
    return None


def ungradable_file(path: str) -> str | None:
    """Why the file `path` cannot be graded (`unreadable_file`, or not a .py file: the code
    under grade is imported as a Python module), or None."""
    problem = unreadable_file(path)
    if problem or path.endswith(".py"):
        return problem
    return "not a .py file (the grader imports the code under grade as a Python module)"


def unwritable_destination(path: str) -> str | None:
    """Why the grader could not write a file at `path`, or None when it could (an existing
    file is replaced; /dev/stdout is fine). A regular file is written through a new file beside
    it (grader.report.files), so one is made and removed in its folder: a folder that only
    looks writable (/proc, a read-only mount, root's os.access) is found out before grading."""
    try:
        info = os.stat(path)
    except (FileNotFoundError, NotADirectoryError):
        return _unwritable_folder(Path(path).parent) or _cannot_create_in(Path(path).parent)
    except OSError as exc:
        return f"cannot be written ({exc.strerror})"
    if stat.S_ISDIR(info.st_mode):
        return "is a folder"
    if not os.access(path, os.W_OK):
        return "cannot be written (permission denied)"
    return _cannot_create_in(Path(path).parent) if stat.S_ISREG(info.st_mode) else None


def _cannot_create_in(folder: Path) -> str | None:
    """Why no new file can be made in `folder` (one is made and removed to know), or None."""
    probe = folder / f".grader-probe-{os.getpid()}-{secrets.token_hex(4)}.tmp"
    try:
        fd = os.open(probe, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except OSError as exc:
        return f"cannot be written ({exc.strerror})"
    os.close(fd)
    with contextlib.suppress(OSError):
        os.unlink(probe)
    return None


def _unwritable_folder(folder: Path) -> str | None:
    try:
        info = os.stat(folder)
    except FileNotFoundError:
        return f"folder {folder} does not exist"
    except NotADirectoryError:
        return f"{folder} is not a folder"
    except OSError as exc:
        return f"cannot write in folder {folder} ({exc.strerror})"
    if not stat.S_ISDIR(info.st_mode):
        return f"{folder} is not a folder"
    if not os.access(folder, os.W_OK | os.X_OK):
        return f"cannot write in folder {folder} (permission denied)"
    return None


def unusable_folder(path: str) -> str | None:
    """Create the output folder `path` (and its parents) if need be; why files cannot be
    written in it, or None when they can."""
    try:
        os.makedirs(path, exist_ok=True)
    except OSError as exc:  # a file in the way, no permission, a read-only file system
        return f"cannot be created ({exc.strerror})"
    if not os.access(path, os.W_OK | os.X_OK):
        return "is not writable (permission denied)"
    return None


def lab_folders() -> list[str]:
    """The folders of the lab's own packages that are here (lab/, solutions/, grader/): no
    report is written in them."""
    import importlib.util

    found = []
    for name in ("lab", "solutions", "grader"):
        try:
            spec = importlib.util.find_spec(name)  # a top-level name: nothing is imported
        except (ImportError, ValueError):
            continue
        found += list(spec.submodule_search_locations or []) if spec else []
    return found
