"""The batch's fork server: one prepared process that forks a grade per submission, so that a
grade costs a fork, not the grader's start-up (an interpreter and its imports).

`batch` starts it once, before its threads (`isolated.forking()`): a fresh interpreter,
`python -m grader.instructor.fork_server`, with the environment every grade gets but its
TMPDIR (so what an interpreter reads at start-up, PYTHONPATH and PYTHONDONTWRITEBYTECODE among
it, is already in effect). It imports the grader's command (`grader.cli`, by module path as
`python -m grader` runs it) and the modules a grade imports after it (`warm`: the harness, the
checks, the runner) and nothing else: never the code under grade (that runs in target
processes, as ever), never a check's state. It is single-threaded, so a fork never copies a lock
another thread held; it is not dumpable, so a target of the same user cannot read or write its
memory; it is a subreaper, so what a grade leaves detached comes back to it, and it ends that.

The door, the leases and the loop are the zygote's (grader.harness.processes.forkloop, `ForkLoop`): an
AF_UNIX SOCK_SEQPACKET socketpair, one datagram per request, a fresh stream socket (the lease)
per grade, the answers `pid N` (with a pidfd) and `status S` on it, so that the requester holds
a `zygote.ForkedTarget`.

    {"op": "grade", "argv": [str...], "cwd": str, "env": {str: str}}   fds: lease, log[, err]
    {"op": "exit"}                                                     fds: lease

A grade forks. The child does what `subprocess.Popen(["python", "-m", "grader", *argv], cwd=,
env=, stdin=DEVNULL, stdout=log, stderr=STDOUT, start_new_session=True, close_fds=True)` did
before the grader ran: setsid(); stdin on /dev/null, stdout and stderr on the log (stderr on `err` when one is
given: the project's tests read the two apart); every other
fd closed; signal handlers as a fresh interpreter has them; dumpable again; cwd, `sys.path[0]`,
`sys.argv` and the environment as given (TMPDIR's cache in tempfile dropped); then
`grader.cli.main(argv)` as grader/__main__.py runs it, its non-daemon threads joined and its
atexit functions run (as an interpreter's end does: the grade's zygote is stopped there), and
os._exit with its code. A request whose environment differs from the server's in what an
interpreter reads at start-up is refused (`error environment`): the requester runs that grade
the old way, in a fresh interpreter.

After a grade's process has ended, and before it is reaped (so its pid, its session's id,
cannot be reused meanwhile), every process left in its session is killed; then every child of
the server that is not a grade in progress (orphans of an ended grade) is killed and reaped;
only then is `status S` answered. A byte "k" on the lease, or the lease closing, kills the
grade's session (the status follows the same way). "exit", the door's other end closing,
SIGTERM, or the batch's end (PR_SET_PDEATHSIG) end every grade and the server.
"""

from __future__ import annotations

import atexit
import gc
import importlib
import importlib.util
import os
import signal
import socket
import sys
import tempfile
import threading
import time
import traceback

from grader.harness.processes import forkloop, hygiene, workroot, zygote
from grader.harness.processes.forkloop import close_fds, exit_code, prctl, send_answer, startup_env

_PR_SET_CHILD_SUBREAPER = 36
#: The module `python -m grader` runs, and the command it calls (named by path, as the CLI names
#: its subcommands: the instructor's layer sits below the CLI's).
GRADER_MAIN = "grader.__main__"
GRADER_CLI = "grader.cli"


class ForkServer(forkloop.ForkLoop):
    """The zygote's loop (`forkloop.ForkLoop`) with one request of its own: fork a grade."""

    MAX_FDS = 4
    CRASH_CODE = 70  # a grade that could not even start the grader: batch says it crashed

    def __init__(self, door: socket.socket):
        super().__init__(door)
        self.startup_env = startup_env(os.environ)

    def dispatch(self, op: str, request: dict, lease: socket.socket, fds: list[int]) -> bool:
        if op == "grade" and len(fds) in (1, 2):
            self.grade(request, lease, fds)
            return True
        return False

    def grade(self, request: dict, lease: socket.socket, fds: list[int]) -> None:
        """Fork the grade `request` asks for; its stdout and stderr on fds[0], or its stderr on
        fds[1] when given."""
        argv, cwd, env = request.get("argv"), request.get("cwd"), request.get("env")
        if type(argv) is not list or any(type(a) is not str for a in argv) or \
                type(cwd) is not str or type(env) is not dict or \
                any(type(k) is not str or type(v) is not str for k, v in env.items()):
            send_answer(lease, "error malformed")
            lease.close()
            close_fds(fds)
            return
        if startup_env(env) != self.startup_env:
            send_answer(lease, "error environment")  # a fork cannot apply it: a fresh interpreter
            lease.close()
            close_fds(fds)
            return
        self.fork(lease, fds, lambda: self.become_grade(lease, argv, cwd, env, fds))

    def kill(self, grade: forkloop.Child) -> None:
        """SIGKILL the grade's session (its pid is unreaped: that session is its own) and the
        grade itself, in case it was killed before its setsid()."""
        if grade.pid not in self.children:
            return
        hygiene.kill_session(grade.pid)
        try:
            os.kill(grade.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass

    # -- ended grades ------------------------------------------------------------------------------
    def reap(self) -> None:
        """Every grade that has ended: its session killed while its pid is still held, then
        reaped, the orphans of the server ended, and its status told."""
        ended = []
        for pid in list(self.children):
            try:
                info = os.waitid(os.P_PID, pid, os.WEXITED | os.WNOHANG | os.WNOWAIT)
            except ChildProcessError:
                info = None
            if info is None or info.si_pid == 0:
                continue
            hygiene.kill_session(pid)  # what it left in its session, as after every grade
            try:
                _, status = os.waitpid(pid, 0)
            except ChildProcessError:
                status = None
            ended.append((self.children.pop(pid), status))
        if not ended:
            return
        hygiene.end_strays(keep=set(self.children))  # what they left detached came back to us
        for grade, status in ended:
            if grade.lease is not None:
                if status is not None:
                    send_answer(grade.lease, f"status {status}")
                self.drop_lease(grade)

    def end_all(self) -> None:
        for grade in list(self.children.values()):
            self.kill(grade)
        deadline = time.monotonic() + 5.0
        while self.children and time.monotonic() < deadline:
            self.reap()
            time.sleep(0.002)
        hygiene.end_strays(keep=set())

    # -- the child ---------------------------------------------------------------------------------
    def become_grade(self, lease: socket.socket, argv: list, cwd: str, env: dict,
                     fds: list[int]) -> int:
        """In the forked child: what Popen did before exec, then `python -m grader argv`."""
        self.leave_loop(lease, fds[0], fds[1] if len(fds) > 1 else None)
        self.children.clear()
        os.closerange(3, 1 << 30)
        os.chdir(cwd)
        os.environ.clear()
        os.environ.update(env)
        tempfile.tempdir = None  # its cache of TMPDIR, as an interpreter starts with it
        workroot.forget()  # it makes its own work root, in its own TMPDIR
        sys.dont_write_bytecode = bool(env.get("PYTHONDONTWRITEBYTECODE"))
        if sys.path and sys.path[0] == _STARTED_IN:  # `-m` put its cwd first: the grade's cwd
            sys.path[0] = os.getcwd()
        main_file = importlib.util.find_spec(GRADER_MAIN).origin
        sys.argv = [main_file, *argv]
        importlib.invalidate_caches()
        zygote.as_fresh_interpreter()  # a grade starts its own zygote
        return run_grader(argv)


def run_grader(argv: list[str]) -> int:
    """`python -m grader argv` in this process, to its end: grader/__main__.py's body, then
    what an interpreter does as it ends (join non-daemon threads, run atexit functions, flush).
    The exit code."""
    try:
        try:
            code = exit_code(importlib.import_module(GRADER_CLI).main(argv))
            sys.stdout.flush()
        except BrokenPipeError:  # as grader/__main__.py: the reader has gone, not an error
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
            code = 0
    except SystemExit as exc:
        code = exit_code(exc.code)
    except BaseException:  # as an interpreter ends on an uncaught exception
        traceback.print_exc()
        code = 1
    for end in (getattr(threading, "_shutdown", None), getattr(atexit, "_run_exitfuncs", None)):
        try:
            if end is not None:
                end()
        except BaseException:
            pass
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except BaseException:
            pass
    return code


_STARTED_IN = os.getcwd()
#: Packages whose modules every grade imports as it runs its checks: imported once, here (code
#: and the registry of checks, holding no state of any check or target).
WARM_PACKAGES = ("grader.harness", "grader.checks", "grader.runner")


def warm() -> None:
    """Import the grader's command and what a grade imports after it (~0.25 s a grade)."""
    importlib.import_module(GRADER_CLI)
    names = []
    for package in WARM_PACKAGES:
        spec = importlib.util.find_spec(package)
        for location in spec.submodule_search_locations or ():
            for name in sorted(os.listdir(location)):
                stem, ext = os.path.splitext(name)
                if ext == ".py" and not stem.startswith("_"):
                    names.append(f"{package}.{stem}")
    for name in names:
        try:
            importlib.import_module(name)
        except Exception:  # the grade imports it itself (and says what is wrong)
            pass


def main(argv: list[str] | None = None) -> int:
    door, code = forkloop.server_door(argv, "grader.instructor.fork_server")
    if door is None:
        return code
    prctl(_PR_SET_CHILD_SUBREAPER, 1)  # what a grade leaves detached comes back to us
    warm()
    gc.collect()
    gc.freeze()  # the children share these pages rather than copy them at their first GC
    return ForkServer(door).run()


if __name__ == "__main__":
    # Run from the module imported under its real name (as the zygote does).
    from grader.instructor import fork_server

    sys.exit(fork_server.main())
