"""Result files a reader can trust (issue 12, item 3): a grade that is killed leaves no earlier
results.json behind; every results.json, gradebook and class report is written whole (a
temporary file beside it, renamed over it) or not at all; and no gradebook.csv cell becomes a
spreadsheet formula."""

from __future__ import annotations

import csv
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from conftest import ROOT
from grader.instructor import autograder, batch, gradebook, isolated
from grader.report import files, results_json

#: claim() says it was called, then hangs: the grader is mid-way through a check.
HANGS_IN_CLAIM = """import os, time

def claim(conn, owner, now, lease_ms):
    open(os.environ["LEASELAB_ATTACK_CLAIM_STARTED"], "w").close()
    time.sleep(600)

def finish(conn, claim, now):
    return False

def work_once(*args, **kwargs):
    return None
"""
STALE = {"score": 100, "max_score": 100, "output": "an earlier run", "tests": []}


def wait_for(path: Path, proc: subprocess.Popen, seconds: float = 120) -> None:
    deadline = time.monotonic() + seconds
    while not path.exists():
        assert proc.poll() is None, "the grader ended before the check started"
        assert time.monotonic() < deadline, "the check never called claim"
        time.sleep(0.05)


def test_a_killed_grade_leaves_no_stale_results_json(tmp_path):
    impl = tmp_path / "hangs.py"
    impl.write_text(HANGS_IN_CLAIM, encoding="utf-8")
    out, started = tmp_path / "out.json", tmp_path / "claim-started"
    out.write_text(json.dumps(STALE), encoding="utf-8")
    work = tmp_path / "tmp"  # the checks' databases: a target still running holds one open
    work.mkdir()
    env = {**os.environ, "NO_COLOR": "1", "LEASELAB_ATTACK_CLAIM_STARTED": str(started),
           "LEASELAB_EXTRA_WRITABLE": str(tmp_path), "TMPDIR": str(work)}
    proc = subprocess.Popen([sys.executable, "-m", "grader", "--impl", str(impl), "--json",
                             str(out), "-k", "finish-before-expiry"], cwd=ROOT, env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            start_new_session=True)
    try:
        wait_for(started, proc)  # grading has started: claim is running in a check
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(timeout=30)
    finally:
        isolated.kill_session(proc.pid)  # the check's own process group too
        proc.wait()
    assert not out.exists()
    # Nothing of the grade goes on: the target hanging in claim died with its parent.
    deadline = time.monotonic() + 10
    while holding(work) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert holding(work) == []


def holding(folder: Path) -> list[int]:
    """Processes with a file below `folder` open."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            fds = os.listdir(f"/proc/{entry}/fd")
            links = [os.readlink(f"/proc/{entry}/fd/{fd}") for fd in fds]
        except OSError:
            continue
        if any(link.startswith(str(folder)) for link in links):
            found.append(int(entry))
    return found


def test_the_autograder_removes_an_earlier_results_json_before_grading(tmp_path, monkeypatch):
    results = tmp_path / "results" / "results.json"
    results.parent.mkdir()
    results.write_text(json.dumps(STALE), encoding="utf-8")
    seen = []
    monkeypatch.setattr(autograder, "grade", lambda *a, **k: seen.append(results.exists()) or STALE)
    assert autograder.main(["--root", str(tmp_path)]) == 0
    assert seen == [False]


def test_a_batch_removes_the_earlier_gradebook_and_report_before_grading(tmp_path):
    out = tmp_path / "grades"
    (out / "results").mkdir(parents=True)
    earlier = [out / "gradebook.csv", out / "class-report.html", out / "results" / "bob.json",
               out / "results" / ".bob.json.0123456789ab.tmp"]
    for path in earlier:
        path.write_text("an earlier run\n", encoding="utf-8")
    (out / "notes.txt").write_text("the instructor's\n", encoding="utf-8")
    batch.remove_earlier_outputs(out)
    assert [p for p in earlier if p.exists()] == []
    assert (out / "notes.txt").exists()


def test_results_json_is_written_through_a_temporary_file_beside_it(tmp_path, monkeypatch):
    target = tmp_path / "results.json"
    renames = []
    real_replace = os.replace

    def replace(src, dst):
        renames.append((Path(src), Path(dst), Path(src).read_text(encoding="utf-8")))
        real_replace(src, dst)

    monkeypatch.setattr(os, "replace", replace)
    results_json.write(target, STALE)
    [(src, dst, written)] = renames
    assert dst == target and src != target and src.parent == target.parent
    assert json.loads(written) == STALE == json.loads(target.read_text(encoding="utf-8"))
    assert sorted(tmp_path.iterdir()) == [target]


@pytest.mark.parametrize("fails", ["json.dumps", "os.replace"])
def test_a_failed_write_leaves_the_old_file_whole_and_no_partial_file(tmp_path, monkeypatch,
                                                                      fails):
    target = tmp_path / "results.json"
    results_json.write(target, STALE)
    before = target.read_bytes()
    module, name = fails.split(".")

    def broken(*args, **kwargs):
        raise OSError(f"{fails} failed")

    monkeypatch.setattr({"json": json, "os": os}[module], name, broken)
    with pytest.raises(OSError, match=fails):
        results_json.write(target, {**STALE, "score": 0})
    assert target.read_bytes() == before
    assert sorted(tmp_path.iterdir()) == [target]


def test_the_atomic_write_keeps_the_csv_line_endings(tmp_path):
    files.write_atomically(tmp_path / "g.csv", "a,b\r\nc,d\r\n", newline="")
    assert (tmp_path / "g.csv").read_bytes() == b"a,b\r\nc,d\r\n"


# -- gradebook.csv: no cell becomes a spreadsheet formula ---------------------------------------
FORMULA_NAMES = ['=HYPERLINK("http://x","y")', "+1+1", "-2+3", "@SUM(A1)", "\tTAB", "\rCR"]


@pytest.mark.parametrize("name", FORMULA_NAMES, ids=repr)
def test_a_formula_cell_is_neutralised_and_numbers_stay_numbers(tmp_path, name):
    rows = [gradebook.Row(name, "graded", 15, 20, {"finish-at-expiry": (4, "passed")},
                          seed=2 ** 62),
            gradebook.Row("bob", "crashed", 0, 20, message=name)]
    gradebook.write_csv(tmp_path / "g.csv", rows, ["finish-at-expiry"])
    with open(tmp_path / "g.csv", newline="", encoding="utf-8") as f:
        header, alice, bob = list(csv.reader(f))
    assert alice == ["'" + name, "graded", "15", "20", "4", "", f"{2 ** 62:_}"]  # text, exact
    assert bob == ["bob", "crashed", "0", "20", "", "'" + name, ""]
    assert header[0] == "submission"


def test_a_batch_neutralises_a_submission_named_as_a_formula(tmp_path):
    submissions = tmp_path / "submissions"
    for name in ('=HYPERLINK("https:evil","y")', "-rf", "alice"):
        (submissions / name).mkdir(parents=True)  # no queue.py: status missing, nothing runs
    out = tmp_path / "grades"
    assert batch.main([str(submissions), "--out", str(out), "--quiet", "--lang", "en"]) == 0
    with open(out / "gradebook.csv", newline="", encoding="utf-8") as f:
        names = {row["submission"]: row for row in csv.DictReader(f)}
    assert set(names) == {"'=HYPERLINK(\"https:evil\",\"y\")", "'-rf", "alice"}
    assert names["alice"]["score"] == "0" and names["alice"]["status"] == "missing"
