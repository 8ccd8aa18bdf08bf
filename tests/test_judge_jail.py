"""The judge's jail (grader/harness/processes/jail.py, `enter_judge`): the processes that run the code's SQL
on the judge's connections (a lane, a forked judge, the preflight's probe) change files only
beneath their own work folder, so even a hole in dbhost's authorizer writes nothing outside the
grade; they still read anything, write /dev/null and work in their folder as before. And the
grading paths never run a judge in a process that is not jailed: the pytest plugin's judges are
forked (but with --pdb)."""

from __future__ import annotations

import errno
import json
import os
import socket
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import ROOT, grader_env, run_grader
from grader import cli, runner
from grader.checkdef import all_checks
from grader.harness.processes import jail, sandbox, workroot
from grader.results import Failure, Kind, Outcome

# REFER (rename or link into another folder) from ABI 2, TRUNCATE from ABI 3 (Linux 6.2)
pytestmark = pytest.mark.skipif(jail.available() < 3, reason="needs Landlock ABI 3 (Linux 6.2+)")


def outside_folder(tmp_path: Path) -> Path:
    """A folder of the test's, beside none of the grade's: an empty file in it (SQLite makes a
    database of any existing empty file), a file with bytes, a folder."""
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "empty.py").write_bytes(b"")
    (outside / "kept.txt").write_text("kept\n")
    (outside / "folder").mkdir()
    return outside


def listing(folder: Path) -> dict[str, bytes | None]:
    return {p.name: (p.read_bytes() if p.is_file() else None) for p in sorted(folder.iterdir())}


def attempts(outside: str, inside: str) -> dict[str, str]:
    """Every way of changing a file, tried outside this process's folder and inside it: what each
    gave ("allowed", or the error's errno name). Runs in the judge under test."""
    got: dict[str, str] = {}

    def attempt(name: str, action) -> None:
        try:
            action()
            got[name] = "allowed"
        except OSError as exc:
            got[name] = errno.errorcode.get(exc.errno, type(exc).__name__)
        except sqlite3.Error as exc:
            got[name] = f"sqlite3: {exc}"

    def bind(path: str) -> None:
        with socket.socket(socket.AF_UNIX) as s:
            s.bind(path)

    def sqlite_table(path: str) -> None:
        conn = sqlite3.connect(path, isolation_level=None)
        try:
            conn.execute("CREATE TABLE planted(x)")
        finally:
            conn.close()

    def attach(path: str) -> None:  # what the code's SQL would do through a hole
        conn = sqlite3.connect(":memory:", isolation_level=None)
        try:
            conn.execute("ATTACH ? AS p", (path,))
            conn.execute("CREATE TABLE p.planted(x)")
        finally:
            conn.close()

    def append(path: str) -> None:
        with open(path, "a") as f:
            f.write("x")

    def read(path: str) -> None:
        with open(path) as f:
            f.read()

    for where, folder in (("outside", outside), ("inside", inside)):
        def at(name: str, folder=folder) -> str:
            return os.path.join(folder, name)

        if where == "inside":  # the same files as outside
            open(at("empty.py"), "w").close()
            with open(at("kept.txt"), "w") as f:
                f.write("kept\n")
            os.mkdir(at("folder"))
        own = os.path.join(inside, f"own-{where}")
        with open(own, "w") as f:  # a file of its own, to link or move
            f.write("own\n")
        attempt(f"{where}: read", lambda: read(os.path.join(outside, "kept.txt")))
        attempt(f"{where}: create", lambda: open(at("new.txt"), "x").close())
        attempt(f"{where}: sqlite in an empty file", lambda: sqlite_table(at("empty.py")))
        attempt(f"{where}: write an empty file", lambda: append(at("empty.py")))
        attempt(f"{where}: truncate", lambda: os.truncate(at("kept.txt"), 0))
        attempt(f"{where}: link into", lambda: os.link(own, at("linked.txt")))
        attempt(f"{where}: rename into", lambda: os.rename(own, at("moved.txt")))
        attempt(f"{where}: symlink", lambda: os.symlink("kept.txt", at("symlink")))
        attempt(f"{where}: fifo", lambda: os.mkfifo(at("fifo")))
        attempt(f"{where}: unix socket", lambda: bind(at("socket")))
        attempt(f"{where}: make a folder", lambda: os.mkdir(at("new-folder")))
        attempt(f"{where}: remove a file", lambda: os.remove(at("kept.txt")))
        attempt(f"{where}: remove a folder", lambda: os.rmdir(at("folder")))
        attempt(f"{where}: sqlite attach", lambda: attach(at("attached.db")))
    attempt("write /dev/null", lambda: append(os.devnull))
    return got


def refused(got: dict[str, str]) -> None:
    """Every change outside refused, every one inside allowed; reading and /dev/null too."""
    outside = {name: how for name, how in got.items() if name.startswith("outside: ")}
    inside = {name: how for name, how in got.items() if name.startswith("inside: ")}
    assert outside.pop("outside: read") == "allowed"
    assert len(outside) == 13 and all(how != "allowed" for how in outside.values()), outside
    # the kernel's words: EACCES, EXDEV for a rename or link across the jail's edge
    assert {how for name, how in outside.items() if "sqlite" not in name} <= {"EACCES", "EXDEV"}
    assert all(how.startswith("sqlite3: ") for name, how in outside.items() if "sqlite" in name)
    assert inside == {name: "allowed" for name in inside} and len(inside) == 14, inside
    assert got["write /dev/null"] == "allowed"


def test_a_forked_judge_changes_files_only_in_its_own_folder(tmp_path):
    outside = outside_folder(tmp_path)
    before = listing(outside)

    def body():
        here = workroot.folder()
        return {"folder": here, "got": attempts(str(outside), here)}

    answer = sandbox.run(body, timeout=60)
    assert isinstance(answer, dict), answer
    assert os.path.basename(answer["folder"]).startswith("judge-")
    refused(answer["got"])
    assert listing(outside) == before


def test_a_lane_changes_files_only_in_its_own_folder(tmp_path, monkeypatch):
    """A lane (a grade's fork that runs its checks' judges in itself), in a real grade: the
    check it is handed tries instead (the lanes are forks: they see the patch)."""
    outside = outside_folder(tmp_path)
    before = listing(outside)

    def run_unit(unit, settings, **kwargs):
        here = workroot.folder()
        got = {"folder": here, "got": attempts(str(outside), here)}
        failure = Failure(Outcome.FAILED, Kind.DETAIL, detail="x", params={"got": json.dumps(got)})
        return [failure] * len(settings.seeds), 0.0

    monkeypatch.setattr(runner, "run_unit", run_unit)
    (result,) = runner.run_checks("solutions.queue", jobs=1, select="finish-at-expiry")
    answer = json.loads(result.result.params["got"])
    assert os.path.basename(answer["folder"]).startswith("lane-")
    refused(answer["got"])
    assert listing(outside) == before


#: The code's SQL, through a hole in the authorizer: ATTACH names a database by a bound path, an
#: expression (both reached the authorizer with no name before issue 37), a literal, and an
#: existing empty file; then creates a table in it. What each gave goes to the attack's folder.
ATTACHES = '''
import json, os


def _attach(conn):
    outside = os.environ["LEASELAB_ATTACK_OUTSIDE"]
    got = {}
    for how, sql, args in (
            ("bound", "ATTACH ? AS p", (os.path.join(outside, "bound.db"),)),
            ("expression", "ATTACH ? || 'expression.db' AS p", (outside + os.sep,)),
            ("literal", "ATTACH '" + os.path.join(outside, "literal.db") + "' AS p", ()),
            ("empty file", "ATTACH ? AS p", (os.path.join(outside, "empty.py"),))):
        try:
            conn.execute(sql, args)
            try:
                conn.execute("CREATE TABLE p.planted(x)")
                got[how] = "written"
            finally:
                conn.execute("DETACH p")
        except Exception as exc:
            got[how] = f"{type(exc).__name__}: {exc}"
    mark = os.path.join(os.environ["LEASELAB_ATTACK_DIR"], str(os.getpid()))
    with open(mark + ".tmp", "w") as f:
        json.dump(got, f)
    os.rename(mark + ".tmp", mark + ".json")


def claim(conn, owner, now, lease_ms):
    _attach(conn)
    return None


def finish(conn, claim, now):
    return False


def work_once(conn, owner, send, clock, lease_ms):
    return None
'''


def attach_attack(tmp_path: Path) -> tuple[Path, Path, Path, dict]:
    """(the hostile file, the folder it aims at, its marks' folder, the grade's environment)."""
    impl = tmp_path / "attaches.py"
    impl.write_text(ATTACHES, encoding="utf-8")
    marks = tmp_path / "marks"
    marks.mkdir()
    outside = outside_folder(tmp_path)
    env = {"LEASELAB_ATTACK_OUTSIDE": str(outside), "LEASELAB_ATTACK_DIR": str(marks),
           "LEASELAB_EXTRA_WRITABLE": str(marks)}  # the target may leave its marks there
    return impl, outside, marks, env


def attached_nothing(marks: Path, outside: Path, before: dict, at_least: int) -> None:
    tries = [json.loads(p.read_text(encoding="utf-8")) for p in sorted(marks.glob("*.json"))]
    assert len(tries) >= at_least, "the attack did not run"
    assert all(set(got) == {"bound", "expression", "literal", "empty file"} and
               "written" not in got.values() for got in tries), tries
    assert listing(outside) == before


#: A check judged in its lane (lowest-id-first) and one in a forked judge (race-one-winner:
#: its claimers' connections are the judge's); the preflight's probe calls claim too.
LANE_AND_FORKED = "lowest-id-first or race-one-winner"


def test_the_codes_sql_writes_nothing_outside_the_grade(tmp_path):
    impl, outside, marks, env = attach_attack(tmp_path)
    before = listing(outside)
    proc = run_grader("--impl", str(impl), "-k", LANE_AND_FORKED, env=env)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    attached_nothing(marks, outside, before, at_least=3)


def test_the_codes_sql_writes_nothing_outside_the_grade_through_pytest(tmp_path):
    """The pytest plugin grades from pytest's own process, which is not jailed: its judges are
    forked and jailed as a lane's are."""
    impl, outside, marks, env = attach_attack(tmp_path)
    before = listing(outside)
    full = grader_env(env)
    full.pop("PYTEST_XDIST_WORKER", None)
    full.pop("PYTEST_ADDOPTS", None)
    proc = subprocess.run([sys.executable, "-m", "pytest", "-n", "0", "-p", "no:cacheprovider",
                           "--pyargs", "grader.checks", "--impl", str(impl), "-q",
                           "-k", LANE_AND_FORKED], cwd=ROOT, env=full, capture_output=True,
                          text=True, timeout=300)
    assert proc.returncode == 1, proc.stdout[-3000:] + proc.stderr
    attached_nothing(marks, outside, before, at_least=3)


def test_the_pytest_plugins_judges_run_forked_but_with_pdb(monkeypatch):
    """runner.grade_check (the plugin's way) forks every judge, a check that starts no process
    of its own too; `here` (--pdb) judges it in this process."""
    def run_check(body, spec, workdir, seed, call_timeout, check, hung, detailed, alone, model):
        return Failure(Outcome.FAILED, Kind.DETAIL, detail="x", params={"pid": os.getpid()})

    monkeypatch.setattr(runner.checkrun, "run_check", run_check)
    settings = runner.Settings("solutions.queue", 1.0, (1,), False)
    info = all_checks()["finish-at-expiry"]
    assert not info.family.starts_processes
    forked = runner.grade_check(info, settings)
    here = runner.grade_check(info, settings, here=True)
    assert forked.result.params["pid"] != os.getpid() == here.result.params["pid"]


@pytest.mark.parametrize("lang", ["en", "ja"])
def test_a_kernel_without_landlock_is_said_once(monkeypatch, capsys, lang):
    assert cli.unjailed_note(lang) is None  # this kernel has it
    monkeypatch.setattr(jail, "available", lambda: 0)
    note = cli.unjailed_note(lang)
    assert note and "Landlock" in note
    code = cli.main(["--impl", "solutions.queue", "-k", "finish-at-expiry", "--lang", lang])
    assert code == 0
    err = capsys.readouterr().err
    assert err.count("Landlock") == 1 and note in err
