"""The seed sweep (issue 13): a grade is right in every world, not only in the lesson's. The
reference and every correct alternative pass every check in every world of a sweep; every
mutant fails the checks that must catch it in every world. A sweep runs each check in N worlds
drawn from seeds 1 (the lesson's) to N (`python -m grader --sweep N`).

What it costs decides how wide each sweep is (CI runs on 2 cores). The reference runs every
check in 24 worlds. Each alternative runs every check but the random timelines in 8 worlds
(the random timelines are the same timelines in every world, moved in time: the reference's 24
cover their moves); the lesson's world is tests/test_alternatives.py's (every check, full
marks), so 2 to 8 are graded here. Each mutant runs the checks that must catch it: those of one process in 24 worlds,
but the random timelines in 8 (the same timelines in every world, moved in time; a blind
mutant's sweep plays up to a hundred of them in each world, 8-10 s of CPU for 24 worlds, and
tests/test_mutant_worlds.py holds each mutant's diagnosis in three drawn worlds besides), those
that start processes of their own (race, crash, integration, whose failures often wait out a
busy timeout) in 3, and all of them in 3 for a mutant whose verdict is a hang (each world waits
out its wall-clock limit).

A world another file of this suite already grades a mutant's checks in is not graded again
here: tests/test_mutants.py grades every mutant in the lesson's world (seed 1, every check) and
tests/test_mutant_worlds.py its checks that must catch it in the drawn worlds of its SEEDS (2, 3
and 5), each asserting they fail with the declared outcome. A mutant's sweep grades the other
worlds of each part (one process: 4 and 6 to 24; the random timelines: 4, 6, 7 and 8; the checks
that start processes and the hangs: none left of 1 to 3), so the worlds each check must fail in
are the same as before, each graded once in a session (`worlds_left`;
test_every_world_of_a_mutants_sweep_is_graded_by_one_file holds the union)."""

from __future__ import annotations

import json
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from conftest import ROOT, by_check, run_grader
from grader.checkdef import PROCESS_FAMILIES, REGISTRY, all_checks, family
from test_mutant_worlds import SEEDS as WORLD_SEEDS
from test_mutants import EVERY_SUITE, MUTANT_FILES, LESSON_SEED, declared

WORLDS = 24
ALTERNATIVE_WORLDS = 8
FEW_WORLDS = 3  # checks that start processes, and hangs
TIMELINES = "random-timelines"  # a mutant's: in ALTERNATIVE_WORLDS
ALTERNATIVES = sorted(p for p in (ROOT / "tests" / "alternatives").glob("*.py")
                      if not p.name.startswith("_"))


#: The worlds other files grade every mutant's must-catch checks in (see the module's text).
GRADED_ELSEWHERE = frozenset({LESSON_SEED, *WORLD_SEEDS})


def worlds_left(worlds: int) -> list[tuple[int, int]]:
    """The worlds 1..`worlds` no other file grades a mutant in, as (first seed, count) runs of
    consecutive seeds (a `--replay FIRST --sweep COUNT` each)."""
    runs: list[tuple[int, int]] = []
    for seed in range(1, worlds + 1):
        if seed in GRADED_ELSEWHERE:
            continue
        if runs and runs[-1][0] + runs[-1][1] == seed:
            runs[-1] = (runs[-1][0], runs[-1][1] + 1)
        else:
            runs.append((seed, 1))
    return runs


def sweep(impl: str, out: Path, worlds: int, select: str | None = None,
          first: int = 1) -> dict[str, dict]:
    """Grade `impl` in `worlds` worlds from seed `first` on: check id -> its results.json
    test."""
    args = ["--impl", impl, "--json", str(out), "--sweep", str(worlds)]
    if first != 1:
        args += ["--replay", str(first)]
    proc = run_grader(*args, *(["-k", select] if select else []), timeout=900,
                      forked=True)
    assert out.exists(), f"no results.json (exit {proc.returncode}):\n{proc.stderr}"
    results = json.loads(out.read_text(encoding="utf-8"))
    tests = by_check(results)
    if worlds == 1:  # a grade in one world says its seed once, not per run
        seed = results["extra_data"]["seed"]
        for test in tests.values():
            extra = test["extra_data"]
            extra.setdefault("run_seeds", [seed])
            extra.setdefault("run_outcomes", [extra["outcome"]])
            extra.setdefault("failed_seeds", [] if extra["outcome"] == "passed" else [seed])
    return tests


def failed_in(test: dict) -> list[int]:
    return test["extra_data"].get("failed_seeds", [])


def passed_in(test: dict) -> list[int]:
    extra = test["extra_data"]
    return sorted({seed for seed, outcome in zip(extra["run_seeds"], extra["run_outcomes"])
                   if outcome == "passed"})


@pytest.fixture(scope="module")
def swept(tmp_path_factory):
    all_checks()  # the registry, to tell the checks that start processes
    """Every sweep, two at a time: name -> (worlds, check id -> test)."""
    tmp = tmp_path_factory.mktemp("sweeps")
    jobs: list[tuple] = [("reference", "solutions.queue", WORLDS, None)]
    # the lesson's world is test_alternatives' (every check, full marks): seeds 2 to 8 here
    jobs += [(f"alternative:{p.stem}", str(p), ALTERNATIVE_WORLDS - 1, "not random-timelines",
              LESSON_SEED + 1) for p in ALTERNATIVES]
    for path in EVERY_SUITE:
        spec = declared(path)
        hangs = "timed_out" in {spec.get("OUTCOME"), *spec.get("EXPECT_OUTCOME", {}).values()}
        timelines = sorted(c for c in spec["EXPECT_FAIL"] if c == TIMELINES and not hangs)
        many = sorted(c for c in spec["EXPECT_FAIL"]
                      if not hangs and not starts_processes(c) and c != TIMELINES)
        few = sorted(set(spec["EXPECT_FAIL"]) - set(many) - set(timelines))
        for part, worlds, ids in (("one", WORLDS, many), ("timelines", ALTERNATIVE_WORLDS,
                                                          timelines),
                                  ("processes", FEW_WORLDS, few)):
            if ids:
                for first, count in worlds_left(worlds):
                    jobs.append((f"mutant:{path.stem}:{part}:{first}", str(path), count,
                                 " or ".join(ids), first))

    def run(job):
        name, impl, worlds, select, *first = job
        out = tmp / f"{name.replace(':', '-')}.json"
        return name, (worlds, sweep(impl, out, worlds, select, *first))

    # Most of a sweep's time is spent waiting (busy timeouts, wall-clock limits), not computing.
    with ThreadPoolExecutor(max_workers=4) as pool:
        return dict(pool.map(run, jobs))


def starts_processes(check_id: str) -> bool:
    return family(REGISTRY[check_id].module) in PROCESS_FAMILIES


def test_the_reference_passes_every_check_in_every_world(swept):
    worlds, tests = swept["reference"]
    assert len(tests) >= 40
    for cid, test in tests.items():
        assert test["extra_data"]["run_seeds"] == list(range(1, worlds + 1)), cid
        assert failed_in(test) == [], (cid, failed_in(test), test["output"][:2000])


@pytest.mark.parametrize("path", ALTERNATIVES, ids=[p.stem for p in ALTERNATIVES])
def test_every_alternative_passes_every_check_in_every_world(path, swept):
    """In worlds 2 to 8 (the lesson's is tests/test_alternatives.py's)."""
    worlds, tests = swept[f"alternative:{path.stem}"]
    assert len(tests) >= 39
    for cid, test in tests.items():
        assert sorted(set(test["extra_data"]["run_seeds"])) == \
            list(range(LESSON_SEED + 1, ALTERNATIVE_WORLDS + 1)), cid
        assert failed_in(test) == [], (cid, failed_in(test), test["output"][:2000])


def mutant_parts(path: Path, swept: dict) -> dict[str, list[tuple[int, dict]]]:
    """The sweeps of one mutant by part (one, timelines, processes): [(worlds, tests)]."""
    parts: dict[str, list[tuple[int, dict]]] = {}
    for name, result in swept.items():
        kind, _, rest = name.partition(":")
        if kind == "mutant" and rest.rsplit(":", 2)[0] == path.stem:
            parts.setdefault(rest.rsplit(":", 2)[1], []).append(result)
    return parts


@pytest.mark.parametrize("path", EVERY_SUITE, ids=[p.stem for p in EVERY_SUITE])
def test_every_mutant_fails_its_checks_in_every_world(path, swept):
    """In every world of its sweep no other file grades (`worlds_left`)."""
    expect_fail = declared(path)["EXPECT_FAIL"]
    parts = mutant_parts(path, swept)
    assert {cid for runs in parts.values() for _, tests in runs for cid in tests} <= \
        set(expect_fail)
    for runs in parts.values():
        checks = {cid for _, tests in runs for cid in tests}
        for worlds, tests in runs:
            assert set(tests) == checks  # every run of a part grades the part's checks
            for cid, test in tests.items():
                assert len(set(test["extra_data"]["run_seeds"])) == worlds, cid
                assert passed_in(test) == [], (cid, "passed in the worlds of these seeds")


def test_every_world_of_a_mutants_sweep_is_graded_by_one_file(swept):
    """The worlds a part of a mutant's sweep leaves out are exactly those test_mutants (the
    lesson's, every mutant) and test_mutant_worlds (its SEEDS, every mutant's must-catch
    checks) grade: together they cover seeds 1..N of each part, each once."""
    assert set(EVERY_SUITE) <= set(MUTANT_FILES)  # both other files grade every mutant
    for worlds in (WORLDS, ALTERNATIVE_WORLDS, FEW_WORLDS):
        here = [seed for first, count in worlds_left(worlds)
                for seed in range(first, first + count)]
        assert len(here) == len(set(here))
        assert set(here) | (GRADED_ELSEWHERE & set(range(1, worlds + 1))) == \
            set(range(1, worlds + 1))
        assert not set(here) & GRADED_ELSEWHERE
    assert worlds_left(WORLDS) == [(4, 1), (6, 19)] and worlds_left(FEW_WORLDS) == []
    seeds = {seed for name, (_, tests) in swept.items() if name.startswith("mutant:")
             for test in tests.values() for seed in test["extra_data"]["run_seeds"]}
    assert seeds and not seeds & GRADED_ELSEWHERE


def test_a_sweep_reports_the_worlds_where_a_check_did_not_pass(tmp_path):
    """A bug that shows only in some worlds (a claim that keeps the lesson's 1000 ms lease
    whatever lease_ms says) passes in the lesson's world and fails in the drawn ones, and the
    report names those seeds, to replay."""
    source = (ROOT / "solutions" / "queue.py").read_text(encoding="utf-8")
    fixed = source.replace("MIN(:now + :lease_ms, deadline)", "MIN(:now + 1000, deadline)")
    assert fixed != source
    impl = tmp_path / "fixed_lease.py"
    impl.write_text(fixed, encoding="utf-8")
    tests = sweep(str(impl), tmp_path / "r.json", 4, "reclaim-at-expiry")
    test = tests["reclaim-at-expiry"]
    assert passed_in(test) == [1] and failed_in(test) == [2, 3, 4]
    assert "passed in 1 of 4 worlds" in test["output"] or test["status"] == "failed"
    proc = run_grader("--impl", str(impl), "-k", "reclaim-at-expiry", "--sweep", "4")
    assert "passed in 1 of 4 worlds" in proc.stdout and "seed(s) 2, 3, 4" in proc.stdout
    replay = run_grader("--impl", str(impl), "-k", "reclaim-at-expiry", "--replay", "3")
    assert replay.returncode == 1 and "Replay exactly: --replay 3" in replay.stdout


def test_a_fresh_seed_is_drawn_for_recorded_grades_and_reported(tmp_path):
    """--replay fresh draws a seed and says which; --prairielearn does so by itself; a local
    run keeps the lesson's world and says nothing of worlds."""
    out = tmp_path / "r.json"
    proc = run_grader("--impl", "solutions.queue", "-k", "finish-at-expiry", "--replay", "fresh",
                      "--json", str(out))
    seed = json.loads(out.read_text(encoding="utf-8"))["extra_data"]["seed"]
    assert proc.returncode == 0 and seed != 1
    assert f"drawn from seed {seed}" in proc.stdout.replace("\n", " ")
    pl = run_grader("--impl", "solutions.queue", "-k", "finish-at-expiry", "--prairielearn",
                    str(tmp_path / "pl.json"))
    assert "drawn from seed" in json.loads((tmp_path / "pl.json").read_text())["output"]
    local = run_grader("--impl", "solutions.queue", "-k", "finish-at-expiry", "--json", str(out))
    assert json.loads(out.read_text(encoding="utf-8"))["extra_data"]["seed"] == 1
    assert "drawn from seed" not in local.stdout


@pytest.mark.parametrize("ci", [{"CI": "true"}, {"GITHUB_ACTIONS": "true"}])
def test_a_grade_in_ci_draws_a_fresh_world_unless_replay_is_given(tmp_path, ci):
    """A grade recorded from CI runs in a world no report has shown without being asked to:
    CI=true or GITHUB_ACTIONS given and no --replay draws a seed, and the terminal, results.json,
    the Markdown summary and the JUnit XML say which (it replays the grade). --replay decides
    in CI too, and CI=false is no CI."""
    paths = {"--json": tmp_path / "r.json", "--markdown": tmp_path / "s.md",
             "--junit": tmp_path / "j.xml"}
    written = [a for flag, path in paths.items() for a in (flag, str(path))]
    proc = run_grader("--impl", "solutions.queue", "-k", "finish-at-expiry", *written, env=ci)
    seed = json.loads(paths["--json"].read_text(encoding="utf-8"))["extra_data"]["seed"]
    assert proc.returncode == 0 and seed != 1
    assert f"--replay {seed}" in " ".join(proc.stdout.split())  # wrapped to the terminal
    assert f"--replay {seed}" in paths["--markdown"].read_text(encoding="utf-8")
    assert f'<property name="seed" value="{seed}" />' in paths["--junit"].read_text("utf-8")
    for replay, env in ((["--replay", "1"], ci), ([], {"CI": "false"})):
        proc = run_grader("--impl", "solutions.queue", "-k", "finish-at-expiry", *written,
                          *replay, env=env)
        assert json.loads(paths["--json"].read_text(encoding="utf-8"))["extra_data"]["seed"] == 1
        assert "drawn from seed" not in proc.stdout and "--replay" not in proc.stdout
        assert '<property name="seed" value="1" />' in paths["--junit"].read_text("utf-8")
