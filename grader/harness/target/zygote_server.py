"""The zygote itself (`python -m grader.harness.target.zygote_server --door FD --parent PID
[--pdeathsig]`): the fork loop (`grader.harness.processes.forkloop`) serving "start" (fork a target
server, set up as a fresh interpreter would be) and "settle". It imports what a target server
needs and nothing else; the judge's side, and what the zygote is for, are in
`grader.harness.processes.zygote`.
"""

from __future__ import annotations

import functools
import gc
import importlib
import importlib.machinery
import os
import signal
import socket
import sys
import time

from grader.harness.processes import jail
from grader.harness.wire import values
from grader.harness.processes.forkloop import (REAP_TIMEOUT, RLIMITS, Child, ForkLoop, close_fds,
                                               send_answer, server_door)

try:
    import resource
except ImportError:  # not on this platform: no zygote either
    resource = None


class Zygote(ForkLoop):
    """The zygote's requests: start a target server, settle."""

    def dispatch(self, op: str, request: dict, lease: socket.socket, fds: list[int]) -> bool:
        if op == "start" and len(fds) in (2, 3):
            self.start(request, lease, fds[0], fds[1], fds[2] if len(fds) == 3 else None)
            return True
        if op == "settle" and not fds:
            self.settle()
            send_answer(lease, "settled")
            lease.close()
            return True
        return False

    def start(self, request: dict, lease: socket.socket, read_fd: int, write_fd: int,
              log_fd: int | None) -> None:
        fds = [read_fd, write_fd] + ([log_fd] if log_fd is not None else [])
        try:
            spec, cwd, env = request["spec"], request["cwd"], request["env"]
            limits, umask = request["limits"], request["umask"]
            if type(spec) is not str or type(cwd) is not str or type(env) is not dict or \
                    type(limits) is not list or (umask is not None and type(umask) is not int):
                raise TypeError("a malformed start")
        except (KeyError, TypeError):
            lease.close()
            close_fds(fds)
            return
        from . import compiled  # (imported by main)

        compiled.prepare(spec, cwd)  # the code under grade compiled here, once, not in each
        self.fork(lease, fds, lambda: self.become_target(lease, spec, cwd, env, limits, umask,
                                                         read_fd, write_fd, log_fd))

    def kill(self, child: Child) -> None:
        if child.pid not in self.children:
            return  # reaped: its pid may belong to someone else now
        child.killed = True
        for kill in (lambda: os.killpg(child.pid, signal.SIGKILL),
                     lambda: os.kill(child.pid, signal.SIGKILL)):
            try:
                kill()
            except (ProcessLookupError, PermissionError):
                pass

    # -- children ----------------------------------------------------------------------------------
    def reap(self) -> None:
        while True:
            try:
                pid, status = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                return
            if pid == 0:
                return
            child = self.children.pop(pid, None)
            if child is not None and child.lease is not None:
                send_answer(child.lease, f"status {status}")
                self.drop_lease(child)

    def settle(self) -> None:
        """Kill the children whose lease has closed (events not yet served), wait for every
        killed child that nobody waits for any more."""
        for fd, _ in self.poll.poll(0):
            if fd in self.leases:
                self.serve_lease(fd)
        self.wait_for(lambda: [c for c in self.children.values()
                               if c.killed and c.lease is None])

    def end_all(self) -> None:
        for child in list(self.children.values()):
            self.kill(child)
        self.wait_for(lambda: list(self.children.values()))

    def wait_for(self, pending) -> None:
        deadline = time.monotonic() + REAP_TIMEOUT
        while True:
            self.reap()
            if not pending() or time.monotonic() > deadline:
                return
            time.sleep(0.001)

    # -- the child ---------------------------------------------------------------------------------
    def become_target(self, lease: socket.socket, spec: str, cwd: str, env: dict, limits: list,
                      umask: int | None, read_fd: int, write_fd: int, log_fd: int | None) -> int:
        """In the forked child: the Popen path's set-up, then the target server's life."""
        self.leave_loop(lease, log_fd)
        low, high = sorted((read_fd, write_fd))
        os.closerange(3, low)
        os.closerange(low + 1, high)
        os.closerange(high + 1, 1 << 30)
        if umask is not None:
            os.umask(umask)
        _set_limits(limits)
        os.chdir(cwd)
        if sys.path and sys.path[0] == _STARTED_IN:  # `-m` put its cwd first: the child's cwd
            sys.path[0] = os.getcwd()
        for name in list(os.environ):  # os.environ.clear(), without a popitem() per name
            del os.environ[name]
        os.environ.update({str(k): str(v) for k, v in env.items()})
        if "tempfile" in sys.modules:  # its cache of TMPDIR, as an interpreter starts with it
            sys.modules["tempfile"].tempdir = None
        from . import server as target_server

        sys.argv = [target_server.__file__, "--in", str(read_fd), "--out", str(write_fd), spec]
        # The import system's listings of sys.path's folders, as a fresh interpreter makes them
        # at its start: now, before serve() may enter a jail that can no longer list them.
        _refresh_listings()
        return target_server.serve(read_fd, write_fd, spec)


_STARTED_IN = os.getcwd()


def _refresh_listings() -> None:
    """`importlib.invalidate_caches()`, then every sys.path folder listed, but the folders of
    the interpreter's own installation (its standard library, its site-packages) listed again
    only if they changed (their mtime, as the import system looks at it anyway): nothing there
    changes during a grade, and listing them is most of the cost."""
    stable = _installation()
    for name, finder in list(sys.path_importer_cache.items()):
        if finder is None or not os.path.isabs(name):
            del sys.path_importer_cache[name]  # as PathFinder.invalidate_caches does
        elif hasattr(finder, "invalidate_caches") and not name.startswith(stable):
            finder.invalidate_caches()
    namespace = getattr(importlib._bootstrap_external, "_NamespacePath", None)
    if namespace is not None and hasattr(namespace, "_epoch"):
        namespace._epoch += 1  # namespace packages' paths computed again (PathFinder does it)
    for finder in sys.meta_path:
        if finder is not importlib.machinery.PathFinder and hasattr(finder, "invalidate_caches"):
            finder.invalidate_caches()
    importlib.machinery.PathFinder.find_spec("_zygote_lists_sys_path_")


@functools.cache
def _installation() -> tuple[str, ...]:
    """The interpreter's own folders (`jail.python_folders`), each ending in a separator: found
    once, by the zygote before it forks (its children have the answer)."""
    return tuple(os.path.join(os.path.abspath(folder), "") for folder in jail.python_folders())


def _set_limits(limits: list) -> None:
    for item in limits:
        try:
            name, soft, hard = item
            if name not in RLIMITS or type(soft) is not int or type(hard) is not int:
                continue
            resource.setrlimit(getattr(resource, name), (soft, hard))
        except (ValueError, OSError, TypeError):
            pass  # as a Popen child can't go above the zygote's hard limit, neither can we


def main(argv: list[str] | None = None) -> int:
    door, code = server_door(argv, "grader.harness.target.zygote_server")
    if door is None:
        return code
    from . import compiled, server as target_server  # noqa: F401  (what every child needs, once)
    import fcntl  # noqa: F401  (server.hide's, a shared library: loaded once, not in each child)

    for name in target_server.AHEAD:  # (what the server leaves to a fresh interpreter's need)
        importlib.import_module(name)
    values.library_dirs()
    jail.prepare()
    compiled.install()
    _installation()

    gc.collect()
    gc.freeze()  # the children share these pages rather than copy them at their first GC
    try:  # the C heap the imports freed given back: fewer pages for each fork to map and copy
        jail.c_library().malloc_trim(0)
    except (OSError, AttributeError):  # no C library, or one without malloc_trim (not glibc)
        pass
    return Zygote(door).run()


if __name__ == "__main__":
    # As target_server does: run from the module imported under its real name, so that the
    # children share one copy of it (and of target_server) with anything they import.
    from . import zygote_server

    sys.exit(zygote_server.main())
