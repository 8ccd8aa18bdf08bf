"""A check's world (grader/harness/judge/world.py): the lesson's values under the lesson's seed, drawn
values under any other, the same values for the same seed and check, different ones elsewhere."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from grader.harness.judge.world import LESSON_SEED, World, fresh_seed

SEEDS = [2, 3, 17, 2 ** 40 + 5, 2 ** 63 - 1]


def test_the_lessons_seed_gives_the_lessons_values():
    w = World(LESSON_SEED, "finish-at-expiry")
    assert (w.t0, w.lease_ms, w.far) == (0, 1000, 1_000_000)
    assert [w.name(r) for r in "ABCSF"] == list("ABCSF")
    assert [w.qty(q) for q in (5, 6, 37)] == [5, 6, 37]
    assert [w.next_id() for _ in range(4)] == [1, 2, 3, 4]
    assert w.db_name == "queue.db" and w.file("crash-3") == "crash-3.db"
    assert w.pick("deadline", 100, 1, 999) == 100
    assert w.label("fault-trigger", "leaselab_injected_fault") == "leaselab_injected_fault"
    assert w.names_used() == {}  # the sentences' defaults are the letters already


@pytest.mark.parametrize("seed", SEEDS)
def test_a_drawn_world_says_nothing_about_the_check(seed):
    w = World(seed, "race-one-winner")
    assert not w.lesson
    names = [w.name(r) for r in "ABCDEFPQRSWXY"]
    assert len(set(names)) == len(names) and not set(names) & set("ABCDEFPQRSWXY")
    qtys = [w.qty(q) for q in (1, 2, 3, 5, 7, 11, 13, 17, 19, 37)]
    assert qtys == sorted(set(qtys)) and qtys[0] > 0  # distinct, in the lesson's order
    ids = [w.next_id() for _ in range(12)]
    assert ids == sorted(set(ids)) and ids[0] >= 1
    for kind in ("queue", "rehearsal", "crash-3", "receiver", "shrink", "0"):
        assert re.fullmatch(r"[a-z0-9]{10}\.db", w.file(kind)), w.file(kind)
    label = w.label("fault-trigger", "leaselab_injected_fault")
    assert re.fullmatch(r"[a-z][a-z0-9]{11}", label)
    assert w.far > w.t0 + 100 * w.lease_ms  # no step of a check reaches it
    assert 20 <= w.lease_ms < 60_000 and w.t0 >= 1
    assert set(w.names_used()) == set("ABCDEFPQRSWXY")


@pytest.mark.parametrize("seed", SEEDS)
def test_the_same_seed_and_check_give_the_same_world_whatever_was_asked_before(seed):
    one, two = World(seed, "lowest-id-first"), World(seed, "lowest-id-first")
    two.pick("something-else", 1, 1, 100)
    two.qty(99)
    assert one.pick("at", 200, 1, 10 ** 6) == two.pick("at", 200, 1, 10 ** 6)
    assert (one.t0, one.lease_ms, one.roles, one.db_name) == (two.t0, two.lease_ms, two.roles,
                                                               two.db_name)
    assert one.qty(5) == two.qty(5)
    peeked = one.peek_id()
    assert one.next_id() == peeked == two.next_id()


def test_checks_and_seeds_get_worlds_of_their_own():
    worlds = [World(seed, check) for seed in SEEDS for check in ("a", "b")]
    assert len({(w.t0, w.lease_ms, w.name("A"), w.db_name) for w in worlds}) == len(worlds)


def test_a_fresh_seed_is_never_the_lessons():
    seeds = {fresh_seed() for _ in range(50)}
    assert LESSON_SEED not in seeds and len(seeds) == 50
    assert all(2 <= s < 2 ** 63 for s in seeds)


# -- no check hard-codes an instant ----------------------------------------------------------------
CHECKS = Path(__file__).resolve().parent.parent / "grader" / "checks"
#: Module constants in milliseconds that are wall-clock waits, not instants of the story.
WALL_CLOCK = {"LOCKED_BUSY_MS", "PROBE_BUSY_MS"}
TIME_WORDS = ("now", "deadline", "lease_ms", "lease_until", "at", "t")  # instants, lease lengths


def hard_coded_instants(source: str) -> list[str]:
    """Where `source` (a check module) gives a time as a number of its own: a keyword argument
    such as now=1000, a ManualClock(0), or a module constant such as LEASE_MS = 1000."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.keyword) and node.arg in TIME_WORDS \
                and isinstance(node.value, ast.Constant) and isinstance(node.value.value, int):
            found.append(f"line {node.value.lineno}: {node.arg}={node.value.value}")
        if isinstance(node, ast.Call) and getattr(node.func, "id", None) == "ManualClock" \
                and node.args and isinstance(node.args[0], ast.Constant):
            found.append(f"line {node.lineno}: ManualClock({node.args[0].value})")
    for node in ast.parse(source).body:
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.Constant) \
                and isinstance(node.value.value, int) and not isinstance(node.value.value, bool):
            for target in node.targets:
                name = getattr(target, "id", "")
                if re.search(r"(_MS|DEADLINE|_AT|NOW)$", name) and name not in WALL_CLOCK:
                    found.append(f"line {node.lineno}: {name} = {node.value.value}")
    return found


def test_no_check_hard_codes_an_instant():
    """Every check derives its times from its world (t0, lease_ms, what it picked, what the code
    was handed), so it means the same in every world."""
    # The random timelines' generator and shrinker draw and simplify values of their own domain.
    modules = sorted(p for p in CHECKS.glob("*.py") if p.name not in ("generate.py", "shrink.py"))
    assert len(modules) > 10
    found = {p.name: hard_coded_instants(p.read_text(encoding="utf-8")) for p in modules}
    assert {name: where for name, where in found.items() if where} == {}


def test_the_instant_finder_finds_what_it_looks_for():
    assert hard_coded_instants("LEASE_MS = 1000\nFINISH_AT = 500\nLOCKED_BUSY_MS = 50\n") == [
        "line 1: LEASE_MS = 1000", "line 2: FINISH_AT = 500"]
    assert sorted(hard_coded_instants("lab.claim('B', now=1000, lease_ms=w.lease_ms)\n"
                                      "c = ManualClock(0)\nf(now=w.t0 + 1)\n")) == [
        "line 1: now=1000", "line 2: ManualClock(0)"]
