"""Nothing to learn, nothing to recognise (issue 13): a table of answers learned from the
grader's own reports, a table keyed on what names the check, and a claim that behaves
differently in the second claimer's process score no more than their honest counterparts of the
same effort wherever grades are recorded, because a recorded grade draws its worlds from a fresh
seed. In a local run (the lesson's seed, the student's own loop) a learned table does answer:
the first test shows it, so that the others could fail."""

from __future__ import annotations

import csv

import pytest

from conftest import by_check, grade, run_grader
from learning import (ATTACKS, KEYS, honest_second_claimer, learn, learned_submission,
                      write)

DRAWN = "20261203"  # a recorded grade's seed, fixed so that the test replays


@pytest.fixture(scope="module")
def calls(tmp_path_factory):
    return learn(tmp_path_factory.mktemp("learning"))


@pytest.fixture(scope="module")
def honest(tmp_path_factory):
    """The honest counterparts, graded in the drawn world: check id -> score."""
    tmp = tmp_path_factory.mktemp("honest")
    graded = {}
    for name, path in (("naive", ATTACKS / "naive_queue.py"),
                       ("second_honest", write(tmp / "second", {"queue.py":
                                                                honest_second_claimer()}))):
        _, results = grade(str(path), tmp, "--replay", DRAWN)
        graded[name] = {cid: t["score"] for cid, t in by_check(results).items()}
    return graded


def scores(path, tmp_path, *args) -> dict[str, int]:
    _, results = grade(str(path), tmp_path, *args)
    return {cid: t["score"] for cid, t in by_check(results).items()}


def test_a_learned_table_answers_in_the_lessons_world(calls, tmp_path):
    """Locally, at the lesson's seed, the table keyed on the calls scores far above the naive
    queue: the learning is real (and the tests below could fail)."""
    attack = scores(write(tmp_path / "call", learned_submission(calls, "call")), tmp_path)
    naive = scores(ATTACKS / "naive_queue.py", tmp_path)
    assert sum(attack.values()) >= sum(naive.values()) + 25, (attack, naive)


@pytest.mark.parametrize("key", KEYS)
def test_a_learned_table_scores_no_more_than_a_naive_queue_in_a_recorded_grade(
        key, calls, honest, tmp_path):
    """Graded in a drawn world (a recorded grade's seed): no more than the naive queue. (Check
    by check it may pass one the naive queue fails: a claim that runs a single SELECT has the
    shape of a transaction, and the naive queue's SELECT then UPDATE does not.)"""
    path = write(tmp_path / key, learned_submission(calls, key))
    attack = scores(path, tmp_path, "--replay", DRAWN)
    naive = honest["naive"]
    assert set(attack) == set(naive)
    assert sum(attack.values()) <= sum(naive.values()), (attack, naive)
    assert sum(attack.values()) <= 10, attack  # next to nothing: no learned answer applies
    fresh = scores(path, tmp_path, "--replay", "fresh")  # any seed a grade may draw
    assert sum(fresh.values()) <= sum(naive.values())


def test_a_claim_that_plays_dead_as_the_second_claimer_gains_nothing(honest, tmp_path):
    """Check by check no more than the same queue without the trick, in a recorded grade's
    world; the race, its target, fails for both."""
    attack = scores(ATTACKS / "second_claimer.py", tmp_path, "--replay", DRAWN)
    fair = honest["second_honest"]
    assert set(attack) == set(fair)
    assert attack["race-one-winner"] == fair["race-one-winner"] == 0
    for cid, score in attack.items():
        assert score <= fair[cid], cid


def test_in_batch_no_learned_or_role_trick_scores_more_than_its_honest_counterpart(
        calls, tmp_path):
    """Side by side in `batch` (each submission a fresh seed, in the gradebook's seed column):
    the learned tables score no more than the naive queue, the role trick no more than its
    honest twin."""
    subs = tmp_path / "class"
    for key in KEYS:
        write(subs / f"learned_{key}", learned_submission(calls, key))
    write(subs / "naive", {"queue.py": (ATTACKS / "naive_queue.py").read_text()})
    write(subs / "second_claimer", {"queue.py": (ATTACKS / "second_claimer.py").read_text()})
    write(subs / "second_honest", {"queue.py": honest_second_claimer()})
    proc = run_grader("batch", str(subs), "--out", str(tmp_path / "grades"), "--quiet",
                      timeout=600)
    assert proc.returncode == 0, proc.stderr
    with open(tmp_path / "grades" / "gradebook.csv", newline="", encoding="utf-8") as f:
        rows = {row["submission"]: row for row in csv.DictReader(f)}
    assert all(row["status"] == "graded" for row in rows.values()), rows
    seeds = {row["seed"] for row in rows.values()}
    assert len(seeds) == len(rows) and "1" not in seeds  # a fresh world for each
    naive = int(rows["naive"]["score"])
    assert naive > 0
    for key in KEYS:
        assert int(rows[f"learned_{key}"]["score"]) <= naive, rows[f"learned_{key}"]
    assert int(rows["second_claimer"]["score"]) <= int(rows["second_honest"]["score"])
