"""Simulated Windows, at every interpreter start of a process whose PYTHONPATH holds this folder:
what a Windows Python lacks is taken away from a POSIX one before anything else runs
(tests/test_portable.py). Not a full Windows: the POSIX `subprocess` still works underneath, but
`pass_fds`, `preexec_fn` and `start_new_session` are refused as Windows' Popen would, and
`select.select` takes sockets only, as Windows' does. No `pty`, no `os.wait3`/`os.wait4` (the
CPU and memory of a process tree: bench.measure), no load average."""

import os
import select
import signal
import socket
import subprocess
import sys

for _module, _names in ((os, ("fork", "forkpty", "setsid", "setpgrp", "setpgid", "killpg",
                              "getpgid", "pidfd_open", "sched_getaffinity", "register_at_fork",
                              "uname", "getuid", "geteuid", "getgid", "getegid",
                              "wait3", "wait4", "getloadavg")),
                        (signal, ("SIGALRM", "setitimer", "getitimer", "ITIMER_REAL", "alarm",
                                  "pthread_kill", "SIGCHLD")),
                        (socket, ("send_fds", "recv_fds", "sendmsg", "recvmsg"))):
    for _name in _names:
        if hasattr(_module, _name):
            delattr(_module, _name)

_MISSING = frozenset({"fcntl", "resource", "termios", "pty", "tty", "grp", "pwd"})


class _Missing:
    """First on the meta path: the POSIX-only modules do not exist."""

    @staticmethod
    def find_spec(name, path=None, target=None):
        if name in _MISSING:
            raise ModuleNotFoundError(f"No module named {name!r} (simulated Windows)", name=name)
        return None

    @staticmethod
    def invalidate_caches():
        pass


for _name in _MISSING:
    sys.modules.pop(_name, None)
sys.meta_path.insert(0, _Missing)

_popen_init = subprocess.Popen.__init__


def _windows_popen(self, *args, **kwargs):
    for _key in ("pass_fds", "preexec_fn", "start_new_session", "process_group"):
        if kwargs.get(_key):
            raise ValueError(f"{_key} is not supported on Windows (simulated)")
    return _popen_init(self, *args, **kwargs)


subprocess.Popen.__init__ = _windows_popen

_select = select.select


def _sockets_only(rlist, wlist, xlist, *timeout):
    import stat

    for _fd in (*rlist, *wlist, *xlist):
        _fd = _fd if isinstance(_fd, int) else _fd.fileno()
        if not stat.S_ISSOCK(os.fstat(_fd).st_mode):
            raise OSError(10038, "select: not a socket (simulated Windows)")
    return _select(rlist, wlist, xlist, *timeout)


select.select = _sockets_only
for _name in ("poll", "epoll"):
    if hasattr(select, _name):
        delattr(select, _name)
