"""Helpers for the project's own tests: grade an implementation the way a user does."""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
MUTANTS = ROOT / "tests" / "mutants"
#: The simulated Windows (tests/windowsish/sitecustomize.py; `windowsish_env`).
WINDOWSISH = ROOT / "tests" / "windowsish"

# Strict messages (grader.report.messages): a missing word, language or placeholder raises instead
# of showing the key, in this process and in every grader it starts (they inherit os.environ).
os.environ["LEASELAB_STRICT_MESSAGES"] = "1"
# No local run history (grader.report.history) beside the graded files of the project (lab/,
# solutions/, tests/mutants/): a verdict or a hint must not depend on the runs before it. The
# history's own tests turn it back on with LEASELAB_NO_HISTORY="".
os.environ["LEASELAB_NO_HISTORY"] = "1"
# Bytecode caches for the grader, as on a student's machine after a first run: the suite starts
# the grader hundreds of times, and without them every start compiles it again. Recorded grades
# (batch, the bundle) still set PYTHONDONTWRITEBYTECODE themselves, beside the submissions.
os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
# The grades the tests start run as a student runs them locally, in the lesson's world, whether
# the suite runs in CI or not: in CI (CI=true, GITHUB_ACTIONS) a grade given no --replay draws a
# fresh world (grader.cli.in_ci). The tests of that default set the variables themselves;
# IN_CI keeps whether the suite itself runs in CI.
IN_CI = {name: os.environ.pop(name) for name in ("CI", "GITHUB_ACTIONS") if name in os.environ}


#: The files whose module fixtures grade the most, longest first (measured: docs/DEVELOPING.md,
#: "The project's own tests"). The suite's command (-n auto --dist loadfile) gives each xdist
#: worker whole files, the next one in the order below to whichever worker is free: the longest
#: start at once on different workers and the short files fill in the end, so no long file
#: starts last beside an idle worker. test_mutants comes after test_pytest_plugin: its grades
#: are then the parity's, shared (`grade`'s shared=True).
LONGEST_FILES = ("test_seed_sweep.py", "test_pytest_plugin.py", "test_stability.py",
                 "test_mutant_worlds.py", "test_mutants.py")


def pytest_configure(config):
    # pytest-xdist hands out the files in collection order, which pytest_collection_modifyitems
    # sets, unless --loadscope-reorder (its default) sorts them by their number of tests
    if hasattr(config.option, "loadscopereorder"):
        config.option.loadscopereorder = False


def pytest_collection_modifyitems(config, items):
    """LONGEST_FILES first, in their order; then the other files, those with the most tests
    first (as pytest-xdist orders them by itself); a file's tests stay together, in order."""
    first: dict[str, int] = {}
    counts: dict[str, int] = {}
    for index, item in enumerate(items):
        file = item.nodeid.split("::", 1)[0]
        first.setdefault(file, index)
        counts[file] = counts.get(file, 0) + 1

    def rank(item):
        file = item.nodeid.split("::", 1)[0]
        name = file.rsplit("/", 1)[-1]
        if name in LONGEST_FILES:
            return (0, LONGEST_FILES.index(name), first[file])
        return (1, -counts[file], first[file])

    items.sort(key=rank)


@pytest.fixture
def lenient_messages(monkeypatch):
    """Strict messages off, as for a student: for tests that feed malformed results on purpose
    and check that a report still comes out."""
    monkeypatch.delenv("LEASELAB_STRICT_MESSAGES", raising=False)


def windowsish_env() -> dict[str, str]:
    """What makes every interpreter a process starts a simulated Windows one (on top of
    os.environ): tests/windowsish first on PYTHONPATH (issue 42's portable path)."""
    path = os.environ.get("PYTHONPATH")
    return {"PYTHONPATH": os.pathsep.join([str(WINDOWSISH)] + ([path] if path else []))}


def grader_env(env: dict | None = None) -> dict[str, str]:
    """The environment `run_grader` gives the grader."""
    # A wide terminal, whatever the one running the tests: a sentence is then one line, and
    # the report's wrapping is tested at given widths (tests/test_report_length.py).
    full_env = {**os.environ, "NO_COLOR": "1", "LANG": "C.UTF-8", "COLUMNS": "200",
                **(env or {})}
    full_env.pop("LC_ALL", None)
    return full_env


def run_grader(*args: str, cwd: Path = ROOT, env: dict | None = None,
               timeout: float = 300, forked: bool = False,
               waits: bool = False) -> subprocess.CompletedProcess:
    """`python -m grader ARGS` in a child process, as a student or CI would run it.

    forked=True: forked by this pytest process's fork server (the batch's,
    grader.instructor.fork_server, started with this suite's environment) where it can serve
    it, else started afresh. The grade is the same but for the interpreter's start and the
    grader's imports (about half of a one-check grade's CPU), which the server made once. For
    the grades the suite makes by the hundred (every mutant, alternative and world): never for
    a test of what a grade leaves behind, since the server ends what a grade it forked leaves
    running (as batch does), nor of the command's start.

    waits=True: a grade that mostly waits (a busy timeout, run after run) takes no grade slot
    (`cpu_slot`): it is started at once, beside the others."""
    full_env = grader_env(env)
    with (contextlib.nullcontext() if waits else cpu_slot()):
        if forked:
            done = _forked(list(args), cwd, full_env, timeout)
            if done is not None:
                return done
        return subprocess.run([sys.executable, "-m", "grader", *args], cwd=cwd, env=full_env,
                              capture_output=True, text=True, timeout=timeout)


# -- grades at once, session-wide ----------------------------------------------------------------
# A grade keeps the machine's cores busy by itself (its lanes: one per core). The suite's module
# fixtures grade two to four at a time on each xdist worker, which only helps while some of those
# grades wait (a busy timeout, a hang's wall-clock limit): beyond that, grades at once cost more
# CPU each, not less wall (6 grades of the reference on 2 cores: 2 at a time 16.7 s of wall and
# 32 s of CPU, 6 at a time 19.7 s and 39 s, medians of 3, 2026-12-07). So every grade the suite
# starts (`run_grader`, the parity's pytest runs) first takes one of SLOTS slots, shared by all
# the session's workers: a file lock each, in the session's folder. A grade that waits keeps its
# slot; the one slot above the cores' count keeps the cores busy meanwhile.

#: Grades at once in the whole session: the cores this process may use (as many as a grade's
#: lanes), and one more. LEASELAB_TEST_SLOTS=N sets it; 0: no limit.
from grader.runner import default_jobs  # noqa: E402  (here: os.environ is set above)

SLOTS = int(os.environ.get("LEASELAB_TEST_SLOTS") or default_jobs() + 1)
SLOT_POLL = 0.02  # seconds between two looks at the slots, all taken


@contextlib.contextmanager
def cpu_slot():
    """One of the session's SLOTS grade slots, held for the `with` (waited for while all are
    taken); nothing where there is no limit, no session folder yet, or no fcntl (Windows: the
    suite runs there without it)."""
    folder = _CACHE["dir"]
    try:
        import fcntl
    except ImportError:
        fcntl = None
    if SLOTS <= 0 or folder is None or fcntl is None:
        yield
        return
    while True:
        for index in range(SLOTS):
            slot = open(folder / f"slot-{index}.lock", "a+b")
            try:
                fcntl.flock(slot, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError:  # another grade holds it
                slot.close()
                continue
            try:
                yield
            finally:
                slot.close()  # lets go of the lock
            return
        time.sleep(SLOT_POLL)


# -- the fork server for the suite's grades -----------------------------------------------------
_FORKS: dict = {"server": None, "off": os.environ.get("LEASELAB_TEST_FORKS") == "0"}
_FORKS_LOCK = threading.Lock()


def _fork_server():
    """This process's fork server (started on first use), or None where none can run (not
    Linux with pidfds, or LEASELAB_TEST_FORKS=0: every grade a fresh interpreter)."""
    from grader.instructor import isolated

    with _FORKS_LOCK:
        server = _FORKS["server"]
        if _FORKS["off"]:
            return None
        if server is None or server.process.poll() is not None:
            if not isolated.fork_supported():
                _FORKS["off"] = True
                return None
            try:
                server = _FORKS["server"] = isolated._ForkServer(env=grader_env())
            except OSError:
                _FORKS["off"] = True
                return None
        return server


def _forked(args: list[str], cwd: Path, env: dict,
            timeout: float) -> subprocess.CompletedProcess | None:
    """`python -m grader ARGS` forked by the fork server; None where it cannot serve it (an
    environment that differs in what an interpreter reads at start-up: run it afresh)."""
    from grader.instructor import isolated

    server = _fork_server()
    if server is None:
        return None
    command = [sys.executable, "-m", "grader", *args]
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        code = isolated._run_forked(args, Path(cwd), env, out, timeout, errors=err,
                                    server=server)
        if code is isolated._NOT_FORKED:
            return None
        out.seek(0)
        err.seek(0)
        stdout, stderr = _text(out.read()), _text(err.read())
    if code is None:
        raise subprocess.TimeoutExpired(command, timeout, stdout, stderr)
    return subprocess.CompletedProcess(command, code, stdout, stderr)


def _text(data: bytes) -> str:
    """What a grade wrote, as subprocess's text=True reads a pipe (universal newlines)."""
    return data.decode().replace("\r\n", "\n").replace("\r", "\n")


@pytest.fixture(scope="session", autouse=True)
def _fork_server_stopped():
    """The fork server, if one was started, ends with the session."""
    yield
    with _FORKS_LOCK:
        server, _FORKS["server"] = _FORKS["server"], None
    if server is not None:
        server.stop()


def grade(impl: str, tmp_path: Path, *extra: str, shared: bool = False,
          forked: bool = False, waits: bool = False) -> tuple[subprocess.CompletedProcess, dict]:
    """Grade `impl`; return the process and its results.json.

    shared=True: the grade may be one another test of this pytest session already ran, or is
    running, with the same arguments on the same bytes (see `shared_grade`): for the fixtures
    that grade every mutant and alternative. Never for a test that grades the same code twice
    and expects a difference (history, --repeat, a fresh world). A shared grade is forked
    (`run_grader`'s forked=True), as is one asked with forked=True."""
    out = tmp_path / f"results-{abs(hash(impl))}.json"
    if shared and _CACHE["dir"] is not None:
        return shared_grade(impl, out, *extra)
    proc = run_grader("--impl", impl, "--json", str(out), *extra, forked=forked or shared,
                      waits=waits)
    assert out.exists(), f"no results.json (exit {proc.returncode}):\n{proc.stderr}"
    return proc, json.loads(out.read_text(encoding="utf-8"))


# -- grades shared within one pytest session ---------------------------------------------------------
# The mutants, the alternatives, the reference and the stubs are graded with the same arguments
# by several test files (test_mutants and test_pytest_plugin's parity, test_alternatives,
# test_reference...), each on whichever xdist worker runs it. A grade asked for with
# shared=True is computed once per session: its results.json, exit status and output are kept
# in a folder of this session alone (under the session's base temporary folder, which all
# workers share and which a later run never reuses), under a key of everything the grade
# depends on; a lock per key makes a second worker asking for the same grade wait for the first
# instead of computing it again.

_CACHE: dict = {"dir": None, "grader": None}


@pytest.fixture(scope="session", autouse=True)
def _shared_grades(tmp_path_factory):
    """The session's folder of shared grades: under the base temporary folder of this run (the
    xdist controller's, common to its workers: a worker's own is popen-gwN inside it), in a
    subfolder named by the run's id when xdist gives one."""
    base = tmp_path_factory.getbasetemp()
    if os.environ.get("PYTEST_XDIST_WORKER"):  # pytest-xdist: basetemp / the worker's name
        base = base.parent
    run = os.environ.get("PYTEST_XDIST_TESTRUNUID", "single")
    folder = base / f"shared-grades-{run}"
    folder.mkdir(parents=True, exist_ok=True)
    _CACHE["dir"] = folder
    yield
    _CACHE["dir"] = None


def _target_files(impl: str) -> list[Path] | None:
    """The files a grade of `impl` reads besides the grader: the target and the Python files
    beside it (a mutant imports its helpers from there); None when it is no file of ROOT."""
    path = ROOT / impl if impl.endswith(".py") else ROOT / (impl.replace(".", "/") + ".py")
    if not path.is_file():
        return None
    return sorted(path.parent.glob("*.py"))


def _tree_digest(folder: Path) -> str:
    h = hashlib.sha256()
    for path in sorted(p for p in folder.rglob("*") if p.is_file()
                       and "__pycache__" not in p.parts):
        h.update(str(path.relative_to(folder)).encode() + b"\0" + path.read_bytes() + b"\0")
    return h.hexdigest()


def _grade_key(impl: str, extra: tuple[str, ...]) -> str | None:
    files = _target_files(impl)
    if files is None:
        return None
    if _CACHE["grader"] is None:
        _CACHE["grader"] = _tree_digest(ROOT / "grader")
    env = {k: v for k, v in grader_env().items() if not k.startswith("PYTEST_")}
    h = hashlib.sha256()
    for part in (sys.executable, str(ROOT), impl, json.dumps(extra), _CACHE["grader"],
                 json.dumps(sorted(env.items()))):
        h.update(part.encode() + b"\0")
    for path in files:
        h.update(path.name.encode() + b"\0" + path.read_bytes() + b"\0")
    return h.hexdigest()


def shared_grade(impl: str, out: Path, *extra: str) -> tuple[subprocess.CompletedProcess, dict]:
    """`python -m grader --impl IMPL --json OUT EXTRA...`, or the same grade another test of
    this session ran: keyed by the target's bytes (and its folder's), the arguments, the
    grader's source, the environment (pytest's own variables aside) and the interpreter."""
    key = _grade_key(impl, extra)
    folder = _CACHE["dir"]
    command = [sys.executable, "-m", "grader", "--impl", impl, "--json", str(out), *extra]
    if key is None or folder is None:
        proc = run_grader(*command[3:], forked=True)
    else:
        kept = folder / f"{key}.json"
        with held(folder / f"{key}.lock"):  # one worker computes, the others wait for it
            if not kept.exists():
                proc = run_grader(*command[3:], forked=True)
                if out.exists():
                    record = {"returncode": proc.returncode, "stdout": proc.stdout,
                              "stderr": proc.stderr,
                              "results": out.read_text(encoding="utf-8")}
                    partial = kept.with_suffix(".part")
                    partial.write_text(json.dumps(record), encoding="utf-8")
                    partial.replace(kept)
                return _checked(proc, out)
        record = json.loads(kept.read_text(encoding="utf-8"))
        out.write_text(record["results"], encoding="utf-8")
        proc = subprocess.CompletedProcess(command, record["returncode"], record["stdout"],
                                           record["stderr"])
    return _checked(proc, out)


@contextlib.contextmanager
def held(path: Path):
    """An exclusive lock across processes and threads, named by the file `path`, held for the
    `with`: `fcntl.flock` where there is fcntl (POSIX), `msvcrt.locking` on Windows (both let
    go by the system when the holder ends, however it ends); where there is neither (the
    simulated Windows of tests/windowsish) a file created with O_EXCL (`_created`)."""
    try:
        import fcntl
    except ImportError:
        fcntl = None
    try:
        import msvcrt
    except ImportError:
        msvcrt = None
    if fcntl is None and msvcrt is None:
        with _created(path):
            yield
        return
    with open(path, "a+b") as lock:
        if fcntl is not None:
            fcntl.flock(lock, fcntl.LOCK_EX)
        else:
            while True:
                try:  # its first byte (past the end is allowed); LK_LOCK tries for 10 s, raises
                    lock.seek(0)
                    msvcrt.locking(lock.fileno(), msvcrt.LK_LOCK, 1)
                    break
                except OSError:
                    continue
        yield  # closing the file lets go of either lock


LOCK_POLL = 0.05  # seconds between two looks at a lock another holds (`_created`)


@contextlib.contextmanager
def _created(path: Path):
    """`held` where the system has no lock of files: the lock is the file PATH.N of the lowest
    generation N whose holder still runs, created with O_EXCL (one creator wins), holding its
    holder's pid, removed when it lets go. A holder that ended holding it (a worker killed mid-
    grade) leaves PATH.N behind: the waiters then race for PATH.N+1, which one creates, and
    so on; nothing is ever removed but by its holder."""
    generation = 0
    while True:
        lock = path.with_name(f"{path.name}.{generation}")
        try:
            fd = os.open(lock, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o600)
        except FileExistsError:
            try:
                holder = int(lock.read_text(encoding="ascii") or "0")
            except FileNotFoundError:  # let go meanwhile
                generation = 0
                continue
            except (OSError, ValueError):
                holder = 0
            if holder and os.name == "posix" and gone(holder):  # it ended holding it
                generation += 1
                continue
            time.sleep(LOCK_POLL)  # held (or its pid not written yet): look again from the start
            generation = 0
            continue
        with os.fdopen(fd, "w", encoding="ascii") as mine:
            mine.write(str(os.getpid()))
        try:
            yield
        finally:
            lock.unlink()
        return


def _checked(proc: subprocess.CompletedProcess, out: Path):
    assert out.exists(), f"no results.json (exit {proc.returncode}):\n{proc.stderr}"
    return proc, json.loads(out.read_text(encoding="utf-8"))


def selected(request, names: str | tuple[str, ...], values: list) -> list:
    """The `values` of parameter `names` (a tuple of names: tuples of their values) that the
    session's selected tests of the requesting module use, in their order: a module fixture
    that grades every mutant grades only those `-k` kept (`pytest tests/test_mutants.py -k
    NAME` grades that mutant alone). A selected test that uses the fixture without those
    parameters needs every value: all of them, then."""
    several = isinstance(names, tuple)
    wanted = []
    for item in request.session.items:
        if item.module is not request.module or \
                request.fixturename not in getattr(item, "fixturenames", ()):
            continue
        params = getattr(getattr(item, "callspec", None), "params", {})
        if not all(n in params for n in (names if several else (names,))):
            return list(values)  # a selected test that reads every value
        wanted.append(tuple(params[n] for n in names) if several else params[names])
    return [value for value in values if value in wanted]


def by_check(results: dict) -> dict[str, dict]:
    return {t["extra_data"]["check_id"]: t for t in results["tests"]}


def points(*check_ids: str) -> int:
    """The points the registry (grader.checkdef) gives these checks, summed. A test that expects
    a score reads it here, never as a literal: re-weighting a check breaks no other test."""
    from grader.checkdef import all_checks

    checks = all_checks()
    return sum(checks[check_id].points for check_id in check_ids)


def family_checks(name: str) -> list[str]:
    """The ids of the checks of one family (`boundaries`), in lesson order."""
    from grader.checkdef import all_checks

    return [check_id for check_id, info in all_checks().items() if info.family.name == name]


@pytest.fixture(scope="session")
def solution_results(tmp_path_factory) -> tuple[subprocess.CompletedProcess, dict]:
    return grade("solutions.queue", tmp_path_factory.mktemp("solution"), shared=True)


@pytest.fixture(scope="session")
def stub_results(tmp_path_factory) -> tuple[subprocess.CompletedProcess, dict]:
    return grade("lab.queue", tmp_path_factory.mktemp("stubs"), shared=True)


#: Source for a hostile target: `channel_fds()` lists the write ends of pipes it holds (the
#: channel to the judge among them), as code that wants to forge messages would find them.
CHANNEL_FDS = """
import os


def channel_fds():
    found = []
    for name in os.listdir("/proc/self/fd"):
        try:
            if not os.readlink(f"/proc/self/fd/{name}").startswith("pipe:"):
                continue
            with open(f"/proc/self/fdinfo/{name}") as info:
                flags = int(info.read().split("flags:")[1].split()[0], 8)
        except (OSError, IndexError, ValueError):
            continue
        if flags & 3 == os.O_WRONLY:
            found.append(int(name))
    return found
"""


def gone(pid: int) -> bool:
    """No process has this pid any more."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    return False
