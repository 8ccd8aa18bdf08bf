"""Every mutant's diagnosis holds in drawn worlds, not only in the lesson's (issue 28).

A recorded grade (batch, the Gradescope bundle, Classroom 50, PrairieLearn) runs in a world drawn
from a fresh seed (`--replay fresh`): its times, lease length, worker names, job ids and file
names are not the lesson's. A failure message right only in the lesson's world (`--replay 1`,
what tests/test_mutants.py grades) is wrong in every recorded grade. So every mutant is graded
here in three drawn worlds, and in each every check that must catch it fails with the declared
outcome and shows the declared diagnosis: its EXPECT_TEXT, filled in with that world's values
(`test_mutants.in_world`: `{B}`, `{id:2}`, `{t0 + lease_ms}`...), and not its EXPECT_NO_TEXT.

Cost: only the checks that must catch each mutant run (`-k`), two grades at a time.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import pytest

from conftest import by_check, grade
from grader.harness.world import World
from test_mutants import MUTANT_FILES, declared, in_world

SEEDS = (2, 3, 5)
CASES = [(path, seed) for path in MUTANT_FILES for seed in SEEDS]


@pytest.fixture(scope="module")
def graded_in_worlds(tmp_path_factory):
    """(mutant name, seed) -> (process, results.json) of its EXPECT_FAIL checks in that world."""
    folders = {seed: tmp_path_factory.mktemp(f"world-{seed}") for seed in SEEDS}

    def run(case):
        path, seed = case
        select = " or ".join(sorted(declared(path)["EXPECT_FAIL"]))
        return (path.stem, seed), grade(str(path), folders[seed], "--replay", str(seed),
                                        "--hints", "-k", select)

    with ThreadPoolExecutor(max_workers=2) as pool:
        return dict(pool.map(run, CASES))


@pytest.mark.parametrize("path,seed", CASES, ids=[f"{p.stem}-seed{s}" for p, s in CASES])
def test_mutant_diagnosis_holds_in_a_drawn_world(path, seed, graded_in_worlds):
    proc, results = graded_in_worlds[(path.stem, seed)]
    assert results["extra_data"]["seed"] == seed
    spec = declared(path, seed)
    checks = by_check(results)
    assert set(spec["EXPECT_FAIL"]) <= set(checks), "-k ran every check that must catch it"
    assert proc.returncode == 1
    outcomes = spec.get("EXPECT_OUTCOME", {})
    for cid in spec["EXPECT_FAIL"]:
        output = checks[cid]["output"]
        assert checks[cid]["status"] == "failed", (cid, "passed in this world")
        want = outcomes.get(cid, spec.get("OUTCOME", "failed"))
        assert checks[cid]["extra_data"]["outcome"] == want, (cid, output)
    for cid, snippet in spec.get("EXPECT_TEXT", {}).items():
        assert snippet in checks[cid]["output"], (cid, snippet, checks[cid]["output"])
    for cid, snippet in spec.get("EXPECT_NO_TEXT", {}).items():
        assert snippet not in checks[cid]["output"], (cid, snippet, checks[cid]["output"])


def test_a_template_is_the_lessons_text_in_the_lessons_world():
    text = "{B} finishes job {id:2} (qty={qty:5}) at {t0 + lease_ms - 1} in {file:queue}; {{x}}"
    assert in_world(text, 1, "finish-at-expiry") == \
        "B finishes job 2 (qty=5) at 999 in queue.db; {x}"


def test_a_template_takes_the_values_of_the_checks_own_world():
    """The same seed draws another world for another check: the template follows the check."""
    for check in ("finish-at-expiry", "lesson-timeline"):
        w = World(7, check)
        assert in_world("{B}|{id:2}|{qty:5}|{t0 + 2 * lease_ms}|{file:rehearsal}", 7, check) == \
            f"{w.roles['B']}|{w.job_id(2)}|{w.qty(5)}|{w.t0 + 2 * w.lease_ms}|" \
            f"{w.file('rehearsal')}"
    assert in_world("{B}", 7, "finish-at-expiry") != in_world("{B}", 7, "lesson-timeline")
    assert in_world("{B}", 7, "finish-at-expiry") != "B"


@pytest.mark.parametrize("bad", ["{B:x}", "{job}", "{t0 / 2}", "{__import__('os')}", "{A!r}"])
def test_a_template_refuses_what_it_does_not_know(bad):
    with pytest.raises((AssertionError, SyntaxError, ValueError)):
        in_world(bad, 2, "finish-at-expiry")
