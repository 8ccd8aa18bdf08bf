"""Submission folders are untrusted input: whatever they hold (dangling symlinks from a bundled
virtualenv, symlink loops, FIFOs, links to files outside, huge files), finding and copying them
never follows a link, never opens a FIFO, stays bounded, and batch writes a row for each."""

from __future__ import annotations

import csv
import json
import os
import threading

import pytest

from grader.checkdef import all_checks

from conftest import ROOT, run_grader
from grader.instructor import isolated, submission
from grader.instructor.submission import (NoSubmission, Submission, TooLarge, copied_files,
                                          discover, find_queue_py, queue_py_of)

SOLUTION = (ROOT / "solutions" / "queue.py").read_text(encoding="utf-8")
#: Appended to the solution: at import, the graded copy must hold the regular files and none
#: of the links or the FIFO (a module-level assert makes every check fail otherwise).
COPY_GUARD = """
import os as _os
_here = _os.path.dirname(_os.path.abspath(__file__))
assert _os.path.isfile(_os.path.join(_here, "pkg", "helper.py")), "regular file not copied"
for _name in ("dangling.py", "loop", "fifo", "passwd", "secret.py", "outside_dir", "venv"):
    assert not _os.path.lexists(_os.path.join(_here, _name)), _name + " was copied"
"""


def untrusted_folder(folder, outside):
    """A folder submission holding every kind of file that used to crash or leak a copy."""
    (folder / "pkg").mkdir(parents=True)
    (folder / "queue.py").write_text(SOLUTION + COPY_GUARD)
    (folder / "pkg" / "helper.py").write_text("X = 1\n")
    (outside / "secret.py").write_text("TOKEN = 'not yours'\n")
    (outside / "dir").mkdir(exist_ok=True)
    (folder / "dangling.py").symlink_to(folder / "no-such-target.py")  # a bundled venv's kind
    (folder / "loop").symlink_to(folder / "loop")
    (folder / "pkg" / "up").symlink_to(folder)  # a folder loop, for walks that follow links
    os.mkfifo(folder / "fifo")
    (folder / "passwd").symlink_to("/etc/passwd")
    (folder / "secret.py").symlink_to(outside / "secret.py")
    (folder / "outside_dir").symlink_to(outside / "dir")
    (folder / "venv" / "lib").mkdir(parents=True)
    (folder / "venv" / "lib" / "x.py").symlink_to(folder / "gone")
    return folder


def sparse(path, size):
    with open(path, "wb") as f:
        f.truncate(size)  # a size on paper only: no disk used


@pytest.fixture
def outside(tmp_path):
    (tmp_path / "outside").mkdir()
    return tmp_path / "outside"


def test_copy_takes_regular_files_only(tmp_path, outside):
    folder = untrusted_folder(tmp_path / "alice", outside)
    assert copied_files(folder) == [submission.Path("pkg/helper.py"), submission.Path("queue.py")]


def test_copy_never_opens_a_fifo_and_never_follows_a_link(tmp_path, outside):
    folder = untrusted_folder(tmp_path / "alice", outside)
    work = tmp_path / "work"
    done = []
    worker = threading.Thread(target=lambda: done.append(
        isolated._copy_submission(folder / "queue.py", work, with_folder=True)), daemon=True)
    worker.start()
    worker.join(10)
    assert done, "the copy hung (a FIFO opened?) or raised"
    copied = sorted(p.relative_to(work / "submission").as_posix()
                    for p in (work / "submission").rglob("*"))
    assert copied == ["pkg", "pkg/helper.py", "queue.py"]


def test_a_virtualenv_is_skipped_by_its_pyvenv_cfg_whatever_its_name(tmp_path):
    (tmp_path / "myenv" / "lib").mkdir(parents=True)
    (tmp_path / "myenv" / "pyvenv.cfg").write_text("home = /usr/bin\n")
    (tmp_path / "myenv" / "lib" / "queue.py").write_text("")
    (tmp_path / "queue.py").write_text("")
    assert copied_files(tmp_path) == [submission.Path("queue.py")]
    (tmp_path / "queue.py").unlink()
    with pytest.raises(NoSubmission):
        find_queue_py(tmp_path)


@pytest.mark.parametrize("kind", ["file", "total", "entries"])
def test_a_submission_over_the_bounds_is_too_large(tmp_path, kind):
    (tmp_path / "queue.py").write_text("")
    if kind == "file":
        sparse(tmp_path / "data.bin", submission.MAX_FILE_BYTES + 1)
    elif kind == "total":
        for i in range(submission.MAX_TOTAL_BYTES // submission.MAX_FILE_BYTES + 1):
            sparse(tmp_path / f"part{i}.bin", submission.MAX_FILE_BYTES)
    else:
        for i in range(submission.MAX_ENTRIES):
            (tmp_path / f"m{i}.py").touch()
    with pytest.raises(TooLarge) as large:
        copied_files(tmp_path)
    assert large.value.kind == kind
    assert large.value.file == ("data.bin" if kind == "file" else "")


@pytest.mark.parametrize("lang, words", [("en", "data.bin is over 5 MB"), ("ja", "5 MB")])
def test_too_large_is_a_not_graded_outcome_with_the_reason(tmp_path, lang, words):
    (tmp_path / "alice").mkdir()
    (tmp_path / "alice" / "queue.py").write_text("")
    sparse(tmp_path / "alice" / "data.bin", submission.MAX_FILE_BYTES + 1)
    outcome = isolated.grade(tmp_path / "alice" / "queue.py", tmp_path / "work", lang=lang)
    assert outcome.status == isolated.TOO_LARGE == outcome.results["extra_data"]["status"]
    assert words in outcome.results["output"] and outcome.results["score"] == 0
    assert not (tmp_path / "work" / "submission").exists()  # nothing of it is looked into


def test_a_linked_queue_py_or_lab_folder_is_not_graded_from_outside(tmp_path, outside):
    (outside / "queue.py").write_text(SOLUTION)
    folder = tmp_path / "bob"
    folder.mkdir()
    (folder / "queue.py").symlink_to(outside / "queue.py")
    (folder / "lab").symlink_to(outside)
    (folder / "deeper").symlink_to(outside)
    with pytest.raises(NoSubmission) as missing:
        find_queue_py(folder)
    assert missing.value.kind == "missing"
    (folder / "src").mkdir()
    (folder / "src" / "queue.py").write_text("")  # its own file, below: that one is graded
    assert find_queue_py(folder) == folder / "src" / "queue.py"


def test_discover_lists_linked_and_special_entries_it_never_follows_nor_opens(tmp_path,
                                                                             outside):
    """A symbolic link (to a file, a folder, itself) and a .py that is a FIFO are submissions
    of their own that cannot be graded ('not_regular'), so the gradebook shows them: never
    followed, never opened (a FIFO would block the grade that opened it)."""
    (outside / "carol.py").write_text(SOLUTION)
    klass = tmp_path / "class"
    klass.mkdir()
    (klass / "alice").mkdir()
    (klass / "carol.py").symlink_to(outside / "carol.py")
    (klass / "dave").symlink_to(outside)
    (klass / "loop").symlink_to(klass / "loop")
    (klass / "alice" / "again").symlink_to(klass)
    os.mkfifo(klass / "erin.py")
    (klass / "notes.txt").symlink_to(outside / "carol.py")  # not a .py: still a link, listed
    found = discover(klass)
    assert found == [Submission("alice", klass / "alice"), Submission("carol", klass / "carol.py"),
                     Submission("dave", klass / "dave"), Submission("erin", klass / "erin.py"),
                     Submission("loop", klass / "loop"),
                     Submission("notes.txt", klass / "notes.txt")]
    for listed in found[1:]:
        with pytest.raises(NoSubmission) as refused:
            queue_py_of(listed)
        assert refused.value.kind == "not_regular", listed
    with pytest.raises(NoSubmission):
        find_queue_py(klass / "alice")


def test_batch_writes_a_row_for_every_submission_whatever_it_holds(tmp_path, outside):
    subs = tmp_path / "class"
    untrusted_folder(subs / "alice", outside)
    (subs / "bob").mkdir()
    (subs / "bob" / "queue.py").symlink_to(ROOT / "solutions" / "queue.py")
    (subs / "carol").mkdir()
    (subs / "carol" / "queue.py").write_text(SOLUTION)
    sparse(subs / "carol" / "dump.bin", submission.MAX_FILE_BYTES + 1)
    (subs / "dave.py").write_text("(" * 50 + "-" * 100_000 + "1")  # the parser gives up
    os.mkfifo(subs / "erin.py")  # opened, it would block the grade
    (subs / "frank").symlink_to(subs / "carol")
    out = tmp_path / "grades"
    proc = run_grader("batch", str(subs), "--jobs", "2", "--out", str(out), "--timeout", "60",
                      "-k", "finish_before_expiry", "--lang", "en", "--quiet",
                      env={"TMPDIR": str(tmp_path)}, timeout=240)
    assert proc.returncode == 0, proc.stderr
    with open(out / "gradebook.csv", newline="", encoding="utf-8") as f:
        rows = {r["submission"]: r for r in csv.DictReader(f)}
    status = {name: (r["status"], r["score"]) for name, r in rows.items()}
    full = str(all_checks()["finish-before-expiry"].points)
    assert status == {"alice": ("graded", full), "bob": ("missing", "0"),
                      "carol": ("too_large", "0"), "dave": ("graded", "0"),
                      "erin": ("not_regular", "0"), "frank": ("not_regular", "0")}, rows
    assert "not a regular file or folder" in rows["erin"]["message"]
    assert "dump.bin is over 5 MB" in rows["carol"]["message"]
    saved = json.loads((out / "results" / "carol.json").read_text(encoding="utf-8"))
    assert saved["extra_data"]["status"] == "too_large"


def test_a_copy_that_fails_still_gives_an_outcome(tmp_path, monkeypatch):
    def fail(src, dst):
        raise OSError(36, "File name too long", str(dst))

    (tmp_path / "alice").mkdir()
    (tmp_path / "alice" / "queue.py").write_text("")
    monkeypatch.setattr(isolated, "_copy_regular", fail)
    outcome = isolated.grade(tmp_path / "alice" / "queue.py", tmp_path / "work", lang="ja")
    assert outcome.status == isolated.CRASHED and outcome.results["score"] == 0
    assert "コピーできません" in outcome.results["output"] and "File name too long" in \
        outcome.results["output"]
