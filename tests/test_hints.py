"""Progressive hints (issue 15): a failure's hint shows when asked (`python -m grader hint ID`,
`--hints`), by itself once the check has failed `hint_after` local runs in a row, or always /
never as the instructor's config says; the local run history beside the target feeds that
count and the progress line; and a hint shows only under the failure it fits."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

from conftest import MUTANTS, ROOT, by_check, grade, points, run_grader

from grader import config as configs
from grader.report import history, messages
from grader.report.wrapping import display_width
from grader.report.history import FILE_NAME, History
from grader.report.view import check_view, fitting_hint
from grader.results import CheckResult, Failure, Kind, Outcome

BOUNDARY = MUTANTS / "boundary_finish_at_expiry_accepted.py"
ROWCOUNT = MUTANTS / "outcome_finish_returns_rowcount.py"
NO_QUARANTINE = MUTANTS / "quarantine_missing.py"
HINT = messages.text("check.finish-at-expiry.hint", "en")
#: local_run's two checks as the registry weighs them: under BOUNDARY finish-before-expiry passes
#: (PASSING points) and finish-at-expiry fails (FIXED points, won by the fix), of BOTH.
PASSING, FIXED = points("finish-before-expiry"), points("finish-at-expiry")
BOTH = PASSING + FIXED
SCORE = f"Score: {PASSING} / {BOTH}"  # BOUNDARY's score on local_run's two checks
WITH_HISTORY = {"LEASELAB_NO_HISTORY": ""}


def said(key: str, lang: str = "en", **params) -> str:
    return messages.text(key, lang, **params)


def student_folder(tmp_path: Path, source: Path = BOUNDARY) -> Path:
    """A folder like a student's lab/: queue.py (a mutant) and the mutants' shared parts."""
    folder = tmp_path / "lab"
    folder.mkdir()
    for part in MUTANTS.glob("_*.py"):
        shutil.copyfile(part, folder / part.name)
    shutil.copyfile(source, folder / "queue.py")
    return folder


def local_run(folder: Path, *args: str, select: str = "finish-at-expiry or finish-before"):
    return run_grader("--impl", str(folder / "queue.py"), "-k", select, *args, env=WITH_HISTORY)


def output_of(tmp_path: Path, impl: Path | str, check: str, *extra: str) -> str:
    _, results = grade(str(impl), tmp_path, "-k", check, *extra)
    return by_check(results)[check]["output"]


# -- hints that fit ------------------------------------------------------------------------------
def _view(failure: Failure, check: str = "finish-at-expiry"):
    return check_view(CheckResult(check, 4, failure.outcome, failure), "en")


@pytest.mark.parametrize("failure", [
    Failure(Outcome.NOT_IMPLEMENTED, Kind.NOT_IMPLEMENTED, function="claim"),
    Failure.load_error(Kind.IMPORT_ERROR, {"error": "ModuleNotFoundError: No module named 'x'"}),
    Failure.load_error(Kind.SYNTAX_ERROR, {"file": "queue.py", "line": 3, "msg": "invalid"}),
    Failure(Outcome.ERRORED, Kind.RAISED, function="finish", error="NameError: nope",
            where="queue.py:9"),
    Failure(Outcome.ERRORED, Kind.EXITED, code=3, step={"op": "import", "target": "q.py"}),
    Failure(Outcome.TIMED_OUT, None, timeout=5.0, step={"op": "import", "target": "q.py"}),
    Failure(Outcome.FAILED, Kind.OWN_CONNECTION, function="claim", params={"files": "q.db"}),
    Failure.grader_bug("Traceback ..."),
], ids=lambda f: f.kind or f.outcome)
def test_no_rule_hint_when_the_code_never_reached_the_rule(failure):
    assert _view(failure).hint is None


def test_a_wrong_type_gets_the_type_hint_of_its_function():
    failure = Failure(Outcome.FAILED, Kind.WRONG_TYPE, function="finish", came_back="0",
                      type="int", wanted="bool")
    view = _view(failure)
    assert view.hint == said("hint.wrong-type.finish") and HINT not in view.hint
    field = Failure(Outcome.FAILED, Kind.WRONG_FIELD_TYPE, function="claim", came_back="Claim",
                    type="float", wanted="int", params={"field": "lease_until", "value": "1.0"})
    assert "lease_until must be of type int" in _view(field).hint


def test_a_detail_with_a_hint_of_its_own_gets_that_hint_even_in_setup():
    failure = Failure(Outcome.FAILED, Kind.MISMATCH, came_back="None", expected="None",
                      detail="tokens.not-quarantined-for-requeue", setup=True)
    view = _view(failure, "requeue-token-increases")
    assert view.hint == said("hint.detail.tokens.not-quarantined-for-requeue")
    assert said("check.requeue-token-increases.hint") != view.hint


def test_a_right_row_with_a_wrong_value_gets_the_functions_value_hint():
    failure = Failure(Outcome.FAILED, Kind.WRONG_VALUE, function="work_once", came_back="None",
                      expected="False")
    view = _view(failure, "work-once-fresh-clock")
    assert view.hint == said("hint.wrong-value.work_once")


@pytest.mark.parametrize("check, detail, key", [
    ("race-one-winner", "race-journal-mode", "check.journal-mode-stays-delete.hint"),
    ("integration-run", "integration-worker-rounds", "check.work-once-empty-queue.hint"),
    ("work-once-send-raises", "work-once-send-uncommitted", "check.lock-free-during-send.hint"),
    ("lock-free-during-send", "lock-probe-claim", "check.lowest-id-first.hint"),
    ("integration-run", "integration-worker-exited", None),
    ("random-timelines", "timeline-unreproduced", None),
])
def test_a_detail_about_another_rule_gets_that_rules_hint_or_none(check, detail, key):
    failure = Failure(Outcome.FAILED, Kind.DETAIL, detail=detail)
    assert fitting_hint(check, failure, "en") == (said(key) if key else None)


def test_the_rule_failure_keeps_the_checks_hint():
    failure = Failure(Outcome.FAILED, Kind.MISMATCH, came_back="True", expected="False")
    assert _view(failure).hint == HINT


def test_finish_returning_an_int_names_the_type_and_gets_a_type_hint(tmp_path):
    output = output_of(tmp_path, ROWCOUNT, "finish-at-expiry", "--hints")
    assert "finish returned 0 (type int); it must return bool." in output
    assert said("hint.wrong-type.finish") in output
    assert HINT not in output


def test_stubs_get_no_random_timelines_hint(tmp_path):
    output = output_of(tmp_path, "lab.queue", "random-timelines", "--hints")
    assert "is not implemented yet" in output
    assert said("ui.hint") not in output
    assert said("check.random-timelines.hint") not in output


def test_quarantine_missing_gets_the_quarantine_hint_not_the_checks(tmp_path):
    _, results = grade(str(NO_QUARANTINE), tmp_path, "--hints", "-k",
                       "requeue-token-increases or skips-done-and-quarantined")
    checks = by_check(results)
    requeue = checks["requeue-token-increases"]["output"]
    assert said("check.requeue-token-increases.hint") not in requeue
    assert said("hint.detail.tokens.not-quarantined-for-requeue") in requeue
    skips = checks["skips-done-and-quarantined"]["output"]
    assert said("check.skips-done-and-quarantined.hint") not in skips
    assert said("hint.detail.selection.only-spent-job-changes") in skips


# -- the policy: config, --hints, detail levels ----------------------------------------------------
def write_config(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "grader.toml"
    path.write_text(text, encoding="utf-8")
    return path


@pytest.mark.parametrize("text, hints, after", [
    ("", "after-runs", 3),
    ('hints = "always"\n', "always", 3),
    ('hints = "never"\n', "never", 3),
    ('hints = "after-runs"\nhint_after = 5\n', "after-runs", 5),
    ("hint_after = 1\n", "after-runs", 1),
])
def test_config_hints_policy(tmp_path, text, hints, after):
    config = configs.load(write_config(tmp_path, text), set())
    assert (config.hints, config.hint_after) == (hints, after)


@pytest.mark.parametrize("text, reason", [
    ('hints = "sometimes"\n', "choose one of always, after-runs, never"),
    ('hints = "after 3 runs"\n', "choose one of"),
    ('hint = "always"\n', "unknown setting(s): hint"),
    ('hints_after = 3\n', "unknown setting(s): hints_after"),
    ('hints = "always"\nhint_after = 3\n', 'only with hints = "after-runs"'),
    ("hint_after = 0\n", "1 or more"),
    ('hint_after = "3"\n', "1 or more"),
    ("hint_after = true\n", "1 or more"),
    ("hint_after = 2.5\n", "1 or more"),
])
def test_config_hints_typos_are_errors(tmp_path, text, reason):
    with pytest.raises(configs.ConfigError, match=reason.replace("(", r"\(").replace(")", r"\)")):
        configs.load(write_config(tmp_path, text), set())


def test_a_local_run_keeps_the_hint_back_and_says_how_to_see_it(tmp_path):
    proc, results = grade(str(BOUNDARY), tmp_path, "-k", "finish-at-expiry")
    assert HINT not in by_check(results)["finish-at-expiry"]["output"]
    assert HINT not in proc.stdout and "Hint:" not in proc.stdout
    assert said("hints.withheld-no-history") in proc.stdout.replace("\n", " ")


def test_hints_flag_shows_the_hint(tmp_path):
    proc, results = grade(str(BOUNDARY), tmp_path, "-k", "finish-at-expiry", "--hints")
    assert f"Hint: {HINT}" in by_check(results)["finish-at-expiry"]["output"]
    assert HINT in proc.stdout


def test_hints_flag_never_shows_a_hint_below_detail_full(tmp_path):
    for detail in ("actual-only", "none"):
        proc, results = grade(str(BOUNDARY), tmp_path, "-k", "finish-at-expiry", "--hints",
                              "--detail", detail)
        assert HINT not in by_check(results)["finish-at-expiry"]["output"] + proc.stdout


def test_config_always_and_never(tmp_path):
    always = write_config(tmp_path, 'hints = "always"\n')
    proc, results = grade(str(BOUNDARY), tmp_path, "-k", "finish-at-expiry", "--config",
                          str(always))
    assert HINT in by_check(results)["finish-at-expiry"]["output"] and HINT in proc.stdout
    never = write_config(tmp_path, 'hints = "never"\n')
    proc, results = grade(str(BOUNDARY), tmp_path, "-k", "finish-at-expiry", "--config",
                          str(never), "--hints")
    assert HINT not in by_check(results)["finish-at-expiry"]["output"] + proc.stdout
    assert said("hints.off") in proc.stdout


def test_a_recorded_grade_follows_the_config_and_writes_no_history(tmp_path):
    from grader.instructor import isolated

    submission = tmp_path / "submission"  # self-contained: a recorded grade imports no mutant kit
    submission.mkdir()
    source = (ROOT / "solutions" / "queue.py").read_text(encoding="utf-8")
    assert " AND :now < lease_until AND" in source
    (submission / "queue.py").write_text(source.replace(" AND :now < lease_until AND",
                                                        " AND :now <= lease_until AND"))
    before = sorted(p.name for p in submission.iterdir())
    outcomes = {}
    for name, text in (("default", ""), ("always", 'hints = "always"\n')):
        work = tmp_path / f"work-{name}"
        work.mkdir()
        config = write_config(tmp_path, text)
        outcome = isolated.grade(submission / "queue.py", work, select="finish-at-expiry",
                                 config=config)
        assert outcome.status == "graded", outcome.log
        outcomes[name] = by_check(outcome.results)["finish-at-expiry"]["output"]
        assert not list(work.rglob(FILE_NAME)), "a recorded grade wrote a run history"
    assert HINT not in outcomes["default"]
    assert HINT in outcomes["always"]
    assert sorted(p.name for p in submission.iterdir()) == before


# -- python -m grader hint ID --------------------------------------------------------------------
def test_hint_command_prints_the_hint_and_why():
    proc = run_grader("hint", "finish-at-expiry")
    assert proc.returncode == 0, proc.stderr
    out = " ".join(proc.stdout.split())
    assert "finish-at-expiry" in out and HINT in out
    assert " ".join(said("check.finish-at-expiry.why").split()) in out
    ja = run_grader("hint", "finish-at-expiry", "--lang", "ja", env={"COLUMNS": "60"})
    assert "".join(said("check.finish-at-expiry.hint", "ja").split()) in "".join(ja.stdout.split())
    assert all(display_width(line) <= 60 for line in ja.stdout.splitlines())  # wrapped


def test_hint_command_refuses_an_unknown_id_with_one_line():
    proc = run_grader("hint", "finsh-at-expiry")
    assert proc.returncode == 2 and proc.stdout == ""
    assert proc.stderr.strip().splitlines() == [
        "grader: " + said("hints.unknown-check", id="finsh-at-expiry", meant="finish-at-expiry")]
    proc = run_grader("hint", "zzz")
    assert proc.returncode == 2
    assert proc.stderr.strip() == "grader: " + said("hints.unknown-check-no-match", id="zzz")


def test_hint_command_says_hints_are_off_with_never(tmp_path):
    proc = run_grader("hint", "finish-at-expiry", "--config",
                      str(write_config(tmp_path, 'hints = "never"\n')))
    assert proc.returncode == 2 and HINT not in proc.stdout + proc.stderr
    assert said("hints.off") in proc.stderr


def test_a_misspelt_hint_command_is_named():
    proc = run_grader("hnit", "finish-at-expiry")
    assert proc.returncode == 2 and "did you mean 'hint'" in proc.stderr


# -- the local run history -------------------------------------------------------------------------
def test_the_hint_shows_by_itself_after_three_failing_runs_in_a_row(tmp_path):
    folder = student_folder(tmp_path)
    label = said("hints.label-after", runs=3)
    for run in (1, 2):
        proc = local_run(folder)
        assert proc.returncode == 1 and HINT not in proc.stdout, run
    proc = local_run(folder)
    assert f"{label} {HINT}" in proc.stdout
    assert (folder / FILE_NAME).is_file()
    # a run that passes the check ends the streak; failing again starts from one
    shutil.copyfile(ROOT / "solutions" / "queue.py", folder / "queue.py")
    assert local_run(folder).returncode == 0
    shutil.copyfile(BOUNDARY, folder / "queue.py")
    assert HINT not in local_run(folder).stdout


def test_an_instructors_hint_after_is_honoured(tmp_path):
    folder = student_folder(tmp_path)
    config = write_config(tmp_path, "hint_after = 1\n")
    proc = local_run(folder, "--config", str(config))
    assert f"{said('hints.label-after', runs=1)} {HINT}" in proc.stdout


def test_progress_line_names_what_was_fixed_and_what_now_fails(tmp_path):
    folder = student_folder(tmp_path)
    first = local_run(folder)
    assert said("progress.first") in " ".join(first.stdout.split())
    shutil.copyfile(ROOT / "solutions" / "queue.py", folder / "queue.py")
    fixed = " ".join(local_run(folder).stdout.split())
    assert said("progress.line", points=said("progress.points-whole", delta=f"+{FIXED}",
                                              before=PASSING, now=BOTH, max_score=BOTH),
                changes=said("progress.fixed", ids="finish-at-expiry")) in fixed
    shutil.copyfile(BOUNDARY, folder / "queue.py")
    broken = " ".join(local_run(folder).stdout.split())
    assert said("progress.broken", ids="finish-at-expiry") in broken
    assert f"-{FIXED} points" in broken


def test_a_subset_run_compares_only_the_checks_both_runs_graded(tmp_path):
    folder = student_folder(tmp_path)
    local_run(folder)  # finish-at-expiry fails, finish-before-expiry passes
    shutil.copyfile(ROOT / "solutions" / "queue.py", folder / "queue.py")
    proc = local_run(folder, select="finish-before-expiry")
    line = " ".join(proc.stdout.split())
    assert said("progress.points-common", delta="+0", count=1) in line
    assert said("progress.unchanged") in line
    assert said("progress.fixed", ids="finish-at-expiry") not in line  # it was not graded
    other = local_run(folder, select="reclaim-at-expiry")
    assert said("progress.nothing-common") in " ".join(other.stdout.split())


def test_a_run_after_a_subset_run_compares_with_the_last_run_of_the_same_checks(tmp_path):
    """issue 29: 2 -> (a -k run) -> 6 points said "+0, nothing fixed"; it is +4 since the last
    run that graded the same checks, and the line says that other runs came between."""
    folder = student_folder(tmp_path)
    local_run(folder)  # PASSING of BOTH: finish-at-expiry fails
    shutil.copyfile(ROOT / "solutions" / "queue.py", folder / "queue.py")
    local_run(folder, select="finish-at-expiry")  # the fix, graded alone
    line = " ".join(local_run(folder).stdout.split())
    assert said("progress.line", points=said("progress.points-earlier", delta=f"+{FIXED}",
                                              count=2, before=PASSING, now=BOTH,
                                              max_score=BOTH),
                changes=said("progress.fixed", ids="finish-at-expiry")) in line
    again = " ".join(local_run(folder).stdout.split())  # the run before graded the same checks
    assert said("progress.same-whole", now=BOTH, max_score=BOTH) in again


@pytest.mark.parametrize("content", [
    b"not json at all {", b"\xff\xfe\x00garbage", b"[1, 2, 3]", b'{"version": 1, "targets": 7}',
    b'{"version": 1, "targets": {"queue.py": {"last": {"finish-at-expiry": "x"}, '
    b'"streak": {"finish-at-expiry": "many"}, "runs": "?"}}}',
    b'{"version": 99}', b" " * (history.MAX_BYTES + 10),
])
def test_a_broken_history_never_stops_a_grade(tmp_path, content):
    folder = student_folder(tmp_path)
    (folder / FILE_NAME).write_bytes(content)
    proc = local_run(folder)
    assert proc.returncode == 1, proc.stderr
    assert SCORE in proc.stdout and proc.stderr == ""
    data = json.loads((folder / FILE_NAME).read_text(encoding="utf-8"))  # rewritten, whole
    assert data["targets"]["queue.py"]["streak"] == {"finish-at-expiry": 1}


def test_a_history_that_cannot_be_written_or_is_not_a_file_is_ignored(tmp_path):
    folder = student_folder(tmp_path)
    (folder / FILE_NAME).mkdir()
    proc = local_run(folder)
    assert proc.returncode == 1 and proc.stderr == "" and SCORE in proc.stdout
    (folder / FILE_NAME).rmdir()
    if os.geteuid() != 0:  # root writes anywhere
        folder.chmod(0o555)
        try:
            proc = local_run(folder)
            assert proc.returncode == 1 and proc.stderr == "" and SCORE in proc.stdout
        finally:
            folder.chmod(0o755)
        assert not (folder / FILE_NAME).exists()


def test_no_history_flag_and_env_leave_no_file(tmp_path):
    folder = student_folder(tmp_path)
    proc = local_run(folder, "--no-history")
    assert proc.returncode == 1 and not (folder / FILE_NAME).exists()
    assert said("progress.first") not in " ".join(proc.stdout.split())
    run_grader("--impl", str(folder / "queue.py"), "-k", "finish-at-expiry")  # the tests' env
    assert not (folder / FILE_NAME).exists()


def test_history_is_bounded(tmp_path):
    path = tmp_path / FILE_NAME
    for n in range(history.MAX_TARGETS + 5):
        past = History.load(path, f"queue{n}.py")
        past.record({"finish-at-expiry": (history.FAILED, 0)}, {"finish-at-expiry"})
        assert past.save()
    data = json.loads(path.read_text(encoding="utf-8"))
    assert len(data["targets"]) == history.MAX_TARGETS
    assert "queue0.py" not in data["targets"] and f"queue{history.MAX_TARGETS + 4}.py" in \
        data["targets"]
    # a check that no longer exists is forgotten; a run that did not grade a check keeps it
    past = History.load(path, "queue30.py")
    past.record({"gone": (history.FAILED, 0), "a": (history.FAILED, 0)}, {"a", "b"})
    past.record({"b": (history.PASSED, 1)}, {"a", "b"})
    assert past.streaks() == {"a": 1}


def test_streaks_count_rule_failures_only():
    past = History(None, "queue.py", {})
    for state in (history.FAILED, history.OTHER, history.FAILED):
        past.record({"x": (state, 0)}, {"x"})
    assert past.streaks() == {"x": 2}  # not implemented, crashed...: not a failure of the rule
    past.record({"x": (history.PASSED, 3)}, {"x"})
    assert past.streaks() == {}


def test_module_targets_find_their_file_without_importing(tmp_path):
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "__init__.py").write_text("raise SystemExit('imported!')\n")
    (tmp_path / "pkg" / "queue.py").write_text("")
    assert history.location("pkg.queue", tmp_path) == (tmp_path / "pkg" / FILE_NAME, "queue.py")
    assert history.location("nowhere.queue", tmp_path) is None
    assert history.location("pkg/queue.py", tmp_path)[0] == tmp_path / "pkg" / FILE_NAME


def test_the_history_is_ignored_by_git_here_and_in_the_student_copy():
    from grader.instructor import distribution

    assert FILE_NAME in (ROOT / ".gitignore").read_text(encoding="utf-8").split()
    assert distribution.student_files()[".gitignore"] == ROOT / ".gitignore"


def test_hints_flag_gives_every_failure_told_in_one_line_its_hint_too(tmp_path):
    """--hints: the terminal tells three stories in full and one line for each other one; each
    such line carries its hint too (it showed three hints, one per story told in full)."""
    proc, results = grade(str(MUTANTS / "nothing_queue_returns_constants.py"), tmp_path,
                          "--hints")
    lines = proc.stdout.splitlines()
    told_in_one_line = [i for i, line in enumerate(lines) if line.startswith("✗")
                        and not any(l.startswith("    What happened") for l in lines[i:i + 6])
                        and "→" not in " ".join(lines[i:i + 2])]
    hinted = [i for i in told_in_one_line
              if any("Hint:" in l for l in lines[i + 1:i + 3] if not l.startswith("✗"))]
    assert len(hinted) >= 8, proc.stdout
    assert proc.stdout.count("Hint:") > 3


def test_the_note_says_the_other_hints_are_kept_back_when_one_is_shown():
    """A run that shows a hint (failed three runs in a row) and keeps another back says "the
    other hints are kept back", not "hints are kept back" beside the hint it shows."""
    from types import SimpleNamespace

    from grader.report import hints

    def report():
        checks = [SimpleNamespace(id=cid, hint=f"hint of {cid}", hint_withheld=False,
                                  hint_runs=None) for cid in ("a", "b")]
        return SimpleNamespace(checks=checks, causes=[], lang="en", hint_note=None,
                               hints_asked=False)

    one_shown = report()
    hints.apply(one_shown, "after-runs", after=3, streaks={"a": 3, "b": 1})
    assert [c.hint is not None for c in one_shown.checks] == [True, False]
    assert one_shown.hint_note == said("hints.withheld-some", after=3)
    none_shown = report()
    hints.apply(none_shown, "after-runs", after=3, streaks={"a": 1, "b": 1})
    assert none_shown.hint_note == said("hints.withheld", after=3)
    asked = report()
    hints.apply(asked, "after-runs", after=3, asked=True)
    assert asked.hint_note is None and asked.hints_asked
