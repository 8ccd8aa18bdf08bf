"""Process hygiene: nothing a check, a grade or a lane started outlives it. A subreaper gets the
orphans of its descendants however they detached (`become_subreaper`), finds them among its
children (`child_pids`, `own_children`: Linux /proc) and ends them (`sweep`, `end_strays`);
`kill_session` ends a whole session. And what makes a process of the grader's a poor target
for the code under grade: not dumpable (`not_dumpable`), stdin from /dev/null (`redirect_stdin`).
Used by the sandbox (grader.harness.processes.sandbox), the runner's lanes, watch and the instructor's
batch.
"""

from __future__ import annotations

import os
import signal
import time

_PR_SET_CHILD_SUBREAPER = 36


def become_subreaper(again: bool = False) -> None:
    """Linux: orphans of our descendants become our children, not init's, however they
    detached (a double fork, setsid): so `sweep` can find and end them. Elsewhere a no-op.
    `again`: in a forked child (a fork does not inherit the setting)."""
    global _subreaper
    if _subreaper is None or again:
        try:
            from .jail import c_library  # ctypes, loaded once per process

            _subreaper = c_library().prctl(_PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == 0
        except (OSError, AttributeError):
            _subreaper = False


_subreaper: bool | None = None


def processes():
    """(pid, state, parent pid, session id) of every process (Linux /proc; elsewhere none)."""
    try:
        entries = os.listdir("/proc")
    except OSError:
        return
    for entry in entries:
        if not entry.isdigit():
            continue
        stat = _read(f"/proc/{entry}/stat")
        if stat is None:
            continue
        fields = stat[stat.rfind(b")") + 2:].split()
        yield int(entry), fields[0].decode(), int(fields[1]), int(fields[3])


def child_pids() -> set[int]:
    """Our live child processes (zombies included: they are reaped by whoever ends them).

    Linux: the kernel's own lists of our children (each thread's `children` file, a few bytes),
    read until two reads in a row agree. A scan of /proc reads every process's stat instead
    (about 60 µs each: tens of ms a scan on a busy machine, several scans a grade). One read can
    skip a child only while a thread of ours reaps another (the kernel then walks the list by
    position), so two equal reads in a row did not. Elsewhere, where those lists cannot be read,
    or where the reads keep differing: the whole scan."""
    last = _listed_children()
    for _ in range(8):  # a bound, not a clock
        if last is None:
            break
        again = _listed_children()
        if again == last:
            return last
        last = again
    me = os.getpid()
    return {pid for pid, _, parent, _ in processes() if parent == me}


def own_children() -> set[int]:
    """`child_pids()` in one read of this process's threads' `children` lists (exact for a
    process that reaps nothing meanwhile). Where they cannot be read, the whole scan."""
    listed = _listed_children()
    return child_pids() if listed is None else listed


def _listed_children() -> set[int] | None:
    """The pids in this process's threads' `children` files (Linux /proc, CONFIG_PROC_CHILDREN),
    or None where one cannot be read (no such file, a thread that ended while listed)."""
    try:
        tasks = os.listdir("/proc/self/task")
    except OSError:
        return None
    pids: set[int] = set()
    for task in tasks:
        listed = _read(f"/proc/self/task/{task}/children")
        if listed is None:
            return None
        pids.update(int(pid) for pid in listed.split())
    return pids


def _read(path: str) -> bytes | None:
    """A /proc file's whole text (os.open: none of open()'s buffering and tty checks, which
    cost more than the read, for every process of the machine in a scan); None where it cannot
    be read. Read to its end: a long list of children may pass one read."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
    except OSError:
        return None
    chunks = []
    try:
        while True:
            chunk = os.read(fd, 65536)
            if not chunk:
                return b"".join(chunks)
            chunks.append(chunk)
    except OSError:
        return None
    finally:
        os.close(fd)


def sweep(group: int, before: set[int]) -> None:
    """End every process a check left behind: its process group, and every process that
    became our child since (`before`: our children then), orphans of a detached grandchild
    included. Reaps them all."""
    try:
        os.killpg(group, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
    end_strays(before)


def end_strays(keep: set[int]) -> None:
    """Kill and reap every child of this process but `keep` (orphans a subreaper inherited)."""
    for _ in range(500):  # a bound, not a clock: each round ends or reaps what it finds
        strays = child_pids() - keep
        if not strays:
            return
        for pid in strays:
            try:
                os.kill(pid, signal.SIGKILL)
                os.waitpid(pid, os.WNOHANG)
            except (ProcessLookupError, ChildProcessError, PermissionError):
                pass
        time.sleep(0.002)


def not_dumpable() -> None:
    """Linux: no other process of the same user (root excepted) may open this process's fds
    through /proc/PID/fd, read its memory or ptrace it; elsewhere a no-op."""
    try:
        from .jail import c_library

        c_library().prctl(_PR_SET_DUMPABLE, 0, 0, 0, 0)
    except (OSError, AttributeError):
        pass


_PR_SET_DUMPABLE = 4


def redirect_stdin() -> None:
    devnull = os.open(os.devnull, os.O_RDONLY)
    os.dup2(devnull, 0)
    os.close(devnull)


def kill_session(sid: int) -> None:
    """SIGKILL every process of session `sid` (a grade and whatever it left running): its
    group at once, then every live member /proc still lists, until none is left (Linux /proc;
    elsewhere its first group only)."""
    try:
        os.killpg(sid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
    for _ in range(100):  # a bound, not a clock
        members = [pid for pid, state, _, session in processes()
                   if session == sid and state != "Z"]
        if not members:
            return
        for pid in members:
            try:
                os.kill(pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
        time.sleep(0.01)  # let the kernel deliver the signals before looking again
