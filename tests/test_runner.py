"""The runner (grader/runner/): checks at once on several lanes give the results one lane gives,
in lesson order; -k reads pytest's syntax without pytest; a check in parts reports its first
failing part; lanes leave nothing running; a terminal grade imports no test framework."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

import pytest

from conftest import MUTANTS, ROOT
from grader import runner
from grader.checkdef import PROCESS_FAMILIES, REGISTRY, Part, all_checks, family
from grader.harness.processes import hygiene
from grader.results import Failure, Kind, Outcome, result_to_json
from grader.runner import keywords

#: One program per way a check can end: passed, failed by a check of each kind (single-process,
#: race, crash, integration, a random timeline in a late part), timed out, not implemented, and
#: a program that leaves processes behind; graded on every check (the reference) or on the
#: checks that show its way and some others (always more units than one lane).
PROGRAMS = {
    "reference": ("solutions.queue", None),
    "stubs": ("lab.queue", "boundaries or work_once"),
    "race": (str(MUTANTS / "race_read_before_begin.py"), "race or boundaries or tokens"),
    "crash": (str(MUTANTS / "crash_token_then_lease.py"), "crash or race or stamps"),
    "integration": (str(MUTANTS / "integration_stale_finish_by_id.py"),
                    "integration or stamps or tokens"),
    "late-timeline": (str(MUTANTS / "blind_finish_owner_like.py"), "random-timelines or tokens"),
    "hang": (str(MUTANTS / "outcome_finish_hangs_at_lease_end.py"), "boundaries or deadlines"),
    "detaches": (str(ROOT / "tests" / "attacks" / "detach_and_linger.py"),
                 "boundaries or integration or crash"),
}


def comparable(result) -> tuple:
    """What must be the same however many lanes ran: the verdict, and the whole failure except
    what a run measures (the receiver's port) and the race's story of who came first (the two
    claimers are really concurrent; the verdict and its kind do not depend on it)."""
    data = result_to_json(result.result)
    if family(REGISTRY[result.id].module) == "race":
        data = {k: data.get(k) for k in ("outcome", "kind", "detail", "error")}
    text = json.dumps(data, sort_keys=True)
    for url in {part.split('"')[0] for part in text.split('"url": "')[1:]}:
        text = text.replace(url, "URL")
    return result.id, result.outcome, text


@pytest.fixture(scope="module")
def graded_both_ways():
    return {name: ([comparable(r) for r in runner.run_checks(impl, jobs=1, select=select)],
                   [comparable(r) for r in runner.run_checks(impl, jobs=2, select=select)])
            for name, (impl, select) in PROGRAMS.items()}


@pytest.mark.parametrize("name", PROGRAMS)
def test_two_lanes_give_what_one_lane_gives(graded_both_ways, name):
    one, two = graded_both_ways[name]
    select = PROGRAMS[name][1]
    assert [r[0] for r in one] == [c.id for c in runner.selected(select)]  # in lesson order
    assert len(one) > 2 and two == one


def test_the_programs_end_every_way_they_should(graded_both_ways):
    """The comparison above is worth something only if the programs really fail as meant."""
    outcomes = {name: {r[0]: r[1] for r in one} for name, (one, _) in graded_both_ways.items()}
    assert set(outcomes["reference"].values()) == {Outcome.PASSED}
    assert list(outcomes["reference"]) == list(all_checks())  # every check
    assert outcomes["race"]["race-one-winner"] == Outcome.FAILED
    assert outcomes["crash"]["crash-mid-claim-atomic"] == Outcome.FAILED
    assert outcomes["integration"]["integration-run"] == Outcome.FAILED
    assert outcomes["late-timeline"]["random-timelines"] == Outcome.FAILED
    assert outcomes["hang"]["finish-at-expiry"] == Outcome.TIMED_OUT
    assert outcomes["stubs"]["finish-at-expiry"] == Outcome.NOT_IMPLEMENTED


def test_a_check_in_parts_reports_its_first_failing_timeline(graded_both_ways):
    """blind_finish_owner_like first differs from the model at timeline 46 (in the second of
    four parts: the first part passes): the result is that timeline's, shrunk, on one lane as on
    two, as a single pass over all 100 gives."""
    def first_failing(run) -> int:
        failure = json.loads(dict((r[0], r[2]) for r in run)["random-timelines"])
        replay = [e for e in failure["timeline"] if e.get("key") == "timeline.random.replay"]
        assert replay
        return replay[0]["params"]["index"]

    one, two = graded_both_ways["late-timeline"]
    assert first_failing(one) == first_failing(two) == 46


def test_nothing_is_left_running_after_lanes(graded_both_ways):
    """detach_and_linger leaves processes behind in its checks: after both grades no child of
    this process is left (lanes, judges, targets and what they detached are all reaped)."""
    assert {pid for pid in hygiene.child_pids() if not _is_zygote(pid)} == set()


def _is_zygote(pid: int) -> bool:
    """A zygote, or the suite's fork server (conftest.run_grader's forked=True): processes
    that live on by design between grades."""
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            line = f.read()
    except OSError:
        return False
    return b"grader.harness.target.zygote_server" in line or \
        b"grader.instructor.fork_server" in line


def test_a_lane_that_dies_costs_only_its_own_check(monkeypatch):
    """A lane that ends while it runs a check (a grader bug, or killed) gives that check an
    errored grader-bug result; the other checks are graded, by the other lane or a new one."""
    real = runner.run_unit

    def dies_on_one(unit, settings, **kwargs):
        if unit.check.id == "finish-at-expiry":
            os._exit(9)
        return real(unit, settings, **kwargs)

    monkeypatch.setattr(runner, "run_unit", dies_on_one)  # the lanes are forks: they see it
    results = runner.run_checks("solutions.queue", jobs=2, select="boundaries")
    by_id = {r.id: r for r in results}
    assert by_id["finish-at-expiry"].outcome == Outcome.ERRORED
    assert by_id["finish-at-expiry"].result.kind == Kind.GRADER_BUG
    assert all(r.passed for r in results if r.id != "finish-at-expiry")
    assert len(results) == 6


def test_lanes_started_before_the_preflight_start_again_on_a_brief_it_changes(monkeypatch):
    """The lanes run their first units while the preflight runs, on the brief it nearly always
    gives (nothing hung); a brief that says otherwise ends them, and every check is run on it:
    none keeps a verdict of the guess."""
    real = runner.Preflight.brief

    def says_claim_hung(preflight, keep=frozenset()):
        real(preflight, keep)
        return None, {"hung": [["claim", 0.5]]}

    monkeypatch.setattr(runner.Preflight, "brief", says_claim_hung)
    results = runner.run_checks("solutions.queue", jobs=2, select="boundaries")
    assert len(results) == 6
    assert all(r.outcome == Outcome.TIMED_OUT and r.result.kind == Kind.NOT_GRADED
               for r in results), [(r.id, r.outcome) for r in results]


# -- parts ----------------------------------------------------------------------------------------
@pytest.mark.parametrize("total", [0, 1, 7, 100, 101])
@pytest.mark.parametrize("count", [1, 3, 4, 8])
def test_parts_share_the_items_in_order_each_once(total, count):
    shares = [list(Part(i, count).of(total)) for i in range(count)]
    assert [i for share in shares for i in share] == list(range(total))


def test_the_first_failing_part_is_the_result_and_runs_combine_per_run():
    info = REGISTRY["random-timelines"]
    settings = runner.Settings("x", 1.0, (1, 1), False)
    late, early = Failure.grader_bug("late"), Failure(Outcome.FAILED, Kind.DETAIL, detail="x")
    result = runner._result(info, [[None, None], [None, early], [late, late], [None, None]],
                            1.0, settings)
    assert result.result == late  # run 1: part 2 is the first that failed; run 2: part 1
    assert result.runs == [Outcome.ERRORED, Outcome.FAILED] and result.outcome == Outcome.ERRORED
    result = runner._result(info, [[None], [None]], 0.5, runner.Settings("x", 1.0, (1,), False))
    assert result.passed and result.runs == [] and result.duration == 0.5


def test_only_the_first_failing_run_of_a_unit_is_told_in_detail(monkeypatch):
    """A later run of a sweep or a repeat, once a run of the same unit failed, is never the run
    the report tells (the check's failure is its first failing run's): it runs with
    `detailed=False`, so a check may skip what only makes a failure readable (the random
    timelines' shrink). Every run before the first failure, and that one, are detailed."""
    told = []

    def run_check(body, spec, workdir, seed, call_timeout, check, hung, detailed, alone, model):
        told.append((seed, detailed))
        return Failure(Outcome.FAILED, Kind.DETAIL, detail="x") if seed >= 3 else None

    monkeypatch.setattr(runner.checkrun, "run_check", run_check)
    info = REGISTRY["finish-at-expiry"]
    settings = runner.Settings("solutions.queue", 1.0, (1, 2, 3, 4, 5), True)
    runs, _ = runner.run_unit(runner.units_of(info)[0], settings, in_lane=True)
    assert told == [(1, True), (2, True), (3, True), (4, False), (5, False)]
    assert [run is None for run in runs] == [True, True, False, False, False]


def test_a_run_an_earlier_part_failed_in_is_quiet_for_the_later_parts():
    """lanes.Reported: once part q of a check failed in run r, run r of every later part can
    no longer be the one reported (grader.runner._result takes the first failing part's), so
    it is quiet; earlier parts, other runs and other checks are not."""
    from grader.runner import lanes

    info = REGISTRY["random-timelines"]
    units = runner.units_of(info) + runner.units_of(REGISTRY["finish-at-expiry"])
    reported = lanes.Reported(units)
    assert [reported.quiet(i) for i in range(len(units))] == [frozenset()] * len(units)
    failed = Failure(Outcome.FAILED, Kind.DETAIL, detail="x")
    reported.done(1, [None, failed, None])  # part 1 failed in run 1
    assert reported.quiet(0) == frozenset() and reported.quiet(1) == frozenset()
    assert reported.quiet(2) == reported.quiet(3) == frozenset({1})
    reported.done(2, [failed, None, None])
    assert reported.quiet(3) == frozenset({0, 1}) and reported.quiet(len(units) - 1) == frozenset()


def test_parts_graded_one_after_another_stop_at_the_first_failing_part(monkeypatch):
    """runner.grade_check (the pytest plugin's way): parts run in order, and a part after one
    that failed is not run in that run (its failure would never be looked at); the result is
    the first failing part's."""
    told = []

    def run_check(body, spec, workdir, seed, call_timeout, check, hung, detailed, alone, model):
        told.append((body.keywords["part"].index, detailed))
        if body.keywords["part"].index >= 1:
            return Failure(Outcome.FAILED, Kind.DETAIL, detail=f"part {body.keywords['part'].index}")
        return None

    monkeypatch.setattr(runner.checkrun, "run_check", run_check)
    settings = runner.Settings("solutions.queue", 1.0, (1,), False)
    result = runner.grade_check(REGISTRY["random-timelines"], settings, here=True)  # `told`
    assert told == [(0, True), (1, True)]  # parts 2 and 3: part 1 failed, they are not run
    assert result.result.detail == "part 1"


# -- -k ---------------------------------------------------------------------------------------------
NAMES = ("finish-at-expiry", "test_finish_exactly_at_expiry", "test_boundaries.py", "boundaries")


@pytest.mark.parametrize("expression, matches", [
    ("", True), ("finish-at-expiry", True), ("FINISH-AT", True), ("exactly_at", True),
    ("boundaries", True), ("test_boundaries.py", True), ("reclaim", False),
    ("finish and not reclaim", True), ("not finish", False), ("reclaim or expiry", True),
    ("(reclaim or finish) and at-expiry", True), ("not (reclaim or finish)", False),
    ("not not finish", True),
])
def test_k_reads_pytests_syntax(expression, matches):
    assert keywords.matcher(expression)(NAMES) is matches


@pytest.mark.parametrize("expression", ["finish or", "(finish", "finish)", "and", "finish reclaim",
                                        "finish $", "not", "()"])
def test_an_unreadable_k_is_a_usage_error(expression):
    with pytest.raises(runner.GraderError, match="cannot read -k"):
        runner.selected(expression)


def test_an_unreadable_k_is_one_line_and_exit_2():
    proc = subprocess.run([sys.executable, "-m", "grader", "-k", "finish or"], cwd=ROOT,
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2
    assert proc.stderr.count("\n") == 1 and "cannot read -k 'finish or'" in proc.stderr


def test_k_selects_in_lesson_order_and_by_family():
    assert [c.id for c in runner.selected("boundaries")] == [
        c.id for c in all_checks().values() if family(c.module) == "boundaries"]
    process = " or ".join(PROCESS_FAMILIES)
    assert {family(c.module) for c in runner.selected(process)} == set(PROCESS_FAMILIES)


def test_long_units_form_their_own_queue_the_rest_stay_in_lesson_order():
    checks = list(all_checks().values())
    units = [runner.Unit(info, runner.Part(i, info.parts) if info.parts > 1 else None)
             for info in checks for i in range(info.parts)]
    long, short = runner.schedule(units)
    assert sorted(long + short) == list(range(len(units)))
    assert [units[i].check.id for i in long[:4]] == ["random-timelines"] * 4  # its parts first
    assert {family(units[i].check.module) for i in long[4:]} == set(PROCESS_FAMILIES)
    # the longest of them first: what is left for the end is short
    assert [family(units[i].check.module) for i in long[4:]] == list(runner.LONGEST_FIRST)
    assert short == sorted(short) and units[short[0]].check.id == checks[0].id


def test_a_grade_runs_a_lane_a_core_and_all_but_the_last_prefer_long_units(monkeypatch):
    """As many lanes as cores by default. Every lane but the last starts on the long units; the
    last on the lesson's first checks."""
    from grader.runner import lanes

    monkeypatch.setattr(runner.os, "sched_getaffinity", lambda pid: {0, 1})
    assert runner.default_jobs() == 2
    assert [lanes.long_lanes(jobs) for jobs in (1, 2, 3, 9)] == [1, 1, 2, 8]


def test_the_first_lane_prefers_long_units_the_others_short_ones():
    from grader.runner.lanes import Queues

    queues = Queues([10, 11], [1, 2, 3], long_lanes=1)
    assert [queues.take(1), queues.take(0), queues.take(1), queues.take(0)] == [1, 10, 2, 11]
    assert [queues.take(0), bool(queues)] == [3, False]  # the long queue is empty: a short one


# -- what a grade imports ----------------------------------------------------------------------------
def test_a_terminal_grade_imports_no_test_framework_and_no_template_engine(tmp_path):
    script = textwrap.dedent("""
        import sys, grader.cli
        grader.cli.main(["--impl", "solutions.queue", "--no-history", "-k", "finish-at-expiry",
                         "--json", sys.argv[1]])
        print(sorted({m.split(".")[0] for m in sys.modules} & {"pytest", "_pytest", "jinja2",
                                                                "pytest_jsonreport"}))
    """)
    proc = subprocess.run([sys.executable, "-c", script, str(tmp_path / "r.json")], cwd=ROOT,
                          capture_output=True, text=True, timeout=120)
    assert proc.stdout.strip().splitlines()[-1] == "[]", proc.stderr


def test_a_terminal_grade_imports_nothing_only_a_report_file_or_a_check_body_needs():
    """On the way to the first verdict: no report writer's modules (xml, html), no http, email
    or ssl (the integration check's receiver, imported when it runs, in its lane), no TOML
    reader without a config file."""
    script = textwrap.dedent("""
        import sys, grader.cli
        grader.cli.main(["--impl", "solutions.queue", "--no-history", "-k", "finish-at-expiry"])
        print(sorted({m.split(".")[0] for m in sys.modules}
                     & {"xml", "html", "http", "email", "ssl", "tomllib", "jinja2", "pytest"}))
    """)
    proc = subprocess.run([sys.executable, "-c", script], cwd=ROOT,
                          capture_output=True, text=True, timeout=120)
    assert proc.stdout.strip().splitlines()[-1] == "[]", proc.stderr


# -- a target's top level -----------------------------------------------------------------------------
GUARDLESS = '''
import builtins, os
# No `if __name__ == "__main__":` guard, and a top level that must run once per process, as a
# module: a second run in the same process, or a run as a main module, ends the process.
if __name__ in ("__main__", "__mp_main__") or getattr(builtins, "_top_level_ran", False):
    os._exit(7)
builtins._top_level_ran = True
from solutions.queue import claim, finish, work_once
'''


def test_a_target_without_a_main_guard_runs_its_top_level_once_per_target(tmp_path):
    """Every process that runs the code under grade imports it once, by name: none re-runs a
    main module's top level (no multiprocessing spawn worker exists to do it)."""
    target = tmp_path / "queue.py"
    target.write_text(GUARDLESS, encoding="utf-8")
    results = runner.run_checks(str(target), jobs=2)
    assert all(r.passed for r in results), [(r.id, r.outcome) for r in results if not r.passed]


def test_a_run_an_earlier_part_failed_in_is_not_run_and_the_result_is_the_same(monkeypatch):
    """A quiet run (an earlier part failed in it) is not run: its place holds runner.NOT_RUN,
    which _result never reports; the runs after the unit's own first failure still run."""
    told = []

    def run_check(body, spec, workdir, seed, call_timeout, check, hung, detailed, alone, model):
        told.append((seed, detailed))
        return Failure(Outcome.FAILED, Kind.DETAIL, detail="x") if seed == 2 else None

    monkeypatch.setattr(runner.checkrun, "run_check", run_check)
    info = REGISTRY["random-timelines"]
    settings = runner.Settings("solutions.queue", 1.0, (1, 2, 3), True)
    runs, _ = runner.run_unit(runner.units_of(info)[2], settings, in_lane=True,
                              quiet=frozenset({0}))
    # run 0 failed (in part 1): the check's failure is run 0's, so runs 1 and 2 keep only
    # their outcomes
    assert told == [(2, False), (3, False)] and runs[0] is runner.NOT_RUN
    early = Failure(Outcome.FAILED, Kind.DETAIL, detail="early")
    result = runner._result(info, [[None, None, None], [early, None, None], runs, [None] * 3],
                            0.0, settings)
    assert result.result == early and result.runs == [Outcome.FAILED, Outcome.FAILED,
                                                       Outcome.PASSED]


def test_each_call_is_bounded_by_the_checks_call_timeout_times_the_scale(monkeypatch, tmp_path):
    """A check's calls are each given its timeout and 5 s more, or its own `call_timeout` where
    one run makes hundreds of calls (random-timelines: 8 s a call, its part 30 s): both times
    --timeout-scale. A call that hangs only on some timeline is stopped at its step."""
    from grader.harness.judge import checkrun
    from grader.harness.processes import workroot

    seen = {}

    def run_check(body, spec, workdir, seed, call_timeout, **rest):
        seen[rest["check"]] = call_timeout

    monkeypatch.setattr(checkrun, "run_check", run_check)
    monkeypatch.setattr(runner.sandbox, "run", lambda judge, timeout, inline: judge())
    monkeypatch.setattr(workroot, "folder", lambda: str(tmp_path))
    settings = runner.settings_for("solutions.queue", timeout_scale=2)
    checks = all_checks()
    for cid in ("random-timelines", "finish-at-expiry"):
        runner._run_once(checks[cid], checks[cid].body, settings, 1, inline=True)
    timelines = checks["random-timelines"]
    assert timelines.call_timeout is not None and timelines.call_timeout < timelines.timeout
    assert seen == {"random-timelines": timelines.call_timeout * 2,
                    "finish-at-expiry": checks["finish-at-expiry"].timeout * 2 + 5}
