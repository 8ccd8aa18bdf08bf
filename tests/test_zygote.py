"""The zygote (grader/harness/processes/zygote.py, zygote_server.py, forkloop.py): target processes forked from one prepared process
behave as spawned ones do, and nothing it started outlives its owner.

Where a test needs an owner it can kill or limit, the owner is a small script run in a child
process (never this test process). Waits are bounded safety nets, not clocks: a process that
must be gone is looked for until it is, for at most a few seconds.
"""

from __future__ import annotations

import gc
import json
import os
import signal
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import pytest

from lab import store
from lab.store import Claim
from grader.harness.processes import portable
from grader.harness.target import server as target_server
from grader.harness.judge import target_client
from grader.harness.judge.target_client import TargetProcess
from grader.harness.judge.target_errors import TargetEnded, TargetLoadError
from grader.harness.processes import launch, zygote
from grader.harness.processes.launch import spawn
from grader.harness.wire.values import RaisedInTarget

ROOT = Path(__file__).resolve().parent.parent
LEASE_MS = 1000

pytestmark = pytest.mark.skipif(not zygote.supported() or not Path("/proc/self/stat").exists(),
                                reason="the zygote needs Linux (fd passing, /proc)")

LAUNCHERS = {"spawn": spawn, "zygote": zygote.launch_forked}


# -- helpers ---------------------------------------------------------------------------------------
def fresh_db(tmp_path: Path, name: str = "queue.db", jobs: int = 3) -> Path:
    path = tmp_path / name
    conn = store.connect(path, busy_timeout_ms=1000)
    store.init_db(conn)
    for n in range(jobs):
        store.enqueue(conn, qty=5 + n, deadline=1_000_000)
    conn.close()
    return path


def write_target(tmp_path: Path, body: str, name: str = "target.py") -> str:
    source = "from solutions.queue import claim, finish, work_once\n" + textwrap.dedent(body)
    path = tmp_path / name
    path.write_text(source, encoding="utf-8")
    return str(path)


def state(pid: int) -> str | None:
    """The process's state letter in /proc, None if there is no such process."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    return stat[stat.rfind(")") + 2]


def dead(pid: int) -> bool:
    """Gone, or a zombie (reaped here if it is this process's own child)."""
    if state(pid) not in (None, "Z"):
        return False
    try:
        os.waitpid(pid, os.WNOHANG)
    except ChildProcessError:
        pass
    return True


def all_dead(pids, within: float = 10.0) -> list[int]:
    """The pids still alive after waiting at most `within` seconds for them to end."""
    deadline = time.monotonic() + within
    while True:
        alive = [pid for pid in pids if not dead(pid)]
        if not alive or time.monotonic() > deadline:
            return alive
        time.sleep(0.01)


def zygote_pid() -> int:
    assert zygote.start()
    return zygote._handle.process.pid


def run_owner(script: str, *args: str, env: dict | None = None,
              **popen) -> subprocess.Popen:
    """A child process that owns a zygote: `script` (dedented) with ROOT on its path."""
    full_env = {**os.environ, "PYTHONPATH": str(ROOT), **(env or {})}
    return subprocess.Popen([sys.executable, "-c", textwrap.dedent(script), *args], cwd=ROOT,
                            env=full_env, text=True, **popen)


# -- starting and closing --------------------------------------------------------------------------
def test_many_targets_start_and_close_through_one_zygote(tmp_path):
    path = fresh_db(tmp_path, jobs=30)
    forked_by = zygote_pid()
    pids = set()
    TargetProcess("solutions.queue", launcher=zygote.launch_forked).close()  # it is serving
    # a closed target's pidfd lives as long as the object does, and a cycle may keep it until
    # the collector runs (at any moment of the loop below): counted without it, both times
    gc.collect()
    fds = len(os.listdir("/proc/self/fd"))
    zygote_fds = fd_count(forked_by)
    for n in range(30):
        with TargetProcess("solutions.queue", launcher=zygote.launch_forked) as target:
            assert isinstance(target._process, zygote.ForkedTarget)
            assert target.server_pid == target.pid and target.pid not in pids
            assert target.returncode is None
            target.open("A", path)
            claim = target.claim("A", f"w{n}", 0, LEASE_MS)
            assert type(claim) is Claim and claim.id == n + 1
            assert state(target.pid) not in (None, "Z")
            with open(f"/proc/{target.pid}/stat") as stat:
                parent = int(stat.read().rsplit(")", 1)[1].split()[1])
            assert parent == forked_by
            pids.add(target.pid)
        assert target.returncode == -signal.SIGKILL  # close() kills, as it does a spawned one
        assert state(target.pid) is None  # reaped by the zygote before close() returned
    assert zygote_pid() == forked_by  # one zygote served them all
    del target  # its pidfd lives as long as it does
    gc.collect()
    assert len(os.listdir("/proc/self/fd")) == fds  # no lease, pidfd or pipe left open here
    # nor in the zygote: it drops a closed target's lease when it reaps that target, a moment
    # after close() returns, so either count may still hold one; wait for the zygote to settle
    deadline = time.monotonic() + 10
    while fd_count(forked_by) > zygote_fds and time.monotonic() < deadline:
        time.sleep(0.01)
    assert fd_count(forked_by) <= zygote_fds


def fd_count(pid: int) -> int | None:
    """How many fds the process has open; None where /proc does not show them (the zygote is
    not dumpable: only root sees its fds)."""
    try:
        return len(os.listdir(f"/proc/{pid}/fd"))
    except PermissionError:
        return None


def test_the_default_launcher_follows_the_environment(monkeypatch):
    monkeypatch.setenv(launch.LAUNCH_ENV, "spawn")
    assert target_client.default_launcher() is spawn
    monkeypatch.setenv(launch.LAUNCH_ENV, "zygote")
    assert target_client.default_launcher() is zygote.launch_forked
    monkeypatch.delenv(launch.LAUNCH_ENV)
    assert target_client.default_launcher() is zygote.launch
    with TargetProcess("solutions.queue") as target:
        assert isinstance(target._process, zygote.ForkedTarget)


ENDINGS = """
import os, signal, sys

def claim(conn, owner, now, lease_ms):
    if owner == "exit":
        os._exit(7)
    if owner == "sigkill":
        os.kill(os.getpid(), signal.SIGKILL)
    if owner == "sigterm":
        os.kill(os.getpid(), signal.SIGTERM)
    if owner == "system-exit":
        sys.exit(5)
    if owner == "keyboard":
        raise KeyboardInterrupt
    return None
"""


def outcome(launcher, spec: str, path: Path, owner: str):
    """What the judge sees of one claim as `owner`, and the returncode afterwards."""
    target = TargetProcess(spec, launcher=launcher, timeout=10)
    target.open("A", path)
    try:
        value = target.claim("A", owner, 0, LEASE_MS)
        seen = ("value", repr(value))
    except TargetEnded as ended:
        seen = ("ended", ended.code, ended.signal, ended.during)
    except RaisedInTarget as raised:
        seen = ("raised", raised.type)
    returncode = target.returncode
    target.close()
    return seen, returncode


@pytest.mark.parametrize("owner, expected", [
    ("exit", ("ended", 7, None, "claim")),
    ("sigkill", ("ended", None, "SIGKILL", "claim")),
    ("sigterm", ("ended", None, "SIGTERM", "claim")),
    ("system-exit", None),  # ended with code 5, or raised as data: as the server decides
    ("keyboard", ("raised", "KeyboardInterrupt")),
    ("nobody", ("value", "None")),
])
def test_endings_and_returncodes_are_those_of_a_spawned_target(tmp_path, owner, expected):
    path = fresh_db(tmp_path)
    spec = write_target(tmp_path, ENDINGS)
    got = {name: outcome(launcher, spec, path, owner) for name, launcher in LAUNCHERS.items()}
    assert got["zygote"] == got["spawn"]
    seen, returncode = got["zygote"]
    if expected is not None:
        assert seen == expected
    else:
        assert seen in (("ended", 5, None, "claim"), ("raised", "SystemExit"))
    if seen[0] == "ended":
        assert returncode == (seen[1] if seen[1] is not None else -getattr(signal, seen[2]))


HANGS = """
import threading

def claim(conn, owner, now, lease_ms):
    threading.Event().wait()
"""


def test_kill_from_another_thread_ends_a_target_the_owning_thread_waits_on(tmp_path):
    path = fresh_db(tmp_path)
    spec = write_target(tmp_path, HANGS)
    got = {}
    for name, launcher in LAUNCHERS.items():
        target = TargetProcess(spec, launcher=launcher, timeout=30)
        target.open("A", path)
        killer = threading.Timer(0.2, target.kill)  # a judge thread stops it, as a crash would
        killer.start()
        try:
            target.claim("A", "A", 0, LEASE_MS)
        except TargetEnded as ended:
            got[name] = (ended.signal, ended.during, target.returncode)
        killer.join()
        target.close()
    assert got["zygote"] == got["spawn"] == ("SIGKILL", "claim", -signal.SIGKILL)


@pytest.mark.parametrize("source, expected", [
    ("import os\nos._exit(9)\n", ("ended", 9)),
    ("def claim(:\n", ("load-error", "syntax-error")),
    ("raise SystemExit(4)\n", ("load-error", "import-error")),
])
def test_start_up_endings_are_those_of_a_spawned_target(tmp_path, source, expected):
    spec = tmp_path / "broken.py"
    spec.write_text(source, encoding="utf-8")
    got = {}
    for name, launcher in LAUNCHERS.items():
        try:
            TargetProcess(str(spec), launcher=launcher).close()
            got[name] = ("started",)
        except TargetEnded as ended:
            got[name] = ("ended", ended.code)
        except TargetLoadError as error:
            got[name] = ("load-error", error.kind)
    assert got == {"spawn": expected, "zygote": expected}


# -- set up as a spawned target is -----------------------------------------------------------------
REPORTER = """
import ctypes, json, os, resource, signal, sys, tempfile

def _handler(signum):
    handler = signal.getsignal(signum)
    return getattr(handler, "__name__", str(handler))

def claim(conn, owner, now, lease_ms):
    fds = os.listdir("/proc/self/fd")  # the listing's own fd is among them
    limits = {name: resource.getrlimit(getattr(resource, name))
              for name in ("RLIMIT_AS", "RLIMIT_FSIZE", "RLIMIT_CPU", "RLIMIT_NOFILE")}
    umask = os.umask(0)
    os.umask(umask)
    return json.dumps({
        "fds_above_2": len([fd for fd in fds if int(fd) > 2]) - 1,
        "stdin": os.readlink("/proc/self/fd/0"),
        "stdout": os.readlink("/proc/self/fd/1"),
        "stderr": os.readlink("/proc/self/fd/2"),
        "session_leader": os.getsid(0) == os.getpid() == os.getpgid(0),
        "limits": limits,
        "umask": umask,
        "cwd": os.getcwd(),
        "sys.path": sys.path,
        "late": os.environ.get("LEASELAB_ATTACK_LATE"),
        "tempdir": tempfile.gettempdir(),
        "given": os.environ.get("LEASELAB_ATTACK_GIVEN"),
        "env_keys": sorted(os.environ),
        "signals": {name: _handler(getattr(signal, name))
                    for name in ("SIGINT", "SIGTERM", "SIGCHLD", "SIGPIPE", "SIGXFSZ")},
        "dumpable": ctypes.CDLL(None).prctl(3, 0, 0, 0, 0),
        "argv_tail": sys.argv[-1],
        "main_module": __name__,
    })
"""

OWNER_REPORTS = """
import json, os, resource, sys
from grader.harness.processes import zygote
from grader.harness.processes.launch import spawn
from grader.harness.judge.target_client import TargetProcess

spec, path, workdir, log = sys.argv[1:5]
assert zygote.start()  # before the limits, umask and variables below: they must be carried
resource.setrlimit(resource.RLIMIT_AS, (3 << 30, 3 << 30))
resource.setrlimit(resource.RLIMIT_FSIZE, (100 << 20, 100 << 20))
resource.setrlimit(resource.RLIMIT_CPU, (300, 305))
os.umask(0o027)
os.environ["LEASELAB_ATTACK_LATE"] = "late"
reports = {}
for name, launcher in (("spawn", spawn), ("zygote", zygote.launch_forked)):
    for how, kwargs in (("plain", {}),
                        ("cwd+env+log", {"cwd": workdir, "log": log + "-" + name,
                                         "env": dict(os.environ, LEASELAB_ATTACK_GIVEN="given"),
                                         "writable": [workdir, os.path.dirname(path)]})):
        with TargetProcess(spec, launcher=launcher, **kwargs) as target:
            kind = type(target._process).__name__
            contained = target.contained
            target.open("A", path)
            report = json.loads(target.claim("A", "A", 0, 1000))
            report["stdout"] = report["stdout"].replace("-" + name, "-LAUNCHER")
            report["stderr"] = report["stderr"].replace("-" + name, "-LAUNCHER")
            report["contained"] = contained
            scratch = os.path.basename(report["tempdir"]).startswith("target-")
            report["tempdir"] = "its own scratch folder" if scratch else report["tempdir"]
            reports[name + " " + how] = (kind, report)
print(json.dumps(reports))
"""


def test_a_forked_target_is_set_up_as_a_spawned_one(tmp_path):
    path = fresh_db(tmp_path)
    spec = write_target(tmp_path, REPORTER)
    workdir = tmp_path / "work"
    workdir.mkdir()
    owner = run_owner(OWNER_REPORTS, spec, str(path), str(workdir), str(tmp_path / "log"),
                      stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    out, err = owner.communicate(timeout=120)
    assert owner.returncode == 0, err
    reports = json.loads(out)
    for how in ("plain", "cwd+env+log"):
        spawned_kind, spawned = reports["spawn " + how]
        forked_kind, forked = reports["zygote " + how]
        assert (spawned_kind, forked_kind) == ("Popen", "ForkedTarget")
        assert forked == spawned, how
    plain = reports["zygote plain"][1]
    assert plain["limits"]["RLIMIT_AS"] == [3 << 30, 3 << 30]
    assert plain["limits"]["RLIMIT_CPU"] == [300, 305]
    assert plain["umask"] == 0o027 and plain["late"] == "late"
    assert plain["fds_above_2"] == 2  # the channel: nothing of the zygote, no database
    assert plain["stdin"] == plain["stdout"] == "/dev/null" and plain["session_leader"]
    given = reports["zygote cwd+env+log"][1]
    assert given["cwd"] == str(workdir) and given["sys.path"][0] == str(tmp_path)
    assert str(workdir) in given["sys.path"] and given["given"] == "given"
    assert given["stdout"] == given["stderr"] == str(tmp_path / "log-LAUNCHER")
    # TMPDIR: a scratch folder of its own (removed with it), also where it may write more
    assert given["tempdir"] == plain["tempdir"] == "its own scratch folder"


OWNER_IN_A_CHANGED_CHECKOUT = """
import json, os, sys
from grader.harness.processes import zygote
from grader.harness.processes.launch import spawn
from grader.harness.judge.target_client import TargetProcess
from grader.harness.judge.target_errors import TargetLoadError

assert zygote.start()
TargetProcess("solutions.queue", launcher=zygote.launch_forked).close()  # it has listed '.'
with open("results.json", "w"):  # the checkout's folder changes after the zygote started
    pass
got = {}
for name, launcher in (("spawn", spawn), ("zygote", zygote.launch_forked)):
    try:
        with TargetProcess(sys.argv[1], launcher=launcher,
                           writable=[os.path.dirname(sys.argv[1])]) as target:
            got[name] = ["ready", target.contained > 0]
    except TargetLoadError as error:
        got[name] = [error.kind, str(error.params)]
print(json.dumps(got))
"""


def test_a_checkout_changed_since_the_zygote_started_is_listed_before_the_jail(tmp_path):
    """The jail lets a target read grader/, lab/ and solutions/ but not list the checkout they
    are in: the import system must list it before the jail, in a forked target as in a fresh
    interpreter, even when it changed since the zygote listed it."""
    import shutil

    checkout = tmp_path / "checkout"
    for package in ("grader", "lab", "solutions"):
        shutil.copytree(ROOT / package, checkout / package,
                        ignore=shutil.ignore_patterns("__pycache__"))
    elsewhere = tmp_path / "submission"
    elsewhere.mkdir()
    spec = write_target(elsewhere, "")  # imports solutions.queue from the checkout
    owner = subprocess.run([sys.executable, "-c", textwrap.dedent(OWNER_IN_A_CHANGED_CHECKOUT),
                            spec], cwd=checkout, capture_output=True, text=True, timeout=120,
                           env={k: v for k, v in os.environ.items() if k != "PYTHONPATH"})
    assert owner.returncode == 0, owner.stderr
    got = json.loads(owner.stdout)
    assert got["zygote"] == got["spawn"] and got["zygote"][0] == "ready", got


# -- nothing outlives the owner --------------------------------------------------------------------
OWNER_LEAVES_TARGETS = """
import json, sys, threading
from grader.harness.processes import zygote
from grader.harness.judge.target_client import TargetProcess

how = sys.argv[1]
if how == "thread":  # started from a thread that has ended: no parent-death signal then
    started = threading.Thread(target=zygote.start)
    started.start()
    started.join()
targets = [TargetProcess("solutions.queue", launcher=zygote.launch_forked) for _ in range(4)]
print(json.dumps([zygote._handle.process.pid] + [t.pid for t in targets]), flush=True)
if how == "exit":
    sys.exit(0)  # the targets are left open: at exit the zygote ends them
sys.stdin.read()  # wait to be killed
"""


@pytest.mark.parametrize("how", ["exit", "main", "thread"])
def test_the_zygote_and_its_targets_end_with_their_owner(how):
    owner = run_owner(OWNER_LEAVES_TARGETS, how, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                      stderr=subprocess.PIPE)
    try:
        pids = json.loads(owner.stdout.readline())
        assert len(pids) == 5
        if how != "exit":
            assert all_dead(pids, within=0) == pids  # alive while their owner is
            owner.kill()
        owner.wait(timeout=30)
        assert all_dead(pids) == []
    finally:
        owner.kill()
        owner.wait()
        owner.stdin.close()
        owner.stdout.close()
        owner.stderr.close()


OWNER_LOSES_A_JUDGE = """
import json, os, signal, sys
from grader.harness.processes import zygote
from grader.harness.judge.target_client import TargetProcess

assert zygote.start()
read_fd, write_fd = os.pipe()
judge = os.fork()
if judge == 0:  # a check's judge, forked from the owner: it uses the owner's zygote
    target = TargetProcess("solutions.queue")
    os.write(write_fd, f"{type(target._process).__name__} {target.pid}\\n".encode())
    signal.pause()
kind, pid = os.read(read_fd, 100).decode().split()
os.kill(judge, signal.SIGKILL)  # as the sandbox kills a judge that timed out
os.waitpid(judge, 0)
zygote.settle()
with open(f"/proc/{pid}/stat") if os.path.exists(f"/proc/{pid}") else open(os.devnull) as f:
    left = f.read()
print(json.dumps({"kind": kind, "pid": int(pid), "left": left,
                  "zygote": zygote._handle.process.pid}))
"""


def test_a_target_whose_judge_was_killed_is_ended_and_reaped_before_settle_returns():
    owner = run_owner(OWNER_LOSES_A_JUDGE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    out, err = owner.communicate(timeout=60)
    assert owner.returncode == 0, err
    report = json.loads(out)
    assert report["kind"] == "ForkedTarget"
    assert report["left"] == ""  # gone from /proc: killed and reaped, not a zombie
    assert all_dead([report["zygote"]]) == []


DOUBLE_FORK = """
import os, time

PIDS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "grandchild.pid")
_claim = claim

def claim(conn, owner, now, lease_ms):
    if os.fork() == 0:
        os.setsid()
        if os.fork() == 0:
            with open(PIDS, "w") as f:
                f.write(str(os.getpid()))
            time.sleep(60)
        os._exit(0)
    return _claim(conn, owner, now, lease_ms)
"""


def test_a_target_that_double_forks_does_not_hold_up_the_zygote(tmp_path):
    """Without its jail (its seccomp filter lets a jailed target start no process), a target
    that double-forks leaves a detached grandchild: not the zygote's business."""
    path = fresh_db(tmp_path)
    spec = write_target(tmp_path, DOUBLE_FORK)
    grandchild = None
    try:
        started = time.monotonic()
        with TargetProcess(spec, launcher=zygote.launch_forked, jail=False) as target:
            target.open("A", path)
            assert type(target.claim("A", "A", 0, LEASE_MS)) is Claim
            target.sync()
        assert target.returncode == -signal.SIGKILL
        # the zygote still serves, at once: the detached grandchild is not its business
        with TargetProcess("solutions.queue", launcher=zygote.launch_forked) as other:
            other.sync()
        assert time.monotonic() - started < 15  # a safety net, not a clock
        pidfile = tmp_path / "grandchild.pid"
        deadline = time.monotonic() + 10
        while not pidfile.exists() or not pidfile.read_text():
            assert time.monotonic() < deadline, "the grandchild never started"
            time.sleep(0.01)
        grandchild = int(pidfile.read_text())
        assert state(grandchild) not in (None, "Z")  # the grader's sweep ends such orphans
    finally:
        if grandchild is not None:
            os.kill(grandchild, signal.SIGKILL)
            assert all_dead([grandchild]) == []


# -- threads ---------------------------------------------------------------------------------------
def test_threads_start_targets_concurrently(tmp_path):
    paths = [fresh_db(tmp_path, f"q{n}.db", jobs=5) for n in range(6)]
    errors, kinds, pids = [], [], []
    forked_by = zygote_pid()

    def work(path):
        try:
            for n in range(5):
                with TargetProcess("solutions.queue", launcher=zygote.launch_forked) as target:
                    kinds.append(type(target._process).__name__)
                    pids.append(target.pid)
                    target.open("A", path)
                    assert target.claim("A", "T", 0, LEASE_MS).id == n + 1
        except BaseException as exc:  # reported below
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(path,)) for path in paths]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)
    assert errors == [] and len(kinds) == 30 and set(kinds) == {"ForkedTarget"}
    assert len(set(pids)) == 30 and all_dead(pids, within=0) == []
    assert zygote_pid() == forked_by


JUDGES_AT_ONCE = """
import json, os
from grader.harness.processes import zygote
from grader.harness.judge.target_client import TargetProcess

assert zygote.start()
read_fd, write_fd = os.pipe()
judges = []
for n in range(4):  # checks' judges forked from the owner, starting targets at the same time
    judge = os.fork()
    if judge == 0:
        os.close(read_fd)
        kinds = []
        for _ in range(5):
            with TargetProcess("solutions.queue") as target:
                target.sync()
                kinds.append(type(target._process).__name__)
        os.write(write_fd, (json.dumps(kinds) + "\\n").encode())
        os._exit(0)
    judges.append(judge)
os.close(write_fd)
codes = [os.waitpid(judge, 0)[1] for judge in judges]
with os.fdopen(read_fd) as results:
    kinds = [kind for line in results for kind in json.loads(line)]
print(json.dumps({"codes": codes, "kinds": kinds}))
"""


def test_judges_forked_from_the_owner_start_targets_at_once():
    owner = run_owner(JUDGES_AT_ONCE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    out, err = owner.communicate(timeout=120)
    assert owner.returncode == 0, err
    assert json.loads(out) == {"codes": [0] * 4, "kinds": ["ForkedTarget"] * 20}


# -- falling back ----------------------------------------------------------------------------------
def test_falls_back_to_spawn_where_the_zygote_cannot_serve(monkeypatch):
    # an interpreter start-up setting the zygote did not start with
    with TargetProcess("solutions.queue",
                       env=dict(os.environ, PYTHONHASHSEED="123")) as target:
        assert isinstance(target._process, subprocess.Popen)
    with pytest.raises(zygote.ZygoteUnavailable):
        zygote.launch_forked("solutions.queue", env=dict(os.environ, PYTHONHASHSEED="123"))
    # a platform without a zygote
    monkeypatch.setattr(zygote, "supported", lambda: False)
    with TargetProcess("solutions.queue") as target:
        assert isinstance(target._process, subprocess.Popen)
        target.sync()
    with pytest.raises(zygote.ZygoteUnavailable):
        TargetProcess("solutions.queue", launcher=zygote.launch_forked)


def test_a_bad_cwd_fails_as_it_does_when_spawning(tmp_path):
    for launcher in LAUNCHERS.values():
        with pytest.raises(FileNotFoundError):
            TargetProcess("solutions.queue", cwd=str(tmp_path / "missing"), launcher=launcher)


OWNER_LOSES_ITS_ZYGOTE = """
import json, os, signal, time
from grader.harness.processes import zygote
from grader.harness.judge.target_client import TargetProcess

from grader.harness.judge.target_errors import TargetEnded


def alive(pid):
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


kinds = {}
with TargetProcess("solutions.queue") as target:
    kinds["first"] = type(target._process).__name__
    first = zygote._handle.process.pid
    os.kill(first, signal.SIGKILL)  # what a target of the same user could do to its parent
    deadline = time.monotonic() + 10
    while alive(target.pid) and time.monotonic() < deadline:
        time.sleep(0.01)
    try:  # the target died with it (PR_SET_PDEATHSIG): nothing outlives the process that forked it
        target.sync()
        kinds["target"] = "lives on"
    except TargetEnded:
        kinds["target"] = "ended"
read_fd, write_fd = os.pipe()
fork = os.fork()
if fork == 0:  # a fork that inherited the dead zygote spawns, and starts none of its own
    with TargetProcess("solutions.queue") as target:
        target.sync()
        os.write(write_fd, type(target._process).__name__.encode())
    os._exit(0 if zygote._handle.process.pid == first else 1)
kinds["fork"] = os.read(read_fd, 100).decode()
kinds["fork exit"] = os.waitpid(fork, 0)[1]
with TargetProcess("solutions.queue") as target:  # the owner starts a new one
    kinds["owner"] = type(target._process).__name__
    kinds["restarted"] = zygote._handle.process.pid != first
print(json.dumps(kinds))
"""


def test_a_dead_zygote_costs_a_restart_in_the_owner_and_a_spawn_in_its_forks():
    owner = run_owner(OWNER_LOSES_ITS_ZYGOTE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    out, err = owner.communicate(timeout=60)
    assert owner.returncode == 0, err
    assert json.loads(out) == {"first": "ForkedTarget", "target": "ended", "fork": "Popen",
                               "fork exit": 0, "owner": "ForkedTarget", "restarted": True}


FORK_WITHOUT_A_ZYGOTE = """
import json, os
from grader.harness.processes import zygote
from grader.harness.judge.target_client import TargetProcess

read_fd, write_fd = os.pipe()
fork = os.fork()
if fork == 0:  # a check's judge whose grading process started no zygote
    kinds = []
    for launcher in (None, zygote.launch_forked):
        with TargetProcess("solutions.queue", launcher=launcher) as target:
            target.sync()
            kinds.append(type(target._process).__name__)
    os.write(write_fd, json.dumps(kinds).encode())
    os._exit(0)
forked = json.loads(os.read(read_fd, 1000))
os.waitpid(fork, 0)
with TargetProcess("solutions.queue") as target:
    print(json.dumps({"fork": forked, "owner": type(target._process).__name__}))
"""


def test_a_fork_given_no_zygote_spawns_unless_told_to_fork():
    owner = run_owner(FORK_WITHOUT_A_ZYGOTE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    out, err = owner.communicate(timeout=60)
    assert owner.returncode == 0, err
    assert json.loads(out) == {"fork": ["Popen", "ForkedTarget"], "owner": "ForkedTarget"}


OWNER_CLOSES_AFTER_ITS_ZYGOTE_FAILED = """
import json, os, signal, sys, time
from grader.harness.processes import zygote
from grader.harness.judge.target_client import TargetProcess

target = TargetProcess("solutions.queue", launcher=zygote.launch_forked)
process = zygote._handle.process
if sys.argv[1] == "killed":
    os.kill(process.pid, signal.SIGKILL)
    process.wait()
else:
    os.kill(process.pid, signal.SIGSTOP)
started = time.monotonic()
target.close()  # the zygote cannot kill it or say how it ended: close kills it, no hang
seconds = time.monotonic() - started
print(json.dumps({"pid": target.pid, "returncode": target.returncode, "seconds": seconds}))
process.kill()
"""


@pytest.mark.parametrize("how", ["killed", "stopped"])
def test_close_does_not_hang_when_the_zygote_failed(how):
    owner = run_owner(OWNER_CLOSES_AFTER_ITS_ZYGOTE_FAILED, how, stdout=subprocess.PIPE,
                      stderr=subprocess.PIPE)
    out, err = owner.communicate(timeout=60)
    assert owner.returncode == 0, err
    report = json.loads(out)
    assert report["returncode"] is None  # nobody can say any more
    assert report["seconds"] < zygote.KILL_ANSWER_TIMEOUT + 5  # a safety net, not a clock
    assert all_dead([report["pid"]]) == []


MODULES_AT_IMPORT = """
import sys
MODULES = sorted(sys.modules)  # before this file imports anything: what its process had
from solutions.queue import finish, work_once

def claim(conn, owner, now, lease_ms):
    return " ".join(MODULES)
"""


def test_the_zygote_never_imports_the_code_under_grade_or_the_checks(tmp_path):
    path = fresh_db(tmp_path)
    spec = tmp_path / "modules.py"
    spec.write_text(MODULES_AT_IMPORT, encoding="utf-8")
    seen = {}
    for name, launcher in LAUNCHERS.items():
        with TargetProcess(str(spec), launcher=launcher) as target:
            target.open("A", path)
            seen[name] = set(target.claim("A", "A", 0, LEASE_MS).split())
    ours = {m for m in seen["zygote"] if m.startswith(("grader", "lab", "solutions"))}
    assert "grader.harness.target.server" in ours and "lab.store" in ours
    assert not {m for m in ours if m.startswith(("solutions", "grader.checks", "grader.report",
                                                 "grader.runner", "grader.cli", "lab.queue"))}
    # beyond what a spawned target server has: the zygote itself, its loop and its compile of
    # the code under grade (which runs none of it), and what it imports ahead for its children
    # (target_server.AHEAD), never the judge's side (the launcher, the target client)
    assert ours - seen["spawn"] <= {"grader.harness.target.zygote_server", "grader.harness.processes.forkloop",
                                    "grader.harness.target.compiled", *target_server.AHEAD}


def test_a_fresh_target_process_imports_only_what_every_target_needs(tmp_path):
    """Issue 42: on the portable path every target process is a fresh interpreter, and what
    its server imports is most of its cost. What only some targets need (`AHEAD`: a load
    error's kinds, a raise's traceback, asyncio's selectors...) it imports when needed; the
    zygote imports it ahead, so that a forked target starts with it, as before."""
    path = fresh_db(tmp_path)
    (tmp_path / "modules_at_import.py").write_text(MODULES_AT_IMPORT, encoding="utf-8")
    seen = {}
    for name, launcher in {**LAUNCHERS, "portable": portable.spawn_target}.items():
        with TargetProcess("modules_at_import", cwd=str(tmp_path), launcher=launcher) as target:
            target.open("A", path)
            seen[name] = set(target.claim("A", "A", 0, LEASE_MS).split())
    assert set(target_server.AHEAD) <= seen["zygote"]
    assert "grader.harness.target.server" in seen["portable"]
    assert not set(target_server.AHEAD) & seen["portable"]
    # started with --in and --out, it is not a spare: the death signal wants `signal`
    assert set(target_server.AHEAD) & seen["spawn"] == {"signal"}


SERVED_TWICE = """
import signal, socket, subprocess, sys
from grader.harness.processes import forkloop
from grader.harness.target import zygote_server
signal.alarm(10)  # a zygote blocked in recv would hang this script: the alarm ends it
door, _ = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
loop = zygote_server.Zygote(door)
sleeper = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"])
ours, theirs = socket.socketpair()
child = forkloop.Child(sleeper.pid, ours)
loop.children[sleeper.pid] = child
loop.leases[ours.fileno()] = child
theirs.sendall(b"k")
loop.serve_lease(ours.fileno())   # "k": killed
loop.serve_lease(ours.fileno())   # the same event again (settle served it first): no data
print("returned", child.killed, sleeper.wait(5))
"""


def test_a_lease_event_served_twice_never_blocks_the_zygote():
    """settle() serves the lease events pending at its call, and the loop's own poll batch may
    hold the same events: the second serving finds no byte and must return at once (it once
    blocked in recv until the requester gave up waiting for the status, 2 s, stalling every
    other start and kill: with checks on two lanes that was a check in ten)."""
    proc = subprocess.run([sys.executable, "-c", SERVED_TWICE], capture_output=True, text=True,
                          timeout=60, cwd=Path(__file__).resolve().parent.parent)
    assert proc.stdout.split() == ["returned", "True", "-9"], proc.stderr


def test_a_folder_changed_within_its_mtime_is_listed_again_before_the_jail(tmp_path, monkeypatch):
    """A forked target lists the folders of sys.path again before its jail, as a fresh
    interpreter would (importlib.invalidate_caches), even one whose mtime did not move (a file
    written within the file system's time resolution); only the interpreter's own folders are
    trusted to be as their mtime says."""
    import importlib.machinery

    from grader.harness.target import zygote_server

    folder = tmp_path / "checkout"
    folder.mkdir()
    monkeypatch.syspath_prepend(str(folder))
    assert importlib.machinery.PathFinder.find_spec("leaselab_new_module") is None  # listed
    stamp = folder.stat()
    (folder / "leaselab_new_module.py").write_text("X = 1\n")
    os.utime(folder, ns=(stamp.st_atime_ns, stamp.st_mtime_ns))  # as if in the same tick
    assert importlib.machinery.PathFinder.find_spec("leaselab_new_module") is None  # stale
    zygote_server._refresh_listings()
    assert importlib.machinery.PathFinder.find_spec("leaselab_new_module") is not None


def test_a_target_file_changed_between_starts_runs_as_it_is_now(tmp_path):
    """The zygote compiles the code under grade once for the targets it forks
    (grader.harness.target.compiled): a file changed between two starts runs as it is at each, back
    and forth, as a fresh interpreter would run it; and what a target raises names its file."""
    path = fresh_db(tmp_path)
    for version in ("first", "second", "first"):
        spec = write_target(tmp_path, f'''
            def claim(conn, owner, now, lease_ms):
                raise ValueError("{version}")
            ''')
        with TargetProcess(spec, launcher=zygote.launch_forked) as target:
            assert isinstance(target._process, zygote.ForkedTarget)
            target.open("A", path)
            with pytest.raises(RaisedInTarget) as raised:
                target.claim("A", "w", 0, LEASE_MS)
            assert version in str(raised.value)


def test_the_zygote_compiles_the_code_under_grade_as_the_import_system_would(tmp_path):
    """What grader.harness.target.compiled keeps is the code object importlib would make of the same
    bytes at the same path; other bytes, another path or another optimisation are compiled as
    before."""
    import importlib.machinery

    from grader.harness.target import compiled

    source = tmp_path / "mine.py"
    source.write_text("VALUE = 6 * 7\n")
    compiled.install()
    compiled.prepare(str(source), str(tmp_path))
    data, code = compiled._kept[str(source)]
    loader = importlib.machinery.SourceFileLoader("mine", str(source))
    assert loader.source_to_code(data, str(source)) is code
    fresh = compile(data, str(source), "exec", dont_inherit=True)
    assert code.co_code == fresh.co_code and code.co_filename == fresh.co_filename
    assert loader.source_to_code(data + b"\n", str(source)) is not code
    assert loader.source_to_code(data, str(tmp_path / "other.py")) is not code
    assert loader.source_to_code(data, str(source), _optimize=2) is not code
