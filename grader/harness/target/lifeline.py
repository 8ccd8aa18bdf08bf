"""The target process's ties to its judge, below the protocol: where its channel's fds go
(`hide`: out of the way of the code under grade), the portable path's channel on its stdin and
stdout (`stdio_channel`), and its end once its judge has ended, however that ended
(`die_with_parent` on Linux, `watch_parent` on the portable path). The server (`server.serve`)
calls these as the process starts; what it says over the channel is the server's.

It runs beside the code under grade, in the target process. May import: the standard library,
`grader.harness.processes` (the jail's C library) and `threads` (the server's own threads, which
no wait for the code's threads waits for). Never the judge's side (`grader.harness.judge`).
"""

from __future__ import annotations

import os
import threading

from grader.harness.processes import jail
from .threads import SERVER_THREADS

#: hide() puts the channel's fds at a random number from 64 (above those code probes first)
#: up to this: the process's table of fds stays at its first size. Listing /proc/self/fd, as
#: the file watch does at every call and callback, takes time in proportion to that table's
#: size, not to the fds open: with a channel fd at 19,498 each listing took 4 times as long.
HIDE_BELOW = 1024


def hide(fd: int) -> int:
    """Move `fd` to a random number from 64 to HIDE_BELOW (close-on-exec), close the original.
    Where there is no fcntl (Windows) it stays where it is, not inherited."""
    try:
        import fcntl
        import resource
    except ImportError:
        os.set_inheritable(fd, False)
        return fd
    soft, _ = resource.getrlimit(resource.RLIMIT_NOFILE)
    top = min(soft if soft > 0 else HIDE_BELOW, HIDE_BELOW) - 8
    low = 64 + random_below(max(65, top) - 64)
    moved = fcntl.fcntl(fd, fcntl.F_DUPFD_CLOEXEC, low)
    os.close(fd)
    return moved


def random_below(n: int) -> int:
    """A number from 0 to n - 1, each as likely, from the system's random source: what
    `random.SystemRandom().randrange(n)` gives (its getrandbits, then drawn again while out of
    range), without importing `random` into every target process (a fresh interpreter's
    start, on the portable path)."""
    bits = n.bit_length()
    size = (bits + 7) // 8
    while True:
        number = int.from_bytes(os.urandom(size), "big") >> (size * 8 - bits)
        if number < n:
            return number


def watch_parent() -> None:
    """The portable path: end this process once the one that started it (its judge: a lane,
    the preflight's judge) has ended, however it ended. There is no death signal there, and a
    judge killed while the code under grade ran an endless loop left it running forever. A
    thread waits on the parent's process handle (Windows), or sees this process handed to
    another parent (POSIX)."""
    parent = os.getppid()
    try:
        import _winapi  # Windows only
    except ImportError:
        _winapi = None

    def wait() -> None:
        if _winapi is not None:
            try:
                handle = _winapi.OpenProcess(_SYNCHRONIZE, False, parent)
                _winapi.WaitForSingleObject(handle, _winapi.INFINITE)
            except OSError:  # gone already, or not ours to wait for
                pass
        else:
            tick = threading.Event()  # never set: a wait the code under grade cannot shorten
            while os.getppid() == parent:
                tick.wait(PARENT_POLL)
        os._exit(0)

    watcher = threading.Thread(target=wait, name="grader-parent-watch", daemon=True)
    watcher.start()
    SERVER_THREADS.add(watcher.ident)


PARENT_POLL = 0.2  # seconds between two looks at the parent (POSIX)
_SYNCHRONIZE = 0x00100000


def stdio_channel() -> tuple[int, int]:
    """The portable path's channel (grader.harness.processes.portable.spawn_target): this
    process's stdin and stdout, the only handles a spawned child inherits on Windows, moved
    to fds of their own; fds 0 and 1 then read and write the null device, so nothing the code
    under grade does with them reaches the channel."""
    read_fd, write_fd = os.dup(0), os.dup(1)
    watch_parent()
    null = os.open(os.devnull, os.O_RDWR)
    os.dup2(null, 0)
    os.dup2(null, 1)
    os.close(null)
    return read_fd, write_fd


def die_with_parent() -> None:
    """Linux: SIGKILL this process when the one that started it (the judge, or the zygote that
    forked it for the judge) ends, however that ends: a grader killed with SIGKILL leaves no
    target running, even where no subreaper is left to sweep it. Elsewhere a no-op."""
    import signal  # (imported at need: a spare of the portable path never needs it)

    try:
        jail.c_library().prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    except Exception:  # no C library (Windows), no prctl (macOS): the judge kills it
        return
    if os.getppid() == 1:  # it ended before the line above: nobody is left to serve
        os._exit(0)


_PR_SET_PDEATHSIG = 1
