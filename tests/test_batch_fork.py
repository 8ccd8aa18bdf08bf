"""`batch` grades each submission in a process forked by one fork server
(grader.instructor.fork_server) rather than in a fresh interpreter: the same gradebook whatever
--jobs, nothing left running afterwards, and a submission's noise costs it nothing.

Outcomes only: no timing is asserted here (bench/batch.py measures the speed-up)."""

from __future__ import annotations

import contextlib
import csv
import os
import shutil
import time
from pathlib import Path

import pytest

from grader.harness.processes import jail
import conftest
from conftest import ROOT, points, run_grader
from grader.instructor import isolated

ATTACKS = ROOT / "tests" / "attacks"
LIMIT = 12  # seconds per submission
SEED = "7"
SELECT = "test_boundaries"
HANG = ("def claim(conn, owner, now, lease_ms):\n    while True:\n        pass\n\n"
        "def finish(conn, claim, now):\n    return False\n\n"
        "def work_once(conn, owner, send, clock, lease_ms):\n    return None\n")
#: At import: bytes that are not text, control characters, half a JSON verdict, no newline at
#: the end, on stdout and stderr, through Python and straight to the fds (after the reference).
GARBAGE = ('\nimport os, sys\n'
           'print("\\x00\\x1b[2J\\x07{\\"result\\": {\\"outcome\\": \\"passed\\"", end="")\n'
           'print("\\udcff" * 3, file=sys.stderr, end="")\n'
           'sys.stdout.flush(); sys.stderr.flush()\n'
           'os.write(1, bytes(range(256)) * 64)\n'
           'os.write(2, b"\\xff\\xfe\\x00garbage" * 1000)\n')
pytestmark = pytest.mark.skipif(not isolated.fork_supported(), reason="no fork server here")


def make_class(root: Path) -> Path:
    subs = root / "submissions"
    subs.mkdir()
    solution = (ROOT / "solutions" / "queue.py").read_text(encoding="utf-8")
    (subs / "correct.py").write_text(solution, encoding="utf-8")
    (subs / "mutant").mkdir()
    (subs / "mutant" / "queue.py").write_text(
        solution.replace(":now < lease_until", ":now <= lease_until"), encoding="utf-8")
    (subs / "hang.py").write_text(HANG, encoding="utf-8")
    (subs / "crash_at_import.py").write_text("import os\nos._exit(3)\n", encoding="utf-8")
    shutil.copy(ATTACKS / "detach_and_linger.py", subs / "detach.py")
    (subs / "garbage.py").write_text(solution + GARBAGE, encoding="utf-8")
    return subs


def run_batch(root: Path, subs: Path, jobs: int, marks: Path) -> dict:
    out = root / f"grades-{jobs}"
    proc = run_grader("batch", str(subs), "--jobs", str(jobs), "--out", str(out), "--timeout",
                      str(LIMIT), "--timeout-scale", "20", "-k", SELECT, "--seed", SEED,
                      "--lang", "en", "--quiet",
                      env={"TMPDIR": str(root), "LEASELAB_ATTACK_DIR": str(marks),
                           "LEASELAB_EXTRA_WRITABLE": str(marks)}, timeout=LIMIT * 6 + 240)
    assert proc.returncode == 0, proc.stderr
    with open(out / "gradebook.csv", newline="", encoding="utf-8") as f:
        table = list(csv.reader(f))
    return {"proc": proc, "out": out, "table": table,
            "rows": {r[0]: dict(zip(table[0], r)) for r in table[1:]}}


@pytest.fixture(scope="module")
def batches(tmp_path_factory):
    root = tmp_path_factory.mktemp("forked")
    subs = make_class(root)
    marks = root / "marks"
    marks.mkdir()
    one = run_batch(root, subs, 1, marks)
    two = run_batch(root, subs, 2, marks)
    return {"root": root, "marks": marks, 1: one, 2: two}


def test_the_gradebook_is_the_same_with_one_job_and_with_two(batches):
    assert batches[1]["table"] == batches[2]["table"]
    rows = batches[2]["rows"]
    assert {name: (row["status"], row["seed"]) for name, row in rows.items()} == {
        "correct": ("graded", SEED), "crash_at_import": ("graded", SEED),
        "detach": ("graded", SEED), "garbage": ("graded", SEED), "hang": ("timed_out", SEED),
        "mutant": ("graded", SEED)}
    full = rows["correct"]["max_score"]
    assert rows["correct"]["score"] == rows["garbage"]["score"] == full
    assert 0 < int(rows["mutant"]["score"]) < int(full)
    assert rows["mutant"]["finish-at-expiry"] == "0"
    assert rows["crash_at_import"]["score"] == rows["hang"]["score"] == "0"


def test_each_submission_keeps_its_results_and_log(batches):
    for jobs in (1, 2):
        out = batches[jobs]["out"]
        names = set(batches[jobs]["rows"])
        assert {p.stem for p in (out / "results").glob("*.json")} == names
        # the grader's own output, per submission: the forked grade wrote its log
        log = (out / "logs" / "correct.log").read_text(encoding="utf-8")
        assert "Score:" in log and f"--replay {SEED}" in log


def _leftovers(root: Path) -> list[str]:
    """Processes with their working directory, an open file or their command line below
    `root` (a grade's work folder, its targets, what they left behind)."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit() or int(entry) == os.getpid():
            continue
        try:
            cwd = os.readlink(f"/proc/{entry}/cwd")
            cmdline = Path(f"/proc/{entry}/cmdline").read_bytes().decode(errors="replace")
            links = [os.readlink(f"/proc/{entry}/fd/{fd}")
                     for fd in os.listdir(f"/proc/{entry}/fd")]
        except OSError:
            continue
        if any(str(root) in place for place in [cwd, cmdline, *links]):
            found.append(f"{entry}: {cmdline.replace(chr(0), ' ')}")
    return found


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="needs /proc")
def test_nothing_is_left_running(batches):
    assert _leftovers(batches["root"]) == []
    pids = [int(p.name.rsplit("-", 1)[1]) for p in batches["marks"].glob("pid-*")]
    refused = list(batches["marks"].glob("refused-*"))
    assert pids or refused, "the detaching submission did not run"
    if jail.native_arch() is not None:  # its target process may start no process: none did
        assert pids == [] and refused
    alive = [pid for pid in pids if Path(f"/proc/{pid}").exists()
             and Path(f"/proc/{pid}/stat").read_text().split(") ")[1][0] != "Z"]
    assert alive == []
    time.sleep(2.5)  # longer than the detached processes wait before writing their marker
    assert list(batches["marks"].glob("marker-*")) == []


# -- in this process: the fork server itself --------------------------------------------------

def _children() -> set[int]:
    me = str(os.getpid())
    found = set()
    for entry in os.listdir("/proc"):
        try:
            stat = Path(f"/proc/{entry}/stat").read_text()
        except OSError:
            continue
        if entry.isdigit() and stat[stat.rfind(")") + 2:].split()[1] == me:
            found.add(int(entry))
    return found


def test_inside_forking_a_grade_is_forked_and_the_server_ends_with_it(tmp_path, monkeypatch):
    def fresh(*args, **kwargs):
        raise AssertionError("graded in a fresh interpreter")

    before = _children()
    monkeypatch.setattr(isolated, "_run_fresh", fresh)
    (tmp_path / "work").mkdir()
    with isolated.forking():
        assert isolated._server is not None
        assert isolated._server.process.pid in _children()
        outcome = isolated.grade(ROOT / "solutions" / "queue.py", tmp_path / "work",
                                 limit=LIMIT * 5, select="finish-at-expiry",
                                 with_folder=False, seed=3, check_jobs=1)
    full = points("finish-at-expiry")
    assert (outcome.status, outcome.results["score"], outcome.seed) == ("graded", full, 3)
    assert f"Score: {full} / {full}" in outcome.log
    assert isolated._server is None and _children() == before  # the server has ended


def test_outside_forking_a_grade_runs_in_a_fresh_interpreter(tmp_path, monkeypatch):
    """The Gradescope and Classroom 50 autograders grade one submission: as before."""
    used = []
    real_fresh = isolated._run_fresh
    monkeypatch.setattr(isolated, "_run_fresh",
                        lambda *a, **k: used.append("fresh") or real_fresh(*a, **k))
    assert isolated._server is None
    (tmp_path / "work").mkdir()
    outcome = isolated.grade(ROOT / "solutions" / "queue.py", tmp_path / "work",
                             limit=LIMIT * 5, select="finish-at-expiry", with_folder=False,
                             seed=3)
    assert used == ["fresh"]
    assert (outcome.status, outcome.results["score"]) == ("graded", points("finish-at-expiry"))


def test_a_start_up_environment_the_server_cannot_apply_runs_afresh(tmp_path, monkeypatch):
    """PYTHON* read at start-up differ (here PYTHONHASHSEED) from the server's: the grade runs
    the old way, and is graded all the same."""
    used = []
    real_fresh = isolated._run_fresh
    monkeypatch.setattr(isolated, "_run_fresh",
                        lambda *a, **k: used.append("fresh") or real_fresh(*a, **k))
    with isolated.forking():
        monkeypatch.setenv("PYTHONHASHSEED", "123")
        (tmp_path / "work").mkdir()
        outcome = isolated.grade(ROOT / "solutions" / "queue.py", tmp_path / "work",
                                 limit=LIMIT * 5, select="finish-at-expiry",
                                 with_folder=False, seed=3)
    assert used == ["fresh"]
    assert (outcome.status, outcome.results["score"]) == ("graded", points("finish-at-expiry"))


def _verdicts(outcome: isolated.Outcome) -> tuple:
    return (outcome.status, outcome.seed, outcome.results["score"],
            sorted((t["extra_data"]["check_id"], t["score"], t["extra_data"]["outcome"])
                   for t in outcome.results["tests"]))


def test_a_forked_grade_is_the_fresh_grade(tmp_path, monkeypatch):
    """The same submissions and seed, graded afresh and forked: the same verdicts."""
    fresh = []
    real_fresh = isolated._run_fresh
    monkeypatch.setattr(isolated, "_run_fresh",
                        lambda *a, **k: fresh.append(isolated._server) or real_fresh(*a, **k))
    mutant = tmp_path / "mutant.py"
    mutant.write_text((ROOT / "solutions" / "queue.py").read_text(encoding="utf-8").replace(
        ":now < lease_until", ":now <= lease_until"), encoding="utf-8")
    graded = {}
    for how in ("fresh", "forked"):
        with isolated.forking() if how == "forked" else contextlib.nullcontext():
            assert (isolated._server is not None) == (how == "forked")
            for impl in (ROOT / "solutions" / "queue.py", mutant):
                work = tmp_path / f"{how}-{impl.stem}-{impl.parent.name}"
                work.mkdir()
                graded[how, impl] = _verdicts(isolated.grade(
                    impl, work, limit=LIMIT * 10, select=SELECT, with_folder=False, seed=5,
                    check_jobs=1))
    assert fresh == [None, None]  # the two fresh grades; the forked two were forked
    for impl in (ROOT / "solutions" / "queue.py", mutant):
        assert graded["fresh", impl] == graded["forked", impl]
    assert graded["forked", mutant][2] < graded["forked", ROOT / "solutions" / "queue.py"][2]


# -- the suite's own fork server (conftest.run_grader's forked=True) ------------------------------

@pytest.mark.parametrize("args", [
    ("--impl", "nope.py"),  # refused: one line on stderr, exit 2
    ("--impl", "solutions.queue", "-k", "finish-at-expiry"),
    ("--impl", "tests/mutants/tx_autocommit.py", "--hints",
     "-k", "claim-in-one-immediate-transaction or finish-at-expiry"),
], ids=["refused", "passes", "fails"])
def test_a_forked_grade_writes_what_a_fresh_one_does(args):
    """The fork server, given a file for stderr apart (the suite reads the two apart), forks a
    grade whose exit status, stdout and stderr are a fresh interpreter's, byte for byte."""
    forked = conftest._forked(list(args), ROOT, conftest.grader_env(), 300)
    fresh = conftest.run_grader(*args)
    assert forked is not None, "the fork server did not serve a grade in the suite's environment"
    assert (forked.returncode, forked.stdout, forked.stderr) == \
        (fresh.returncode, fresh.stdout, fresh.stderr)
    assert fresh.stderr if args[1] == "nope.py" else fresh.stdout
