"""Every mutant's diagnosis holds in drawn worlds, not only in the lesson's (issue 28).

A recorded grade (batch, the Gradescope bundle, Classroom 50, PrairieLearn) runs in a world drawn
from a fresh seed (`--replay fresh`): its times, lease length, worker names, job ids and file
names are not the lesson's. A failure message right only in the lesson's world (`--replay 1`,
what tests/test_mutants.py grades) is wrong in every recorded grade. So every mutant is graded
here in three drawn worlds, and in each every check that must catch it fails with the declared
outcome and shows the declared diagnosis: its EXPECT_TEXT, filled in with that world's values
(`test_mutants.in_world`: `{B}`, `{id:2}`, `{t0 + lease_ms}`...), and not its EXPECT_NO_TEXT.

Cost: only the checks that must catch each mutant run (`-k`; the hanging mutant waits out only
its two hangs), two grades at a time: 243 grades, about 105 s of CPU (the grades and this
process together), 2-6 min of wall time on the project's loaded 2-core machine (2026-12-04).
"""

from __future__ import annotations

import re
from concurrent.futures import ThreadPoolExecutor

import pytest

from conftest import by_check, grade, selected
from grader.checkdef import all_checks
from grader.harness.judge.world import World
from grader.report.messages import text
from test_mutants import MUTANT_FILES, declared, in_world

SEEDS = (2, 3, 5)
CASES = [(path, seed) for path in MUTANT_FILES for seed in SEEDS]

#: A lesson's worker named in English prose: B to E alone, "A's", or A as a subject or before a
#: colon ("A claims", "stop A:"), not the article ("A worker", "A valid lease").
ROLE_EN = re.compile(r"(?<![\w'{’-])(?:[B-E]|A(?='s\b|[:,)])"
                     r"|A(?= (?:would|finishes|claims|re-claims|re-claimed|must|holds|is|was|has)\b))"
                     r"(?![\w}…-])")
#: ... in Japanese prose: any Latin capital A to E standing alone.
ROLE_JA = re.compile(r"(?<![A-Za-z0-9_{-])[A-E](?![A-Za-z0-9_}-])")
#: The race's schedule and its legend (docs/contract.md: the letters are the schedule's code):
#: "schedule AABBA (one letter ... : A for w-3f, B for w-9k)", and the line that replays it.
SCHEDULE_LEGEND = re.compile(r"schedule [AB]* \(.*?: A for [^,]+, B for [^)]+\)"
                             r"|LEASELAB_RACE_SCHEDULE=[AB]*")
#: A lesson's instant or id in a sentence of no world: any number but the counts 0, 1 and 2.
LESSON_NUMBER = re.compile(r"(?<![\w.])(?:[3-9]|\d{2,})(?![\w.])")


@pytest.fixture(scope="module")
def graded_in_worlds(request, tmp_path_factory):
    """(mutant name, seed) -> (process, results.json) of its EXPECT_FAIL checks in that world."""
    folders = {seed: tmp_path_factory.mktemp(f"world-{seed}") for seed in SEEDS}

    def run(case):
        path, seed = case
        select = " or ".join(sorted(declared(path)["EXPECT_FAIL"]))
        return (path.stem, seed), grade(str(path), folders[seed], "--replay", str(seed),
                                        "--hints", "-k", select, forked=True)

    # only the cases whose tests are selected (-k NAME grades that mutant in its worlds)
    with ThreadPoolExecutor(max_workers=2) as pool:
        return dict(pool.map(run, selected(request, ("path", "seed"), CASES)))


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
        assert snippet in said(checks[cid], results), (cid, snippet, checks[cid]["output"])
    for cid, snippet in spec.get("EXPECT_NO_TEXT", {}).items():
        assert snippet not in said(checks[cid], results), (cid, snippet, checks[cid]["output"])
    for cid, kind in spec.get("EXPECT_CAUSE", {}).items():
        number = checks[cid]["extra_data"].get("cause")  # extra_data.causes[number - 1]
        cause = results["extra_data"]["causes"][number - 1] if number else {}
        assert cause.get("kind") == kind, (cid, cause, checks[cid]["output"])


def said(test: dict, results: dict) -> str:
    """What results.json tells about a check: its output, and for a check a shared root cause
    explains, the file's top-level output too (which leads with that cause), as test_mutants
    reads it."""
    if "cause" in test["extra_data"]:
        return test["output"] + "\n" + results["output"]
    return test["output"]


def test_no_message_in_a_drawn_world_names_the_lessons_workers(graded_in_worlds):
    """A drawn world's workers have drawn names: a sentence that still says "A's finish" or
    "B must be able to claim" beside them names workers that are not there. (random-timelines
    keeps its own names, A among them, and the race's schedule is written in role letters with
    a legend that names the world's workers: docs/contract.md, "Names in a drawn world".)"""
    found = []
    for (name, seed), (_, results) in graded_in_worlds.items():
        for test in results["tests"]:
            cid = test["extra_data"]["check_id"]
            if cid == "random-timelines":
                continue
            for line in test["output"].splitlines():
                line = SCHEDULE_LEGEND.sub("", line)
                if ROLE_EN.search(line):
                    found.append((name, seed, cid, line.strip()))
    assert found == []


def test_no_check_title_why_or_hint_names_a_lessons_worker_or_instant():
    """A check's title, why and hint are the same in every world (and shown where there is
    none: PrairieLearn's descriptions, `grader hint`): they say "its holder", "another worker",
    "the deadline", never A or B, deadline=100 or 1000 ms."""
    found = []
    for cid in all_checks():
        for part in ("title", "why", "hint"):
            for lang, pattern in (("en", ROLE_EN), ("ja", ROLE_JA)):
                sentence = text(f"check.{cid}.{part}", lang)
                if pattern.search(sentence) or LESSON_NUMBER.search(sentence):
                    found.append((cid, part, lang, sentence))
    assert found == []


def test_the_role_patterns_find_a_worker_and_not_an_article():
    legend = ("Run 2 of the schedules that can matter, schedule AABBA (one letter per statement"
              " let go, in order: A for w-3f, B for w-9k); to run exactly this schedule again:"
              " LEASELAB_RACE_SCHEDULE=AABBA python -m grader --replay 2 -k race-one-winner")
    assert not ROLE_EN.search(SCHEDULE_LEGEND.sub("", legend))
    assert ROLE_EN.search(SCHEDULE_LEGEND.sub("", legend + "; B must be able to claim"))
    assert ROLE_EN.search("at now == lease_until A's finish is already rejected")
    assert ROLE_EN.search("so B must be able to claim") and ROLE_EN.search("Expiry does not stop A:")
    assert not ROLE_EN.search("A valid lease is its holder's right; A worker that stalled")
    assert not ROLE_EN.search("{B} should have got job 2; w-B7 claims; SELECT ... ORDER B…")
    assert ROLE_JA.search("A の完了はもう拒否される") and not ROLE_JA.search("{A} の完了 SQL")
    assert LESSON_NUMBER.search("cut off at deadline=100, a finish at 99")
    assert not LESSON_NUMBER.search("token=1, attempts to 0, by 1, 2 holders, 1.5 s, w7")


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


def test_a_drawn_worlds_ids_change_their_number_of_digits_by_the_fourth_job():
    """Every drawn world's first id is a little below a power of ten: a check's first four jobs
    have ids of two lengths, so ids compared or sorted as text ("1000" < "999") are caught in
    every world, as the lesson's are at the tenth job (blind_claim_min_of_id_texts)."""
    for seed in range(2, 200):
        for check in ("lowest-id-first", "finish-at-deadline", "random-timelines"):
            w = World(seed, check)
            ids = [w.job_id(n) for n in range(1, 5)]
            assert ids == sorted(set(ids)), (seed, check, ids)
            assert len(str(ids[0])) < len(str(ids[3])), (seed, check, ids)
            assert sorted(map(str, ids)) != [str(i) for i in ids], (seed, check, ids)
