"""`python -m grader batch`: a class of submissions graded in parallel, in isolation.

One batch (module fixture) grades a small class: a correct file, a mutant (folder with a helper
module), a folder holding lab/queue.py, a hang, two crashes, a syntax error and an empty folder.
Only the boundary checks run (-k test_boundaries), so the test does not grow with the catalogue.
"""

from __future__ import annotations

import csv
import io
import json
import os
import re
import shutil
import time
from pathlib import Path

import pytest

from conftest import MUTANTS, ROOT, run_grader
from grader.checkdef import all_checks
from grader.instructor import class_report, gradebook
from grader.instructor.progress import Progress
from grader.instructor.submission import NoSubmission, Submission, discover, find_queue_py

LIMIT = 12  # seconds per submission; a correct one takes about 1 s here
BOUNDARY_IDS = ["finish-before-expiry", "finish-at-expiry", "finish-after-expiry",
                "reclaim-before-expiry", "reclaim-at-expiry", "reclaim-after-expiry"]
POINTS = {cid: info.points for cid, info in all_checks().items()}
BOUNDARY_POINTS = str(sum(POINTS[cid] for cid in BOUNDARY_IDS))
MUTANT = "boundary_finish_at_expiry_accepted"
STUB_TAIL = "def finish(conn, claim, now):\n    return False\n\n" \
            "def work_once(conn, owner, send, clock, lease_ms):\n    return None\n"
SUBMISSIONS = {
    "hang.py": "def claim(conn, owner, now, lease_ms):\n    while True:\n        pass\n\n"
               + STUB_TAIL,
    "crash_at_import.py": "import os\nos._exit(3)\n",
    "crash_in_claim.py": "import os\n\ndef claim(conn, owner, now, lease_ms):\n    os._exit(3)\n\n"
                         + STUB_TAIL,
    "syntax.py": "def claim(conn, owner, now, lease_ms)\n    return None\n",
}


def make_class(root: Path) -> Path:
    subs = root / "submissions"
    subs.mkdir()
    shutil.copy(ROOT / "solutions" / "queue.py", subs / "correct.py")
    (subs / "mutant").mkdir()  # the reference with one bug, self-contained as a student's
    solution = (ROOT / "solutions" / "queue.py").read_text(encoding="utf-8")
    assert solution.count(":now < lease_until") == 1
    (subs / "mutant" / "queue.py").write_text(
        solution.replace(":now < lease_until", ":now <= lease_until"), encoding="utf-8")
    (subs / "borrower").mkdir()  # a catalogue mutant: its helper imports the reference
    shutil.copy(MUTANTS / f"{MUTANT}.py", subs / "borrower" / "queue.py")
    for helper in MUTANTS.glob("_*.py"):
        shutil.copy(helper, subs / "borrower" / helper.name)
    (subs / "repo" / "lab").mkdir(parents=True)
    shutil.copy(ROOT / "solutions" / "queue.py", subs / "repo" / "lab" / "queue.py")
    (subs / "repo" / "README.md").write_text("a student's clone\n")
    (subs / "empty").mkdir()
    for name, source in SUBMISSIONS.items():
        (subs / name).write_text(source)
    return subs


@pytest.fixture(scope="module")
def batch(tmp_path_factory):
    root = tmp_path_factory.mktemp("batch")
    subs = make_class(root)
    out = root / "grades"
    start = time.monotonic()
    proc = run_grader("batch", str(subs), "--jobs", "2", "--out", str(out), "--timeout",
                      str(LIMIT), "--timeout-scale", "20", "-k", "test_boundaries",
                      "--lang", "en", env={"TMPDIR": str(root)}, timeout=LIMIT + 240)
    elapsed = time.monotonic() - start
    with open(out / "gradebook.csv", newline="", encoding="utf-8") as f:
        table = list(csv.reader(f))
    return {"root": root, "out": out, "proc": proc, "elapsed": elapsed, "table": table,
            "rows": {r[0]: dict(zip(table[0], r)) for r in table[1:]}}


def test_gradebook_has_one_row_per_submission_and_a_column_per_check(batch):
    assert batch["proc"].returncode == 0, batch["proc"].stderr
    assert batch["table"][0] == ["submission", "status", "score", "max_score", *BOUNDARY_IDS,
                                 "message", "seed"]
    # Each submission graded in a world of its own (a fresh seed), written down to replay it;
    # one that never reached the grader (no queue.py) has none.
    seeds = {r["submission"]: r["seed"] for r in batch["rows"].values()}
    assert seeds["empty"] == ""
    # written so that a spreadsheet keeps it (text: digits grouped by underscores, which
    # --replay and int() take as they are)
    assert all(re.fullmatch(r"\d{1,3}(_\d{3})*", seed) for name, seed in seeds.items()
               if name != "empty"), seeds
    drawn = [int(seed) for name, seed in seeds.items() if name != "empty"]
    assert len(set(drawn)) == len(drawn) and 1 not in drawn
    assert [r[0] for r in batch["table"][1:]] == [
        "borrower", "correct", "crash_at_import", "crash_in_claim", "empty", "hang", "mutant",
        "repo", "syntax"]
    assert {r["max_score"] for r in batch["rows"].values()} == {BOUNDARY_POINTS}


def test_correct_and_mutant_rows_carry_points_per_check(batch):
    rows = batch["rows"]
    for name in ("correct", "repo"):  # repo: graded by its lab/queue.py
        assert (rows[name]["status"], rows[name]["score"]) == ("graded", BOUNDARY_POINTS), \
            rows[name]
    assert rows["mutant"]["finish-at-expiry"] == "0"
    assert rows["mutant"]["finish-before-expiry"] == str(POINTS["finish-before-expiry"])
    assert rows["mutant"]["score"] == str(int(BOUNDARY_POINTS) - POINTS["finish-at-expiry"])
    assert rows["correct"]["message"] == rows["mutant"]["message"] == ""
    # The borrower's helper _kit.py imports the reference: the import is refused in the target
    # process (sealed: graded, 0 points) and the gradebook says why.
    assert (rows["borrower"]["status"], rows["borrower"]["score"]) == ("graded", "0")
    assert "_kit.py: solutions.queue" in rows["borrower"]["message"]


def test_crashes_and_syntax_errors_are_graded_zero(batch):
    for name in ("crash_at_import", "crash_in_claim", "syntax"):
        row = batch["rows"][name]
        assert (row["status"], row["score"]) == ("graded", "0"), row
        assert all(row[cid] == "0" for cid in BOUNDARY_IDS), row
    assert batch["rows"]["empty"]["status"] == "missing"
    assert "queue.py" in batch["rows"]["empty"]["message"]


def test_a_hang_costs_only_its_own_row(batch):
    row = batch["rows"]["hang"]
    assert (row["status"], row["score"]) == ("timed_out", "0")
    assert all(row[cid] == "" for cid in BOUNDARY_IDS)
    # Without the per-submission limit the hang would take 6 checks x 100 s (scaled timeouts).
    assert batch["elapsed"] < LIMIT + 180
    saved = json.loads((batch["out"] / "results" / "hang.json").read_text(encoding="utf-8"))
    assert {t["extra_data"]["outcome"] for t in saved["tests"]} == {"timed_out"}
    assert saved["score"] == 0


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="needs /proc")
def test_nothing_is_left_running(batch):
    marker = str(batch["root"])
    leftovers = []
    for entry in os.listdir("/proc"):
        try:
            cmdline = Path("/proc", entry, "cmdline").read_bytes().decode(errors="replace")
        except OSError:
            continue
        if entry.isdigit() and marker in cmdline:
            leftovers.append(cmdline.replace("\0", " "))
    assert leftovers == []


def test_class_report_puts_the_most_failed_check_first(batch):
    html = (batch["out"] / "class-report.html").read_text(encoding="utf-8")
    ranked = re.findall(r'data-check="([a-z0-9-]+)"', html)
    assert ranked[0] == "finish-at-expiry" and sorted(ranked) == sorted(BOUNDARY_IDS)
    assert "Finishing exactly at lease_until is rejected" in html
    # over the 4 graded submissions whose code ran (correct, crash_in_claim, mutant, repo): the
    # crash in claim and the mutant fail it; syntax, crash_at_import and the borrower (its import
    # of the reference is sealed) ran none of their code and are listed apart, not counted
    assert "2 / 4 (50%)" in html
    for name in ("borrower", "crash_at_import", "syntax"):
        assert f'data-submission="{name}" data-status="never-ran"' in html
    assert "Out of the 4 graded submissions whose code ran (of 7 graded)" in html
    assert 'data-submission="hang" data-status="timed_out"' in html
    assert 'data-submission="empty" data-status="missing"' in html
    assert "<script" not in html and "http" not in html.split("</style>")[0]


def test_finished_lines_go_to_stderr_when_not_a_tty(batch):
    lines = [line for line in batch["proc"].stderr.splitlines() if line.startswith("[")]
    assert len(lines) == 9 and "[9/9]" in lines[-1]


# --- fast unit tests: no grading ---------------------------------------------------------------

def test_where_a_folder_submission_is_graded_from(tmp_path):
    (tmp_path / "a" / "lab").mkdir(parents=True)
    (tmp_path / "a" / "lab" / "queue.py").write_text("")
    (tmp_path / "a" / "queue.py").write_text("")
    assert find_queue_py(tmp_path / "a") == tmp_path / "a" / "queue.py"
    (tmp_path / "a" / "queue.py").unlink()
    assert find_queue_py(tmp_path / "a") == tmp_path / "a" / "lab" / "queue.py"
    nested = tmp_path / "b" / "download" / "src"
    nested.mkdir(parents=True)
    (nested / "queue.py").write_text("")
    (tmp_path / "b" / ".venv" / "lib").mkdir(parents=True)
    (tmp_path / "b" / ".venv" / "lib" / "queue.py").write_text("")
    assert find_queue_py(tmp_path / "b") == nested / "queue.py"
    (tmp_path / "b" / "other").mkdir()
    (tmp_path / "b" / "other" / "queue.py").write_text("")
    with pytest.raises(NoSubmission) as ambiguous:
        find_queue_py(tmp_path / "b")
    assert ambiguous.value.kind == "ambiguous" and len(ambiguous.value.candidates) == 2


def test_discover_takes_folders_and_py_files(tmp_path):
    for name in ("bob", ".git", "__MACOSX"):
        (tmp_path / name).mkdir()
    for name in ("alice.py", "notes.txt"):
        (tmp_path / name).write_text("")
    assert discover(tmp_path) == [Submission("alice", tmp_path / "alice.py"),
                                  Submission("bob", tmp_path / "bob")]


def test_progress_prints_one_line_per_submission_off_a_tty():
    stream = io.StringIO()
    progress = Progress(2, "ja", stream=stream)
    progress.finished("alice", "graded", 20, 20)
    progress.finished("bob", "timed_out", 0, 20)
    progress.close()
    assert stream.getvalue() == "[1/2] alice: 採点済み 20/20\n[2/2] bob: 時間切れ 0/20\n"


def test_class_report_in_japanese_without_grades():
    rows = [gradebook.Row("alice", "timed_out", 0, 20, message="…")]
    html = class_report.render(rows, BOUNDARY_IDS, {}, "ja")
    assert "クラスレポート" in html and "採点できた提出物がない" in html


def test_instructor_catalogue_has_both_languages():
    entries = json.loads((ROOT / "grader" / "report" / "catalogue" / "instructor.json").read_text("utf-8"))
    assert all(v.get("en") and v.get("ja") for v in entries.values())


def test_batch_refuses_a_missing_folder(tmp_path):
    proc = run_grader("batch", str(tmp_path / "nope"), "--out", str(tmp_path / "g"))
    assert proc.returncode == 2 and "nope" in proc.stderr


class _Terminal(io.StringIO):
    def isatty(self):
        return True


def test_progress_redraws_one_bar_on_a_terminal():
    stream = _Terminal()
    progress = Progress(4, "en", stream=stream)
    progress.finished("alice", "graded", 20, 20)
    progress.finished("bob", "crashed", 0, 20)
    progress.close()
    out = stream.getvalue()
    assert out.count("\r") == 2 and out.endswith("\n") and out.count("\n") == 1
    assert "█" * 15 + "░" * 15 + " [2/4] bob: grader failed 0/20" in out


def test_every_submission_gets_a_row_of_its_own_whatever_its_name(tmp_path):
    """Names a class folder can hold, side by side: a folder and a file of one name (`x/`,
    `x.py`), a file whose name ends in `.py` twice (`x.py.py`, whose stem is `x.py`), a name
    as long as a file name may be, one that is not UTF-8. Each is graded under a row name of
    its own, its results in a file of its own; nothing is lost and no row takes another's
    score (a do-nothing x.py does not get x/'s full marks)."""
    from grader.instructor.batch import MAX_NAME_BYTES, unique_names

    folder = tmp_path / "class"
    (folder / "x").mkdir(parents=True)
    reference = (ROOT / "solutions" / "queue.py").read_text(encoding="utf-8")
    stubs = (ROOT / "lab" / "queue.py").read_text(encoding="utf-8")
    (folder / "x" / "queue.py").write_text(reference, encoding="utf-8")
    (folder / "x.py").write_text(stubs, encoding="utf-8")
    (folder / "x.py.py").write_text(reference, encoding="utf-8")
    long = "L" * 252 + ".py"
    (folder / long).write_text(stubs, encoding="utf-8")
    odd = os.fsdecode(b"bad\xff\xfeutf8.py")
    (folder / odd).write_text(reference, encoding="utf-8")
    names = [s.name for s in unique_names(discover(folder))]
    assert len(set(names)) == len(names) == 5
    assert all(len(n.encode("utf-8")) <= MAX_NAME_BYTES for n in names)
    out = tmp_path / "out"
    proc = run_grader("batch", str(folder), "--out", str(out), "--jobs", "2", "-k",
                      "finish-at-expiry", forked=True)
    assert proc.returncode == 0, proc.stderr
    with open(out / "gradebook.csv", encoding="utf-8") as f:
        rows = {row["submission"]: row for row in csv.DictReader(f)}
    assert sorted(rows) == sorted(names)
    scores = {name: int(row["score"]) for name, row in rows.items()}
    assert scores["x"] == 3 and scores["x.py"] == 0  # the folder's and the file's own
    assert sorted(scores.values()) == [0, 0, 3, 3, 3]
    assert sorted(p.stem for p in (out / "results").glob("*.json")) == sorted(names)


def test_a_name_made_unique_is_never_an_entry_s_own_name_graded_before_it(tmp_path):
    """The `~hash` a second claimant of a name gets cannot meet an entry that is already named
    so, in whatever order the entries come: then `~2` follows. (Two names that are not UTF-8
    read alike once their bytes are U+FFFD; a third entry is named as the second's `~hash`.)"""
    import hashlib

    from grader.instructor.batch import unique_names

    first, second = os.fsdecode(b"a\xff.py"), os.fsdecode(b"a\xfe.py")
    digest = hashlib.sha256(os.fsencode(second)).hexdigest()[:10]
    made = f"a\ufffd~{digest}"
    for name in (f"{made}.py", first, second):
        (tmp_path / name).write_text("", encoding="utf-8")
    crafted = [Submission(made, tmp_path / f"{made}.py"),
               Submission(first[:-3], tmp_path / first), Submission(second[:-3], tmp_path / second)]
    assert [s.name for s in unique_names(crafted)] == [made, "a\ufffd", f"{made}~2"]
