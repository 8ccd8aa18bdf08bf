"""Untrusted code under grade: whatever it does, the grader answers with a clear failed check,
never a traceback dump, a hang or a crash of its own."""

from __future__ import annotations

import json
import textwrap
import time

import pytest

from conftest import MUTANTS, ROOT, by_check, grade, run_grader
from grader import runner
from grader.checkdef import all_checks

SOLUTION_IMPORTS = "from solutions.queue import claim, finish, work_once\n"
SOME_CHECKS = "finish_before_expiry or reclaim_exactly_at_expiry"

BROKEN = {
    "syntax-error": ("def claim(conn, owner, now, lease_ms)\n    return None\n",
                     "errored", "does not compile"),
    "import-raises": ("raise RuntimeError('boom at import')\n",
                      "errored", "does not import: RuntimeError: boom at import"),
    "import-exits": ("import os\nos._exit(3)\n", "errored", "(exit code 3) during: importing"),
    "missing-function": ("from solutions.queue import claim\n", "errored",
                         "does not define: finish, work_once"),
    "claim-raises": (SOLUTION_IMPORTS + "def claim(conn, owner, now, lease_ms):\n"
                     "    raise ValueError('bad claim')\n",
                     "errored", "claim raised ValueError: bad claim"),
    "claim-exits": (SOLUTION_IMPORTS + "import os\ndef claim(conn, owner, now, lease_ms):\n"
                    "    os._exit(7)\n", "errored", "exit code 7"),
    "claim-sys-exit": (SOLUTION_IMPORTS + "import sys\ndef claim(conn, owner, now, lease_ms):\n"
                       "    sys.exit(4)\n", "errored", "claim raised SystemExit"),
    "claim-hangs": (SOLUTION_IMPORTS + "def claim(conn, owner, now, lease_ms):\n"
                    "    while True:\n        pass\n", "timed_out", "claim does not return"),
    "claim-wrong-type": (SOLUTION_IMPORTS + "def claim(conn, owner, now, lease_ms):\n"
                         "    return {'id': 1}\n", "failed", "it must return Claim | None"),
    "claim-kills-itself": (SOLUTION_IMPORTS + "import os, signal\n"
                           "def claim(conn, owner, now, lease_ms):\n"
                           "    os.kill(os.getpid(), signal.SIGKILL)\n",
                           "errored", "signal SIGKILL"),
}


#: The broken targets whose two checks fail for one shared cause (grader.report.causes.cause_key;
#: an exit is not one: each check says the call that was running).
GROUPED = {"syntax-error", "import-raises", "missing-function", "claim-raises", "claim-sys-exit",
           "claim-hangs", "claim-wrong-type"}


@pytest.mark.parametrize("name", sorted(BROKEN))
def test_broken_target_is_a_clear_failed_check(name, tmp_path):
    source, outcome, message = BROKEN[name]
    target = tmp_path / f"{name.replace('-', '_')}.py"
    target.write_text(source)
    start = time.monotonic()
    proc, results = grade(str(target), tmp_path, "-k", SOME_CHECKS)
    assert time.monotonic() - start < 60, "the grader must not hang"
    assert proc.returncode == 1
    checks = by_check(results)
    assert set(checks) == {"finish-before-expiry", "reclaim-at-expiry"}
    for check_id, test in checks.items():
        assert test["status"] == "failed", check_id
        assert test["extra_data"]["outcome"] == outcome, (check_id, test["output"])
        if name in GROUPED:  # one cause: the file leads with it, each test names it in a line
            assert test["output"].startswith("See: ") and "\n" not in test["output"], test
            assert message in results["output"].split("\n\n")[0], results["output"]
        else:
            assert message in test["output"], (check_id, test["output"])
    assert "Traceback" not in proc.stdout + proc.stderr
    assert results["score"] == 0


def test_timed_out_says_what_was_running(tmp_path):
    target = tmp_path / "hang.py"
    target.write_text(BROKEN["claim-hangs"][0])
    proc, results = grade(str(target), tmp_path, "-k", "finish_before_expiry",
                          "--timeout-scale", "0.3")
    output = by_check(results)["finish-before-expiry"]["output"]
    assert "A claims (lease_ms=1000)" in output


def test_hanging_import_is_reported_once_not_per_check(tmp_path):
    target = tmp_path / "hang_at_import.py"
    target.write_text("while True:\n    pass\n")
    start = time.monotonic()
    proc, results = grade(str(target), tmp_path, "-k", SOME_CHECKS, "--timeout-scale", "0.2")
    assert time.monotonic() - start < 30
    for test in by_check(results).values():
        assert test["extra_data"]["outcome"] == "timed_out"
        assert test["output"] == "See: " + results["extra_data"]["causes"][0]["sentence"]
    assert "Importing the code under grade never finishes" in results["output"].splitlines()[1]


def test_bad_arguments_exit_2(tmp_path):
    assert run_grader("--no-such-flag").returncode == 2
    assert run_grader("--lang", "fr").returncode == 2
    assert run_grader("--repeat", "0").returncode == 2


def test_missing_file_is_a_bad_argument_not_a_graded_failure(tmp_path):
    # LAB_SPEC "Additions": a path to --impl that does not exist is a bad argument (exit 2).
    out = tmp_path / "results.json"
    proc = run_grader("--impl", str(tmp_path / "nope.py"), "--json", str(out))
    assert proc.returncode == 2 and not out.exists()
    assert proc.stderr.splitlines() == [f"grader: --impl {tmp_path / 'nope.py'}: no such file"]


HANGING_CLAIM = MUTANTS / "hang_claim_loops_forever.py"


def test_a_hanging_claim_is_graded_at_once_the_same_on_one_lane_and_on_several(tmp_path):
    # The probe before the checks sees claim (and work_once, built over it) hang once; every
    # check stops at its first call of them, none waits for its own timeout (issue 29 item 2:
    # a whole grade took 137 s and two checks blamed the grader). Same verdicts for any --jobs.
    seen = {}
    for jobs in ("1", "2"):
        (tmp_path / jobs).mkdir()
        start = time.monotonic()
        proc, results = grade(str(HANGING_CLAIM), tmp_path / jobs, "--jobs", jobs)
        took = time.monotonic() - start
        assert took < 30, f"--jobs {jobs}: a grade of a hanging claim took {took:.1f} s"
        assert proc.returncode == 1 and results["score"] == 0
        checks = by_check(results)
        assert len(checks) == len(all_checks())
        for check_id, test in checks.items():
            assert test["extra_data"]["outcome"] == "timed_out", (check_id, test["output"])
            # each check names the function that hangs ("See: claim does not return: ...",
            # the cause the report leads with: "Not graded: claim hangs" under each check)
            assert ("claim does not return" in test["output"]
                    or "work_once does not return" in test["output"]), (check_id, test["output"])
        assert "The grader itself failed" not in proc.stdout + json.dumps(results)
        assert "Traceback" not in proc.stdout + proc.stderr
        seen[jobs] = {cid: (t["extra_data"]["outcome"], t["output"]) for cid, t in checks.items()}
    assert seen["1"] == seen["2"]


LEAVES_ITS_TRANSACTION_OPEN = SOLUTION_IMPORTS + textwrap.dedent("""\
    from lab.store import Claim

    def claim(conn, owner, now, lease_ms):
        conn.execute("BEGIN IMMEDIATE")
        row = conn.execute("SELECT id FROM jobs WHERE status = 'pending' LIMIT 1").fetchone()
        if row is None:
            return None
        return Claim(*conn.execute(
            "UPDATE jobs SET status = 'leased', owner = ?, token = token + 1,"
            " attempts = attempts + 1, lease_until = ? WHERE id = ?"
            " RETURNING id, qty, owner, token, attempts, lease_until",
            (owner, now + lease_ms, row[0])).fetchone())  # never commits
    """)


@pytest.mark.parametrize("source, hung", [
    (BROKEN["claim-hangs"][0], {"claim"}),  # its work_once is the reference's, over its own claim
    (HANGING_CLAIM.read_text(), {"claim", "work_once"}),  # work_once calls the hanging claim
    ((MUTANTS / "outcome_finish_hangs_at_lease_end.py").read_text(), set()),  # only at expiry
    (LEAVES_ITS_TRANSACTION_OPEN, set()),  # its lock is its checks' verdict, not the probe's
    (SOLUTION_IMPORTS, set()),
])
def test_the_probe_finds_the_functions_that_hang_in_the_plainest_situation(source, hung,
                                                                            tmp_path):
    target = tmp_path / "queue_under_probe.py"
    target.write_text(source)
    for helper in MUTANTS.glob("_*.py"):  # the mutant's shared parts, beside it
        (tmp_path / helper.name).write_text(helper.read_text())
    refused, found = runner.preflight(str(target), 0.2)
    assert refused is None, refused
    assert set(found) == hung
    assert all(seconds == runner.PROBE_TIMEOUT * 0.2 for seconds in found.values())


def test_the_probe_waits_for_claim_and_work_once_side_by_side(tmp_path):
    """A claim that never returns, and the work_once over it: the probe waits for the two at
    once (work_once in a target process of its own), not one after the other: less than two
    waits in all, however loaded the machine (one after the other could not take less)."""
    scale = 0.75
    wait = runner.PROBE_TIMEOUT * scale
    start = time.monotonic()
    refused, found = runner.preflight(str(HANGING_CLAIM), scale)
    took = time.monotonic() - start
    assert refused is None and found == {"claim": wait, "work_once": wait}
    assert list(found) == ["claim", "work_once"]  # in the order the probe calls them
    assert wait <= took < 2 * wait, f"the probe took {took:.1f} s for two waits of {wait} s"


def test_a_batch_grades_a_hanging_claim_at_once_beside_a_correct_one(tmp_path):
    # `python -m grader batch` goes through the same runner: the probe, not a wait per check.
    subs = tmp_path / "submissions"
    subs.mkdir()
    solution = (ROOT / "solutions" / "queue.py").read_text()  # self-contained, as a student's
    hanging = solution.replace('    conn.execute("BEGIN IMMEDIATE")\n    try:',
                               '    while True:\n        pass\n    conn.execute("BEGIN IMMEDIATE")'
                               '\n    try:', 1)
    assert hanging != solution
    (subs / "hangs.py").write_text(hanging)
    (subs / "correct.py").write_text(solution)
    out = tmp_path / "grades"
    start = time.monotonic()
    proc = run_grader("batch", str(subs), "--out", str(out), "--lang", "en", "-q")
    assert time.monotonic() - start < 30
    assert proc.returncode == 0, proc.stderr
    rows = {line.split(",")[0]: line.split(",")[1:4]
            for line in (out / "gradebook.csv").read_text().splitlines()[1:]}
    assert rows["hangs"][:1] == ["graded"] and rows["correct"][:3] == ["graded", "100", "100"]
    saved = json.loads((out / "results" / "hangs.json").read_text(encoding="utf-8"))
    assert {t["extra_data"]["outcome"] for t in saved["tests"]} == {"timed_out"}
    assert "claim does not return" in saved["tests"][0]["output"]
    assert "The grader itself failed" not in json.dumps(saved)
