"""Nothing a grade makes is left in the temporary folder, whatever happens to a judge.

Every folder of a grade lives under its work root (grader.harness.processes.workroot), in TMPDIR when it
is set; a folder is removed by a process that outlives whoever may be killed while using it: a
forked judge's (the preflight's probe included) by the process that forked it, a lane's by the
grading process, the root by its owner at its exit or, if that was killed, by the next grader
that starts. Each test kills a judge at a moment the code under grade tells (a mark it writes as
it hangs), never after a sleep, and looks only in its own TMPDIR.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from conftest import ROOT, grader_env, run_grader
from grader.harness.processes import hygiene

NEEDS_PROC = pytest.mark.skipif(not os.path.isdir("/proc/self/task"), reason="Linux /proc")

#: The reference (its own source: batch seals the reference away), with a claim that says
#: where it runs (the check's database, as the judge's connection names it, and its own TMPDIR)
#: and then hangs: in the preflight's probe (IN_PROBE) or in a check (its database is in a
#: folder the probe did not make).
HANGS = """
IN_PROBE = {in_probe}


def claim(conn, owner, now, lease_ms):
    import json, os, time
    database = [row[2] for row in conn.execute("PRAGMA database_list")][0]
    if ("probe-" in database) == IN_PROBE:
        mark = os.path.join(os.environ["LEASELAB_ATTACK_DIR"], str(os.getpid()))
        with open(mark + ".tmp", "w") as f:
            json.dump({{"database": database, "scratch": os.environ["TMPDIR"]}}, f)
        os.rename(mark + ".tmp", mark + ".json")
        time.sleep(3600)
    return _claim(conn, owner, now, lease_ms)
"""


def hanging_source(in_probe: bool) -> str:
    reference = (ROOT / "solutions" / "queue.py").read_text(encoding="utf-8")
    assert reference.count("\ndef claim(") == 1
    return reference.replace("\ndef claim(", "\ndef _claim(") + HANGS.format(in_probe=in_probe)


SAFETY = 180  # seconds: a net for a grade that never gets there, not a wait


def setup(tmp_path: Path, in_probe: bool) -> tuple[Path, Path, Path, dict]:
    """(the target, its marks' folder, the grade's TMPDIR, the grade's environment)."""
    impl = tmp_path / "hangs.py"
    impl.write_text(hanging_source(in_probe), encoding="utf-8")
    marks, tmp = tmp_path / "marks", tmp_path / "tmp"
    marks.mkdir()
    tmp.mkdir()
    env = {"TMPDIR": str(tmp), "LEASELAB_ATTACK_DIR": str(marks),
           "LEASELAB_EXTRA_WRITABLE": str(marks)}
    return impl, marks, tmp, env


def first_mark(marks: Path, proc: subprocess.Popen | None = None) -> dict:
    """What the code under grade wrote as it began to hang (waits for it, bounded)."""
    deadline = time.monotonic() + SAFETY
    while True:
        found = sorted(marks.glob("*.json"))
        if found:
            return json.loads(found[0].read_text(encoding="utf-8"))
        assert proc is None or proc.poll() is None, "the grade ended before claim hung"
        assert time.monotonic() < deadline, "claim was never called"
        time.sleep(0.05)


def session_of(pid: int) -> list[tuple[int, int, str]]:
    """(pid, process group, command line) of every live process of session `pid`."""
    found = []
    for member, state, _, session in hygiene.processes():
        if session != pid or state == "Z":
            continue
        try:
            group = os.getpgid(member)
            line = Path(f"/proc/{member}/cmdline").read_bytes().replace(b"\0", b" ").decode()
        except OSError:
            continue
        found.append((member, group, line))
    return found


def left_in(folder: Path) -> list[str]:
    return sorted(str(p.relative_to(folder)) for p in folder.rglob("*"))


def below(path: str, folder: Path) -> bool:
    return os.path.commonpath([os.path.realpath(path), os.path.realpath(folder)]) == \
        os.path.realpath(folder)


@NEEDS_PROC
@pytest.mark.parametrize("judge", ["probe", "lane"])
def test_a_grade_whose_judge_is_killed_mid_check_leaves_nothing_in_tmpdir(judge, tmp_path):
    """probe: the preflight's judge (a forked child of the grading process, in a process group
    of its own) is SIGKILLed while claim hangs in it; lane: the lane running a check's judge
    in itself is. The grade goes on to its end (the killed judge's runs are errored), and its
    TMPDIR is empty after it; while it ran, the check's database and the target's scratch
    folder were in that TMPDIR, not elsewhere."""
    impl, marks, tmp, env = setup(tmp_path, in_probe=judge == "probe")
    select = [] if judge == "probe" else ["-k", "reclaim-before-expiry", "--jobs", "1"]
    proc = subprocess.Popen([sys.executable, "-m", "grader", "--impl", str(impl), "--json",
                             str(tmp_path / "out.json"), "--no-history", *select],
                            cwd=ROOT, env=grader_env(env), stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, start_new_session=True)
    try:
        mark = first_mark(marks, proc)
        members = session_of(proc.pid)
        if judge == "probe":  # the preflight's judge: its own process group, in the session
            killed = [pid for pid, group, _ in members if group == pid != proc.pid]
        else:  # the lane: a fork of the grading process (the zygote is another program)
            grading = next(line for pid, _, line in members if pid == proc.pid)
            killed = [pid for pid, group, line in members
                      if group == proc.pid != pid and line == grading]
        assert len(killed) == 1, members
        os.kill(killed[0], signal.SIGKILL)
        _, err = proc.communicate(timeout=SAFETY)
    finally:
        hygiene.kill_session(proc.pid)
        proc.wait()
    assert proc.returncode in (0, 1), err
    assert left_in(tmp) == []
    assert below(mark["database"], tmp) and below(mark["scratch"], tmp), mark


@NEEDS_PROC
def test_a_batch_whose_grade_times_out_mid_check_leaves_nothing_in_tmpdir(tmp_path):
    """batch kills a grade's whole session at its limit, judges and all, while claim hangs in
    the preflight's probe: nothing is left in the batch's TMPDIR, where the grade's databases
    and the target's scratch were."""
    impl, marks, tmp, env = setup(tmp_path, in_probe=True)
    subs = tmp_path / "class"
    subs.mkdir()
    (subs / "hangs.py").write_text(impl.read_text(encoding="utf-8"), encoding="utf-8")
    (subs / "hangs").mkdir()  # the same, graded as a folder: two grades at once
    (subs / "hangs" / "queue.py").write_text(impl.read_text(encoding="utf-8"), encoding="utf-8")
    # The probe waits 12 s x 100 for the hanging claim: the limit ends each grade mid-probe.
    proc = run_grader("batch", str(subs), "--jobs", "2", "--out", str(tmp_path / "grades"),
                      "--timeout", "20", "--timeout-scale", "100", "--quiet", "--lang", "en",
                      env=env, timeout=SAFETY + 60)
    assert proc.returncode == 0, proc.stderr
    statuses = (tmp_path / "grades" / "gradebook.csv").read_text(encoding="utf-8")
    assert statuses.count("timed_out") == 2, statuses
    mark = first_mark(marks)
    assert left_in(tmp) == []
    assert below(mark["database"], tmp) and below(mark["scratch"], tmp), mark


def test_a_root_whose_owner_was_killed_is_removed_by_the_next_grader(tmp_path):
    """A root whose process no longer runs is removed as the next one is made in the same
    place; a live process's root, and a folder that is not a root, are kept."""
    from grader.harness.processes import workroot

    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                          capture_output=True, text=True, check=True).stdout.strip()
    stale = tmp_path / f"{workroot.ROOT_PREFIX}{dead}-abcdefgh"
    (stale / "judge-x" / "probe-y").mkdir(parents=True)
    (stale / "judge-x" / "probe-y" / "queue.db").write_bytes(b"")
    (stale / "judge-x" / "link").symlink_to(tmp_path / "kept")  # never followed
    live = tmp_path / f"{workroot.ROOT_PREFIX}{os.getppid()}-abcdefgh"
    other = tmp_path / "leaselab-probe-abcdefgh"
    for folder in (live, other, tmp_path / "kept"):
        folder.mkdir()
        (folder / "file").write_bytes(b"")
    workroot.remove_stale(str(tmp_path))
    assert not stale.exists()
    assert (live / "file").exists() and (other / "file").exists()
    assert (tmp_path / "kept" / "file").exists()


@NEEDS_PROC
def test_a_grade_refused_after_its_preflight_started_ends_the_preflight_at_once(tmp_path):
    """The preflight's judge starts before the checks are loaded (it runs meanwhile): a grade
    that stops before it needs the answer (a config file that is not there) ends it at once,
    however long the code under grade's import would take, and leaves nothing in TMPDIR."""
    impl = tmp_path / "slow_import.py"
    impl.write_text("import time\ntime.sleep(60)\n"
                    "def claim(*a): pass\ndef finish(*a): pass\ndef work_once(*a): pass\n",
                    encoding="utf-8")
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    began = time.monotonic()
    proc = subprocess.run([sys.executable, "-m", "grader", "--impl", str(impl), "--no-history",
                           "--config", str(tmp_path / "missing.toml")], cwd=ROOT,
                          env=grader_env({"TMPDIR": str(tmp)}), capture_output=True, text=True,
                          timeout=SAFETY)
    assert proc.returncode == 2, proc.stderr
    assert time.monotonic() - began < 30  # not the import's 60 s (a net for a loaded machine)
    assert left_in(tmp) == []
    assert not [pid for pid, *_ in hygiene.processes()
                if str(impl) in _cmdline(pid)]


def _cmdline(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode()
    except OSError:
        return ""
