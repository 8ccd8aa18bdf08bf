"""grader.harness.processes.hygiene: the children a process has, read from the kernel's own
lists, are the ones a scan of every process finds (zombies, and orphans a subreaper inherited,
included)."""

from __future__ import annotations

import os
import time

import pytest

from grader.harness.processes import hygiene

pytestmark = pytest.mark.skipif(not os.path.isdir("/proc/self/task"), reason="Linux /proc")


def scanned() -> set[int]:
    """Our children as the whole scan of /proc finds them (the slow way child_pids replaces)."""
    me = os.getpid()
    return {pid for pid, _, parent, _ in hygiene.processes() if parent == me}


def test_child_pids_lists_a_zombie_and_an_inherited_orphan_as_the_scan_does():
    """In a forked subreaper (never the pytest process itself): a live child, a zombie, and the
    orphan of a child that exited after forking it (a double fork) are all listed, in one
    agreement with the scan; after they are ended and reaped none is."""
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # the subreaper under test
        code = 1
        try:
            os.close(read)
            hygiene.become_subreaper(again=True)
            live = os.fork()
            if live == 0:
                time.sleep(60)
                os._exit(0)
            zombie = os.fork()
            if zombie == 0:
                os._exit(0)
            middle = os.fork()
            if middle == 0:  # forks a grandchild, then exits: the grandchild comes to us
                if os.fork() == 0:
                    time.sleep(60)
                    os._exit(0)
                os._exit(0)
            os.waitpid(middle, 0)
            deadline = time.monotonic() + 30  # a safety net: the orphan's reparenting is quick
            while len(hygiene.child_pids()) < 3 and time.monotonic() < deadline:
                time.sleep(0.01)
            while os.waitid(os.P_PID, zombie, os.WEXITED | os.WNOHANG | os.WNOWAIT) is None:
                time.sleep(0.01)  # exited, not reaped: a zombie
            listed, whole = hygiene.child_pids(), scanned()
            ok = listed == whole and len(listed) == 3 and {live, zombie} <= listed \
                and hygiene.own_children() == listed
            hygiene.end_strays(set())
            ok = ok and hygiene.child_pids() == set() == scanned()
            code = 0 if ok else 3
            os.write(write, repr((sorted(listed), sorted(whole))).encode())
        finally:
            os._exit(code)
    os.close(write)
    told = b""
    while chunk := os.read(read, 4096):
        told += chunk
    os.close(read)
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0, told.decode()
