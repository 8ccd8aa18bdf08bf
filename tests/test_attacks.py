"""The attack catalogue (tests/attacks/): what a dishonest submission tries, graded as a student
or an instructor would grade it. Each attack is one small file; each test says what must hold."""

from __future__ import annotations

import contextlib
import csv
import errno
import html
import json
import os
import re
import signal
import subprocess
import time
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from conftest import ROOT, by_check, grade, run_grader
from learning import trick_off
from grader.harness.processes import jail, sandbox

ATTACKS = ROOT / "tests" / "attacks"


def alive(pid: int) -> bool:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat[stat.rfind(")") + 2] != "Z"


def test_nothing_the_code_under_grade_starts_outlives_the_grade(tmp_path):
    proc = run_grader("--impl", str(ATTACKS / "detach_and_linger.py"), "-k",
                      "finish-before-expiry or empty-queue-returns-none",
                      env={"LEASELAB_ATTACK_DIR": str(tmp_path),
                           "LEASELAB_EXTRA_WRITABLE": str(tmp_path)})
    assert proc.returncode == 1, proc.stderr
    # the probe's two target processes (claim's, and work_once's beside it) and both checks
    # imported it: four times it tried to leave six processes behind; the target's seccomp
    # filter lets it start none (each fork fails), and where there is no such filter every one
    # it started is ended with the check
    assert len(list(tmp_path.glob("started-*"))) == 4, "the attack did not run"
    pids = [int(p.name.rsplit("-", 1)[1]) for p in tmp_path.glob("pid-*")]
    if jail.native_arch() is not None:
        assert pids == [] and len(list(tmp_path.glob("refused-*"))) == 4 * 6
    assert [pid for pid in pids if alive(pid)] == []
    time.sleep(2.5)  # longer than the attack waits before writing its marker
    assert list(tmp_path.glob("marker-*")) == []


def sysv_segments() -> set[str]:
    """The System V shared memory segments that exist now (their ids)."""
    try:
        lines = Path("/proc/sysvipc/shm").read_text().splitlines()[1:]
    except OSError:
        return set()
    return {line.split()[1] for line in lines if line.strip()}


@pytest.mark.skipif(jail.native_arch() is None, reason="no seccomp filter for this arch")
def test_the_code_under_grade_makes_no_system_v_ipc_object(tmp_path):
    """A channel outside every folder, and memory that outlives the grade: shmget fails with
    EPERM in the target, nothing is left behind, and the grade is the stubs' grade."""
    before = sysv_segments()
    out = tmp_path / "results.json"
    proc = run_grader("--impl", str(ATTACKS / "sysv_shared_memory.py"), "-k",
                      "finish-before-expiry", "--json", str(out),
                      env={"LEASELAB_ATTACK_DIR": str(tmp_path),
                           "LEASELAB_EXTRA_WRITABLE": str(tmp_path)})
    assert proc.returncode == 1, proc.stderr
    tries = [p.name.split("_") for p in tmp_path.glob("shm_*")]
    assert len(tries) >= 9, "the attack did not run"
    assert all(segment == "-1" and errno == "1" for *_, segment, errno in tries), tries
    assert sysv_segments() <= before
    (tmp_path / "honest").mkdir()
    honest = grade("lab.queue", tmp_path / "honest", "-k", "finish-before-expiry")[1]
    assert json.loads(out.read_text())["score"] == honest["score"] == 0


@pytest.mark.skipif(jail.native_arch() != 0xC000003E, reason="the attack's key calls: x86_64")
def test_the_code_under_grade_holds_no_capability_and_reaches_no_file_metadata_nor_key(
        tmp_path):
    """A grader run as root lends the code under grade nothing: it holds no capability (no
    immutable flag a clean-up cannot remove, no raw socket, no watch on the machine's files),
    and the calls that reach past every folder's rules (a file's mode, times and extended
    attributes, which Landlock does not rule on; the user's key ring, which outlives the grade)
    fail with EPERM: the canary outside its folder is as it was, and no key is left."""
    outside = tmp_path / "outside"
    outside.mkdir()
    canary = outside / "canary.txt"
    canary.write_text("the grader's own file\n")
    canary.chmod(0o644)
    before = canary.stat()
    seen = tmp_path / "seen"
    seen.mkdir()
    proc = run_grader("--impl", str(ATTACKS / "beyond_folders.py"), "-k", "finish-before-expiry",
                      env={"LEASELAB_ATTACK_DIR": str(seen), "LEASELAB_ATTACK_CANARY": str(canary),
                           "LEASELAB_EXTRA_WRITABLE": str(seen)})
    assert proc.returncode == 1, proc.stderr
    tries = {name: int(code) for name, code in
             (p.name[len("try_"):].rsplit("_", 1) for p in seen.glob("try_*"))}
    assert set(tries) == {"chmod", "utime", "setxattr", "add_key", "keyctl"}, "it did not run"
    assert all(code == errno.EPERM for code in tries.values()), tries
    assert [p.name for p in seen.glob("caps_*")] == ["caps_0000000000000000"]
    after = canary.stat()
    assert (after.st_mode, after.st_mtime_ns) == (before.st_mode, before.st_mtime_ns)
    assert not os.listxattr(canary)


def test_escape_codes_from_the_code_under_grade_reach_no_report(tmp_path):
    out = tmp_path / "results.json"
    proc = run_grader("--impl", str(ATTACKS / "escape_codes_in_errors.py"), "-k",
                      "finish-before-expiry", "--json", str(out), "--junit",
                      str(tmp_path / "junit.xml"), "--markdown", str(tmp_path / "summary.md"))
    assert proc.returncode == 1, proc.stderr
    assert "Every check passed. Score: 100 / 100" in proc.stdout  # the text is shown ...
    for written in (proc.stdout, *(p.read_text(encoding="utf-8") for p in tmp_path.iterdir())):
        assert "\x1b" not in written and "\x07" not in written  # ... but never obeyed


#: What no output may hold: controls but the writers' own newline and tab, DEL, C1 controls,
#: zero-width and bidirectional controls, line and paragraph separators, the BOM.
NEVER_SHOWN = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200b-\u200f\u2028-\u202e"
                         "\u2060-\u206f\ufeff]")
#: What ends a line for a terminal, an editor or a viewer.
LINE_END = re.compile("[\n\r\x0b\x0c\x1c-\x1e\x85\u2028\u2029]")
#: What may stand before a line's text: spaces, Markdown's and HTML's markup.
LINE_START = re.compile(r"^(?:\s|<[^>]*>|[#>*|`-])*")


def texts_of(path: Path) -> list[str]:
    """Every text a writer's file holds, as a reader of that format gets it back."""
    raw = path.read_text(encoding="utf-8")
    if path.suffix == ".json":
        found = []

        def walk(data):
            if isinstance(data, str):
                found.append(data)
            elif isinstance(data, dict):
                [walk(k) or walk(v) for k, v in data.items()]
            elif isinstance(data, list):
                [walk(v) for v in data]
        walk(json.loads(raw))
        return [raw, *found]
    if path.suffix == ".xml":
        nodes = list(ET.fromstring(raw.encode("utf-8")).iter())
        return [raw, *(n.text or "" for n in nodes), *(n.tail or "" for n in nodes),
                *(v for n in nodes for v in n.attrib.values())]
    if path.suffix == ".html":
        return [raw, html.unescape(raw)]
    return [raw]


def forged_score_lines(text: str) -> list[str]:
    """The lines of `text` that read as a full score (the attack's real one is not)."""
    return [line for line in LINE_END.split(text)
            if LINE_START.sub("", line).startswith(("Score: 100", "Every check passed"))]


def test_text_from_the_code_under_grade_reaches_every_writer_as_one_visible_line(tmp_path):
    """hostile_text.py puts newlines, C1 controls, a right-to-left override, an escape sequence
    and the line "Score: 100/100" in every text of its a report shows (a type's name, a repr,
    an exception's message, a file name, the owner it stores). Every writer shows each of them
    on its line, escaped as a repr would (`\\n`, `\\x9b`, `\\u202e`): no output holds one of
    those characters or a forged line, and the trick scores no more than the same queue
    without it, check by check."""
    outputs = {"--json": "results.json", "--junit": "junit.xml", "--markdown": "summary.md",
               "--prairielearn": "pl.json", "--html": "report.html"}
    paths = [tmp_path / name for name in outputs.values()]
    proc = run_grader("--impl", str(ATTACKS / "hostile_text.py"),
                      *(a for option, path in zip(outputs, paths) for a in (option, str(path))))
    assert proc.returncode == 1, proc.stderr
    shown = [("terminal", proc.stdout)] + [(p.name, t) for p in paths for t in texts_of(p)]
    for name, text in shown:
        assert not NEVER_SHOWN.findall(text), (name, sorted(set(NEVER_SHOWN.findall(text))))
        assert forged_score_lines(text) == [], (name, forged_score_lines(text)[:3])
    for text in (proc.stdout, paths[2].read_text(encoding="utf-8")):  # shown, escaped
        assert "\\n\\rScore: 100/100\\n\\x85Score: 100 / 100\\u2028Score" in text
        assert "\\x9b2J\\u202e\\x1b[32mEvery check passed.\\x1b[0m\\u2066" in text
    honest = tmp_path / "hostile_text_honest.py"
    honest.write_text(trick_off("hostile_text", "HOSTILE_TEXT"), encoding="utf-8")
    _, honest_results = grade(str(honest), tmp_path)
    attack, honest = by_check(json.loads(paths[0].read_text("utf-8"))), by_check(honest_results)
    assert set(attack) == set(honest)
    assert sum(t["score"] for t in attack.values()) < sum(t["score"] for t in honest.values())
    for check_id, test in attack.items():
        assert test["score"] <= honest[check_id]["score"], check_id


def test_in_batch_text_from_the_code_under_grade_reaches_no_file_as_it_was_written(tmp_path):
    """hostile_text.py and its honest counterpart graded side by side in `batch`, with a roster:
    the gradebook, each submission's results, the class report, the LMS files and each
    student's feedback hold none of its control characters and no forged score line, and the
    trick scores no more than the same queue without it."""
    subs = tmp_path / "class"
    subs.mkdir()
    (subs / "hostile_text.py").write_text((ATTACKS / "hostile_text.py").read_text("utf-8"),
                                          encoding="utf-8")
    (subs / "honest.py").write_text(trick_off("hostile_text", "HOSTILE_TEXT"), encoding="utf-8")
    (tmp_path / "roster.csv").write_text("submission,name,id\nhostile_text,Mallory,1\n"
                                         "honest,Alice,2\n", encoding="utf-8")
    out = tmp_path / "grades"
    proc = run_grader("batch", str(subs), "--out", str(out), "--quiet", "--roster",
                      str(tmp_path / "roster.csv"), timeout=300)
    assert proc.returncode == 0, proc.stderr
    written = [p for p in out.rglob("*") if p.is_file()]
    assert len(written) >= 6 and any("feedback" in p.parts for p in written), written
    for path in written:
        for text in texts_of(path):
            assert not NEVER_SHOWN.findall(text), (path.name, set(NEVER_SHOWN.findall(text)))
            if not path.name.startswith("honest"):  # its own log rightly says 100 / 100
                assert forged_score_lines(text) == [], (path.name, forged_score_lines(text)[:3])
    feedback = (out / "feedback" / "hostile_text.txt").read_text(encoding="utf-8")
    assert "\\n\\rScore: 100/100\\n\\x85Score" in feedback  # shown, escaped
    with open(out / "gradebook.csv", newline="", encoding="utf-8") as f:
        rows = {row["submission"]: row for row in csv.DictReader(f)}
    assert rows["hostile_text"]["status"] == rows["honest"]["status"] == "graded"
    assert int(rows["hostile_text"]["score"]) < int(rows["honest"]["score"])


@pytest.mark.parametrize("how, limit", [("memory", "memory"), ("disk", "file size")])
def test_a_check_that_runs_out_of_a_resource_says_which(tmp_path, how, limit):
    out = tmp_path / "results.json"
    proc = run_grader("--impl", str(ATTACKS / "exhaust_resources.py"), "-k",
                      "reclaim-before-expiry", "--json", str(out),
                      env={"LEASELAB_ATTACK": how, "LEASELAB_ATTACK_DIR": str(tmp_path),
                           "LEASELAB_EXTRA_WRITABLE": str(tmp_path)})
    assert proc.returncode == 1, proc.stderr
    (test,) = json.loads(out.read_text(encoding="utf-8"))["tests"]
    assert test["extra_data"]["outcome"] == "resource_limit" and test["score"] == 0
    assert f"ran out of its {limit} limit" in test["output"]
    left = tmp_path / "fill.bin"
    assert not left.exists() or left.stat().st_size <= sandbox.FILE_BYTES


def test_batch_ends_what_a_killed_grading_left_detached(tmp_path):
    subs = tmp_path / "class"
    subs.mkdir()
    (subs / "mallory.py").write_text((ATTACKS / "detach_then_hang.py").read_text())
    marks = tmp_path / "marks"
    marks.mkdir()
    proc = run_grader("batch", str(subs), "--out", str(tmp_path / "grades"), "--timeout", "4",
                      "-k", "finish-before-expiry", "--quiet",
                      env={"LEASELAB_ATTACK_DIR": str(marks),
                           "LEASELAB_EXTRA_WRITABLE": str(marks)}, timeout=120)
    assert proc.returncode == 0, proc.stderr
    pids = [int(p.name.split("-")[1]) for p in marks.glob("pid-*")]
    assert pids or list(marks.glob("refused-*")), "the attack did not run"
    if jail.native_arch() is not None:  # no process may start in the target: none did
        assert pids == []
    assert [pid for pid in pids if alive(pid)] == []
    time.sleep(6.5)
    assert list(marks.glob("marker-*")) == []
    assert "timed_out" in (tmp_path / "grades" / "gradebook.csv").read_text()


# -- forged verdicts: nothing the code under grade writes is believed ---------------------------
#: Checks a do-nothing queue once passed by doing nothing (journal mode, empty work_once: each
#: now first sees the code take a claimable job) and two it always failed.
FORGERY_CHECKS = ("journal-mode-stays-delete or work-once-empty-queue or finish-before-expiry"
                  " or double-finish-rejected")


@pytest.fixture(scope="module")
def do_nothing(tmp_path_factory):
    _, results = grade(str(ATTACKS / "do_nothing.py"), tmp_path_factory.mktemp("baseline"),
                       "-k", FORGERY_CHECKS)
    return by_check(results)


@pytest.mark.parametrize("attack", ["forge_verdicts", "forge_replies"])
def test_a_forged_verdict_scores_no_more_than_doing_nothing(attack, do_nothing, tmp_path):
    """forge_verdicts writes "passed" result lines on every fd it holds or can open through
    /proc (the judge's, the grader's) and patches the grader's classes in its own process;
    forge_replies writes the replies the judge hopes for on its channel. Neither gains a
    point: a line without the judge's token is never believed, and the judge runs apart."""
    proc, results = grade(str(ATTACKS / f"{attack}.py"), tmp_path, "-k", FORGERY_CHECKS)
    assert proc.returncode == 1
    got = by_check(results)
    assert set(got) == set(do_nothing) and len(got) >= 4
    baseline = sum(t["score"] for t in do_nothing.values())
    assert baseline == 0  # no check passes code with no queue logic
    assert sum(t["score"] for t in got.values()) <= baseline
    for check_id, test in got.items():
        assert test["score"] <= do_nothing[check_id]["score"], check_id


def checkout_state() -> dict[str, bytes]:
    """Every file of the grader, lab/ and the reference, by path."""
    return {str(p): p.read_bytes() for folder in ("grader", "lab", "solutions")
            for p in sorted((ROOT / folder).rglob("*")) if p.is_file() and "__pycache__" not in
            p.parts}


def test_in_batch_no_attack_scores_more_than_doing_nothing(tmp_path):
    """The forgeries above, a submission that imports the reference under a spelling no scan
    finds and one that writes to the grader, the reference and results files, graded side by
    side in `batch` on an instructor's checkout (where solutions/ exists): each row scores no
    more than the do-nothing row, and the checkout is unchanged."""
    subs = tmp_path / "class"
    subs.mkdir()
    names = ("do_nothing", "forge_verdicts", "forge_replies", "borrow_reference",
             "tamper_with_the_grader")
    for name in names:
        (subs / f"{name}.py").write_text((ATTACKS / f"{name}.py").read_text())
    before = checkout_state()
    proc = run_grader("batch", str(subs), "--out", str(tmp_path / "grades"), "-k",
                      FORGERY_CHECKS, "--quiet", timeout=240)
    assert proc.returncode == 0, proc.stderr
    assert checkout_state() == before  # the grader, lab/ and the reference are untouched
    with open(tmp_path / "grades" / "gradebook.csv", newline="", encoding="utf-8") as f:
        rows = {row["submission"]: row for row in csv.DictReader(f)}
    assert set(rows) == set(names)
    baseline = int(rows["do_nothing"]["score"])
    assert baseline == 0 < int(rows["do_nothing"]["max_score"])
    for name in names:
        assert rows[name]["status"] == "graded" and int(rows[name]["score"]) <= baseline, rows[name]


def honest_counterpart(tmp_path: Path) -> Path:
    """own_connection.py with its trick switched off: the same queue on the given connection."""
    path = tmp_path / "own_connection_honest.py"
    path.write_text(trick_off("own_connection", "OWN_CONNECTION"), encoding="utf-8")
    return path


OWN_CHECKS = "race-one-winner or lowest-id-first or claim-in-one-immediate-transaction"


def test_a_claim_on_its_own_connection_scores_no_more_than_on_the_given_one(tmp_path):
    """Single mode: check by check the trick scores no more than its honest counterpart, and
    every check it fails says why: the connection of its own to the check's database."""
    _, honest = grade(str(honest_counterpart(tmp_path)), tmp_path)
    _, attack = grade(str(ATTACKS / "own_connection.py"), tmp_path)
    honest, attack = by_check(honest), by_check(attack)
    assert set(attack) == set(honest)
    assert sum(t["score"] for t in honest.values()) > 0
    for check_id, test in attack.items():
        assert test["score"] <= honest[check_id]["score"], check_id
        assert "opened a connection of its own to the check's database" in test["output"], \
            check_id


def test_in_batch_a_claim_on_its_own_connection_scores_no_more_than_on_the_given_one(tmp_path):
    subs = tmp_path / "class"
    subs.mkdir()
    (subs / "own_connection.py").write_text((ATTACKS / "own_connection.py").read_text())
    honest_counterpart(subs)
    proc = run_grader("batch", str(subs), "--out", str(tmp_path / "grades"), "-k", OWN_CHECKS,
                      "--quiet", timeout=240)
    assert proc.returncode == 0, proc.stderr
    with open(tmp_path / "grades" / "gradebook.csv", newline="", encoding="utf-8") as f:
        rows = {row["submission"]: row for row in csv.DictReader(f)}
    assert rows["own_connection_honest"]["status"] == rows["own_connection"]["status"] == "graded"
    assert int(rows["own_connection_honest"]["score"]) > 0
    assert int(rows["own_connection"]["score"]) == 0


def test_a_claim_that_stalls_the_race_scores_no_more_than_without_the_stall(tmp_path):
    """stall_the_lockstep.py: one claimer stops longer than the race's lockstep waits, so the
    lockstep gives up and both claims run freely; its claim reads before BEGIN IMMEDIATE, which
    the forced interleaving catches. It passed the race (+7) where the same claim without the
    stall fails it; a lockstep that was not completed is now a failure of its own."""
    honest = tmp_path / "stall_the_lockstep_honest.py"
    honest.write_text(trick_off("stall_the_lockstep", "STALL"), encoding="utf-8")
    _, honest_results = grade(str(honest), tmp_path, "-k", "race-one-winner")
    _, attack_results = grade(str(ATTACKS / "stall_the_lockstep.py"), tmp_path, "-k",
                              "race-one-winner")
    (honest_test,), (attack_test,) = honest_results["tests"], attack_results["tests"]
    assert honest_test["score"] == 0 and "Both processes got a Claim" in honest_test["output"]
    assert attack_test["score"] <= honest_test["score"]
    # The race now runs one statement at a time in every order that matters (explore.py): a
    # pause while the other claimer waits to be let go stops the schedule, a failure of its own
    # ("could not keep to its schedule ... never a pass"); a pause while nobody waits changes
    # nothing, and the double claim is shown.
    output = attack_test["output"]
    assert "Both processes got a Claim" in output or \
        ("could not keep" in output and "never a pass" in output), output


# -- what the target reports of the code it runs (issue 27) -------------------------------------
#: Attacks on the reports of the process that runs the code under grade: each patches that
#: process's server at import (statements, in_transaction, own connections, the race's gate,
#: fault counts) to hide a real bug of its queue. Attack -> the module constant that switches
#: its trick off (its honest counterpart: the same queue without the patches), and the check
#: that counterpart fails for the bug (so that each comparison has something to hide).
REPORTED = {
    "forge_trace_autocommit": ("FORGE", "claim-in-one-immediate-transaction"),
    "mute_the_gate": ("MUTE", "race-one-winner"),
    "drop_fault_triggers": ("DROP", "claim-rolls-back-on-error"),
}
_PR_SET_CHILD_SUBREAPER = 36
#: What `left_behind` reads: Linux's /proc.
NEEDS_PROC = pytest.mark.skipif(not Path("/proc/self/task").exists(), reason="needs /proc")


def reported_submissions(folder: Path) -> Path:
    """Each attack of REPORTED as `<attack>.py` in `folder`, its counterpart as
    `<attack>_honest.py`."""
    folder.mkdir(parents=True, exist_ok=True)
    for attack, (flag, _) in REPORTED.items():
        (folder / f"{attack}.py").write_text((ATTACKS / f"{attack}.py").read_text("utf-8"),
                                             encoding="utf-8")
        (folder / f"{attack}_honest.py").write_text(trick_off(attack, flag), encoding="utf-8")
    return folder


def my_children() -> set[int]:
    """The processes whose parent is this one."""
    found = set()
    for task in Path("/proc/self/task").iterdir():
        try:
            found |= {int(pid) for pid in (task / "children").read_text().split()}
        except OSError:
            pass
    return found


def checkout_status() -> tuple[str, dict[str, bytes]]:
    """`git status` of the checkout (ignored and untracked files too, bytecode caches aside)
    and the bytes of the grader, lab/ and the reference."""
    status = subprocess.run(["git", "status", "--porcelain", "--ignored",
                             "--untracked-files=all"], cwd=ROOT, capture_output=True,
                            text=True, check=True).stdout
    kept = "\n".join(line for line in status.splitlines() if "__pycache__" not in line)
    return kept, checkout_state()


@contextlib.contextmanager
def left_behind(folder: Path):
    """While inside, the grades started get `folder`/tmp as their temporary folder (TMPDIR),
    and this process is a subreaper: a process a grade leaves running becomes its child however
    it detached. Yields a dict that, on leaving, holds what the grades left: "processes" (their
    command lines; they are then killed), "files" (what is left in `folder`/tmp: a grade given
    a TMPDIR makes every folder of its own there, grader.harness.processes.workroot, so what other grades
    beside this one make and remove elsewhere is never counted) and "changed_checkout"."""
    found: dict = {}
    tmp = folder / "tmp"
    tmp.mkdir(parents=True)
    children, checkout = my_children(), checkout_status()
    saved = os.environ.get("TMPDIR")
    os.environ["TMPDIR"] = str(tmp)
    libc = jail.c_library()
    libc.prctl(_PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
    try:
        yield found
    finally:
        libc.prctl(_PR_SET_CHILD_SUBREAPER, 0, 0, 0, 0)
        if saved is None:
            del os.environ["TMPDIR"]
        else:
            os.environ["TMPDIR"] = saved
        found["processes"] = []
        for pid in sorted(my_children() - children):
            if alive(pid):
                found["processes"].append(
                    Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode())
                os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
        found["files"] = sorted(str(p) for p in tmp.rglob("*"))
        found["changed_checkout"] = checkout_status() != checkout


NOTHING_LEFT = {"processes": [], "files": [], "changed_checkout": False}


def expect_no_gain(attack: str, got: dict[str, int], honest: dict[str, int]) -> None:
    """Check by check `attack` scores no more than its honest counterpart, which fails the
    check its bug fails."""
    assert set(got) == set(honest) and len(got) >= 30, (sorted(got), sorted(honest))
    assert honest[REPORTED[attack][1]] == 0, honest  # the bug shows where nothing hides it
    gained = {cid: (got[cid], honest[cid]) for cid in got if got[cid] > honest[cid]}
    assert gained == {}, f"{attack} gains on (attack, honest): {gained}"


def scores_of(results: dict) -> dict[str, int]:
    return {cid: t["score"] for cid, t in by_check(results).items()}


@NEEDS_PROC
@pytest.mark.parametrize("attack", REPORTED)
def test_a_patched_target_server_gains_nothing_in_a_single_grade(attack, tmp_path):
    """Graded whole, attack and counterpart, as a student runs the grader: check by check the
    attack scores no more, the checkout is unchanged, and nothing is left running or on disk."""
    subs = reported_submissions(tmp_path / "subs")
    with left_behind(tmp_path) as left:
        _, got = grade(str(subs / f"{attack}.py"), tmp_path)
        _, honest = grade(str(subs / f"{attack}_honest.py"), tmp_path)
    assert left == NOTHING_LEFT, left
    expect_no_gain(attack, scores_of(got), scores_of(honest))


@pytest.fixture(scope="module")
def reported_batch(tmp_path_factory):
    """Every attack of REPORTED and its counterpart graded in one `batch` run: (the gradebook's
    rows by submission, what the run left behind)."""
    tmp = tmp_path_factory.mktemp("reported-batch")
    subs = reported_submissions(tmp / "class")
    with left_behind(tmp) as left:
        proc = run_grader("batch", str(subs), "--out", str(tmp / "grades"), "--quiet",
                          timeout=600)
    assert proc.returncode == 0, proc.stderr
    with open(tmp / "grades" / "gradebook.csv", newline="", encoding="utf-8") as f:
        rows = {row["submission"]: row for row in csv.DictReader(f)}
    return rows, left


#: The gradebook's columns that are not a check's.
GRADEBOOK_COLUMNS = ("submission", "status", "score", "max_score", "message", "seed")


@NEEDS_PROC
@pytest.mark.parametrize("attack", REPORTED)
def test_a_patched_target_server_gains_nothing_in_batch(attack, reported_batch):
    """Side by side in `batch` (sealed, each a fresh world): the gradebook's column of every
    check holds no more for the attack than for its counterpart, and the run leaves nothing."""
    rows, left = reported_batch
    assert left == NOTHING_LEFT, left
    got, honest = rows[attack], rows[f"{attack}_honest"]
    assert got["status"] == honest["status"] == "graded", (got, honest)
    checks = [c for c in got if c not in GRADEBOOK_COLUMNS]  # one column a check
    expect_no_gain(attack, {c: int(got[c]) for c in checks},
                   {c: int(honest[c]) for c in checks})


@pytest.fixture(scope="module")
def reported_bundle(tmp_path_factory):
    """Every attack of REPORTED and its counterpart uploaded to a Gradescope autograder made
    with `gradescope-bundle` (tests/test_gradescope_bundle.py's simulated /autograder):
    ({submission: check id -> score}, what the uploads left behind)."""
    from test_gradescope_bundle import unpacked  # it imports this module: not at the top

    tmp = tmp_path_factory.mktemp("reported-bundle")
    proc = run_grader("gradescope-bundle", str(tmp / "autograder.zip"), "--lang", "en")
    assert proc.returncode == 0, proc.stderr
    subs = reported_submissions(tmp / "subs")
    graded = {}
    with left_behind(tmp) as left:
        autograder = unpacked(tmp / "autograder.zip", tmp / "root")  # with the TMPDIR above
        for path in sorted(subs.iterdir()):
            proc, results = autograder({"queue.py": path.read_text(encoding="utf-8")})
            assert proc.returncode == 0, proc.stderr
            graded[path.stem] = scores_of(results)
    return graded, left


@NEEDS_PROC
@pytest.mark.parametrize("attack", REPORTED)
def test_a_patched_target_server_gains_nothing_through_the_gradescope_bundle(
        attack, reported_bundle):
    """Uploaded to Gradescope: check by check no more than its counterpart, and the uploads
    leave nothing."""
    graded, left = reported_bundle
    assert left == NOTHING_LEFT, left
    expect_no_gain(attack, graded[attack], graded[f"{attack}_honest"])


@pytest.mark.parametrize("portable", [False, True], ids=["forked lanes", "spawned lanes"])
def test_a_judge_held_in_the_codes_sql_past_its_backstop_times_out_the_code(portable,
                                                                            tmp_path):
    """A statement of the code's SQL that SQLite cannot interrupt (a wait for a lock as long as
    the busy timeout the code set: 60 s, under the lock locked-database-raises holds) keeps the
    judge past the lane's backstop: the check is timed out in the code's SQL, in the words
    that say so, on both paths; the grader blames neither itself nor the lock it holds."""
    env = {"LEASELAB_PORTABLE": "1"} if portable else {}
    out = tmp_path / "results.json"
    proc = run_grader("--impl", str(ATTACKS / "stuck_in_sql.py"), "-k", "locked-database-raises",
                      "--json", str(out), env=env, waits=True)  # it waits out the backstop
    test = by_check(json.loads(out.read_text(encoding="utf-8")))["locked-database-raises"]
    assert test["extra_data"]["outcome"] == "timed_out", test["output"]
    assert "busy timeout the code set itself" in test["output"], test["output"]
    assert "grader itself failed" not in proc.stdout + test["output"]
    assert proc.returncode == 1, proc.stderr
