"""`python -m grader batch DIR --roster CSV`: Canvas and Moodle import files, feedback per
submission, and who the roster and the submissions do not match, beside the gradebook. One small
batch (module fixture: the reference, the stubs, a submission missing from the roster) grades
only finish-before-expiry, so the test does not grow with the catalogue.
"""

from __future__ import annotations

import csv
import shutil
from pathlib import Path

import pytest

from conftest import ROOT, run_grader
from grader.checkdef import all_checks
from grader.instructor import gradebook, lms
from grader.report import messages

CHECK = "finish-before-expiry"
POINTS = all_checks()[CHECK].points
ROSTER = ("\ufeffsubmission,name,id,sis_user_id,sis_login_id,section,username,email\n"
          "correct,\"Doe, Alice\",101,S1,alice@u,Sec A,alice,alice@example.org\n"
          "stub,=HYPERLINK(\"http://x\"),102,S2,bob@u,Sec B,bob,bob@example.org\n"
          "carol,\"Roe, Carol\",103,S3,carol@u,Sec A,carol,carol@example.org\n")


@pytest.fixture(scope="module")
def batch(tmp_path_factory):
    root = tmp_path_factory.mktemp("lms")
    subs = root / "submissions"
    subs.mkdir()
    shutil.copy(ROOT / "solutions" / "queue.py", subs / "correct.py")
    shutil.copy(ROOT / "lab" / "queue.py", subs / "stub.py")
    shutil.copy(ROOT / "solutions" / "queue.py", subs / "stranger.py")
    (root / "roster.csv").write_text(ROSTER, encoding="utf-8")
    out = root / "grades"
    proc = run_grader("batch", str(subs), "--jobs", "2", "--out", str(out), "-k", CHECK,
                      "--timeout-scale", "20", "--lang", "en", "--roster",
                      str(root / "roster.csv"), "--assignment", "Leases", "--assignment-id",
                      "4242", env={"TMPDIR": str(root)}, timeout=300)
    assert proc.returncode == 0, proc.stderr
    return {"out": out, "proc": proc}


def table(path: Path) -> list[list[str]]:
    with open(path, newline="", encoding="utf-8") as f:
        return list(csv.reader(f))


def test_canvas_file_has_the_import_columns_points_possible_and_scores(batch):
    rows = table(batch["out"] / "canvas.csv")
    assert rows[0] == ["Student", "ID", "SIS User ID", "SIS Login ID", "Section",
                       "Leases (4242)"]
    assert rows[1] == ["Points Possible", "", "", "", "", str(POINTS)]
    assert rows[2:] == [["Doe, Alice", "101", "S1", "alice@u", "Sec A", str(POINTS)],
                        ["'=HYPERLINK(\"http://x\")", "102", "S2", "bob@u", "Sec B", "0"]]


def test_moodle_file_maps_by_username_email_or_id_number(batch):
    assert table(batch["out"] / "moodle.csv") == [
        ["Username", "Email address", "ID number", "Leases"],
        ["alice", "alice@example.org", "S1", str(POINTS)],
        ["bob", "bob@example.org", "S2", "0"]]


def test_who_is_not_matched_is_listed_not_dropped(batch):
    out, stderr = batch["out"], batch["proc"].stderr
    assert (out / "not-in-roster.txt").read_text() == "stranger\n"
    assert (out / "no-submission.txt").read_text() == "carol\n"
    assert "Not in the roster (graded, but left out of the LMS files): stranger" in stderr
    assert "In the roster without a submission (left out of the LMS files): carol" in stderr
    graded = {row[0] for row in table(out / "gradebook.csv")[1:]}
    assert graded == {"correct", "stub", "stranger"}


def test_feedback_per_submission_has_the_score_and_each_check(batch):
    feedback = batch["out"] / "feedback"
    assert sorted(p.name for p in feedback.iterdir()) == ["correct.txt", "stranger.txt",
                                                          "stub.txt"]
    correct = (feedback / "correct.txt").read_text(encoding="utf-8")
    assert correct.startswith(f"correct: {POINTS}/{POINTS} points\n")
    assert f"[{CHECK}]: passed, {POINTS}/{POINTS}" in correct
    stub = (feedback / "stub.txt").read_text(encoding="utf-8")
    assert f"[{CHECK}]: not implemented, 0/{POINTS}" in stub
    assert "\x1b[" not in stub and "\n    " in stub  # no colours; the failure text, indented


def test_a_batch_without_roster_leaves_no_lms_files_of_an_earlier_one(batch, tmp_path):
    out = tmp_path / "grades"
    shutil.copytree(batch["out"], out)
    subs = tmp_path / "subs"
    subs.mkdir()
    shutil.copy(ROOT / "lab" / "queue.py", subs / "only.py")
    proc = run_grader("batch", str(subs), "--out", str(out), "-k", CHECK, "--lang", "en",
                      "--quiet", env={"TMPDIR": str(tmp_path)}, timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert not any((out / name).exists() for name in lms.OUTPUT_FILES)
    assert not any((out / "feedback").iterdir())


@pytest.mark.parametrize("text,kind", [
    ("name,id\nalice,1\n", "no-header"),
    ("", "no-header"),
    ("submission,name,grade\nalice,A,3\n", "unknown-column"),
    ("submission,email,Email\nalice,a,b\n", "repeated-column"),
    ("submission,name\nalice,A,extra\n", "long-row"),
    ("submission,name\n,A\n", "no-submission"),
    ("submission,name\nalice,A\n\nalice,B\n", "duplicate"),
])
def test_a_bad_roster_is_refused_with_its_reason(tmp_path, text, kind):
    (tmp_path / "r.csv").write_text(text, encoding="utf-8")
    with pytest.raises(lms.RosterError) as refused:
        lms.read_roster(tmp_path / "r.csv")
    assert refused.value.kind == kind
    assert messages.text(messages.ROSTER_PROBLEM(kind), "ja", **refused.value.params)
    if kind == "duplicate":
        assert refused.value.params["line"] == 4  # the file's line, blank lines counted


def test_a_roster_with_bom_and_spaced_headers_reads(tmp_path):
    (tmp_path / "r.csv").write_bytes("\ufeff Submission , Email \nalice, a@x \n".encode())
    assert lms.read_roster(tmp_path / "r.csv")["alice"]["email"] == "a@x"


@pytest.mark.parametrize("roster", ["missing.csv", "latin1.csv", "bad.csv"])
def test_batch_refuses_a_bad_roster_in_one_line_before_grading(tmp_path, roster):
    subs = tmp_path / "subs"
    subs.mkdir()
    (subs / "hang.py").write_text("while True:\n    pass\n")  # never graded
    (tmp_path / "latin1.csv").write_bytes("submission,name\nal,Andr\xe9\n".encode("latin-1"))
    (tmp_path / "bad.csv").write_text("submission,name\nal,A\nal,B\n", encoding="utf-8")
    proc = run_grader("batch", str(subs), "--out", str(tmp_path / "grades"), "--lang", "en",
                      "--roster", str(tmp_path / roster), timeout=60)
    assert proc.returncode == 2
    assert len(proc.stderr.strip().splitlines()) == 1 and "roster" in proc.stderr
    assert not (tmp_path / "grades" / "gradebook.csv").exists()


def test_assignment_id_must_be_digits(tmp_path):
    proc = run_grader("batch", str(tmp_path), "--roster", "r.csv", "--assignment-id", "x1")
    assert proc.returncode == 2


def test_feedback_of_a_submission_without_verdict_is_its_reason():
    row = gradebook.Row("eve", "missing", 0, 10, message="No queue.py")
    results = {"output": "No queue.py was found.", "tests": [
        {"name": "T [x]", "score": 0, "max_score": 10, "status": "failed", "output": "No"}]}
    assert lms.feedback(row, results, "en") == "eve: 0/10 points\nNo queue.py was found.\n"


def test_the_roster_family_is_the_rosters_problems():
    assert messages.ROSTER_PROBLEM.members() == lms.ROSTER_PROBLEMS


def test_feedback_tells_a_shared_cause_once_not_under_each_check_it_explains():
    """The summary leads with the shared cause; each check it explains is one line pointing to
    it (a stub's feedback repeated the same paragraph under 35 checks)."""
    row = gradebook.Row("stub", "graded", 0, 6)
    said = "claim is not implemented yet: it raises NotImplementedError."
    results = {"output": f"Fix this first: one cause makes 2 checks fail\n{said}", "tests": [
        {"name": f"T{n} [t{n}]", "score": 0, "max_score": 2, "status": "failed",
         "output": f"See: {said}", "extra_data": {"outcome": "not_implemented", "cause": 1}}
        for n in (1, 2)] + [
        {"name": "Own [own]", "score": 0, "max_score": 2, "status": "failed",
         "output": "What happened:\nthis", "extra_data": {"outcome": "failed"}}]}
    text = lms.feedback(row, results, "en")
    assert text.count(said) == 1
    assert "T1 [t1]: not implemented, 0/2  → see cause 1 above\nT2 [t2]: not implemented" in text
    assert "Own [own]: failed, 0/2\n    What happened:\n    this\n" in text
