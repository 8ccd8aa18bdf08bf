"""Where the grader's temporary folders live, and who removes them.

Every folder a grade makes (the preflight's probe, each check's database folder, each target
process's scratch folder, batch's and the autograder's work folders) is made under one *root*
per grading process: `BASE/leaselab-run-PID-XXXXXXXX` (mkdtemp, mode 0700), where BASE is the
temporary folder when TMPDIR is set (batch gives each grade its own; a test gives its own), else
the RAM folder (/dev/shm, when it has room: SQLite's fsyncs cost nothing there), else the
temporary folder. A folder is owned by a process that outlives whoever may be killed while
using it:

- the root, by the process that made it (the grading process: `python -m grader`, watch, batch,
  the autograder, a pytest session): removed when it exits (atexit), and, if it was killed
  before, by the next grader that starts in the same BASE (`remove_stale`: a root whose PID no
  longer runs);
- a lane's folder (`grader.runner.lanes`), by the grading process, once the lane is reaped
  (the lane may be killed: its backstop, Ctrl-C, a resource limit);
- a forked judge's folder (`grader.harness.processes.sandbox`, the probe's judge included), by the
  process that forked it, once it is swept (its timeout, a resource limit, a kill).

A process forked with a folder of its own `enter`s it: what it makes goes there, and a lane or a
judge is jailed to it (grader.harness.processes.jail.enter_judge: the only folder it may write). Folders are
removed with `shutil.rmtree`, which on Linux works on directory fds and never follows a
symlink (a target process may leave any name in its scratch folder).

Lives here: the folders' places; stdlib only.
"""

from __future__ import annotations

import atexit
import os
import re
import shutil
import stat
import tempfile

RAM_FOLDER = "/dev/shm"
RAM_NEEDED = 512 * 1024 * 1024  # free bytes: room for a check's file-size limit, and more
ROOT_PREFIX = "leaselab-run-"
_ROOT_NAME = re.compile(re.escape(ROOT_PREFIX) + r"(\d+)-")

_root: str | None = None  # this process tree's root (inherited by forks)
_owner: int | None = None  # the pid that made it, and removes it
_here: str | None = None  # where this process makes its folders (None: the root)


def ram_folder() -> str | None:
    """A RAM-backed folder with room to spare (SQLite's fsyncs cost nothing there; a SIGKILLed
    process loses nothing there either, so the crash check stays honest), else None."""
    try:
        stats = os.statvfs(RAM_FOLDER)
    except OSError:
        return None
    room = stats.f_bavail * stats.f_frsize
    return RAM_FOLDER if room >= RAM_NEEDED and os.access(RAM_FOLDER, os.W_OK) else None


def base() -> str:
    """Where roots are made: the temporary folder when TMPDIR says where it is, else the RAM
    folder where there is one, else the temporary folder."""
    if os.environ.get("TMPDIR"):
        return tempfile.gettempdir()
    return ram_folder() or tempfile.gettempdir()


def root() -> str:
    """This process tree's root, made on first use (then owned by this process: removed at its
    exit). A process that forks children that make folders calls it before it forks."""
    global _root, _owner
    if _root is None or not os.path.isdir(_root):
        where = base()
        remove_stale(where)
        _root = tempfile.mkdtemp(prefix=f"{ROOT_PREFIX}{os.getpid()}-", dir=where)
        if _owner is None:
            atexit.register(_remove_own_root)
        _owner = os.getpid()
    return _root


def folder() -> str:
    """Where this process makes its folders: its own (`enter`), else the root."""
    return _here if _here is not None and os.path.isdir(_here) else root()


def make(prefix: str) -> str:
    """A fresh folder (mode 0700) where this process makes its folders."""
    return tempfile.mkdtemp(prefix=prefix, dir=folder())


def enter(path: str) -> None:
    """In a forked child given a folder of its own: make everything there from now on."""
    global _here
    _here = path


def forget() -> None:
    """In a forked child that starts as a fresh grader would (the batch's fork server's grades):
    none of its parent's folders is its own."""
    global _root, _owner, _here
    _root = _owner = _here = None


def remove(path: str | None) -> None:
    """Remove `path` and everything in it, never through a symlink; what cannot be removed is
    left (its root's owner tries again)."""
    if path:
        shutil.rmtree(path, ignore_errors=True)


def _remove_own_root() -> None:
    if _root is not None and _owner == os.getpid():
        remove(_root)


def remove_stale(where: str) -> None:
    """Remove the roots in `where` whose process no longer runs (killed before its exit), and
    that belong to this user. A PID that runs again (reused) keeps its root: never a live one's."""
    try:
        entries = list(os.scandir(where))
    except OSError:
        return
    me = os.getuid() if hasattr(os, "getuid") else None
    for entry in entries:
        found = _ROOT_NAME.match(entry.name)
        if found is None or int(found.group(1)) == os.getpid():
            continue
        try:
            info = entry.stat(follow_symlinks=False)
        except OSError:
            continue
        if not stat.S_ISDIR(info.st_mode) or (me is not None and info.st_uid != me):
            continue
        if not _alive(int(found.group(1))):
            remove(entry.path)


def _alive(pid: int) -> bool:
    if not hasattr(os, "getuid"):  # no POSIX signals (Windows: kill(pid, 0) is a Ctrl-C there)
        return True  # left for its owner, who removes it at its exit
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:  # PermissionError: someone else's process runs with that pid
        return True
    return True
