"""What students see of each check (the instructor's config: `show = "full" | "verdict" |
"hidden"`, per check, per rule family or for all, grader.config), honoured by every writer.

One program that fails two checks of the boundaries family for two different mistakes is graded
once with every report flag, with `finish-at-expiry` hidden and `reclaim-at-expiry` shown as a
verdict (hints always on, so that a hint would show if the level let it), and once with
`--instructor`. Every file a student reads is searched for what must not be there: the hidden
check's id, title, why and hint; the verdict check's timeline, values, row and hint (its verdict
and one-line message must be there). The instructor's copy has all of it. Then Classroom 50's
mapping, the batch (feedback/ for students; gradebook and class report whole) and the config's
rules.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from conftest import ROOT, by_check, points, run_grader

from grader import config as configs
from grader.checkdef import all_checks, check_families
from grader.report import classroom50
from grader.report.messages import CHECK_HINT, CHECK_TITLE, CHECK_WHY, text

HIDDEN, VERDICT = "finish-at-expiry", "reclaim-at-expiry"
CONFIG = f"""hints = "always"
[checks.{HIDDEN}]
show = "hidden"
[checks.{VERDICT}]
show = "verdict"
"""
STUDENT_FILES = {"--json": "results.json", "--junit": "junit.xml", "--prairielearn": "pl.json",
                 "--markdown": "summary.md", "--html": "report.html"}
#: What a check shown in full has under its failure and a verdict must not: the timeline, the
#: row table, the hint's label.
DETAIL_MARKS = ("What happened:", "row of job", "Hint:")


def two_mistakes() -> str:
    """The reference, but finish accepts now == lease_until (finish-at-expiry fails) and claim
    does not take a job at now == lease_until (reclaim-at-expiry fails): two logic errors, no
    shared cause."""
    source = (ROOT / "solutions" / "queue.py").read_text(encoding="utf-8")
    for right, wrong in ((":now < lease_until AND", ":now <= lease_until AND"),
                         ("lease_until <= :now", "lease_until < :now")):
        assert right in source, right
        source = source.replace(right, wrong)
    return source


def secrets_of(check_id: str) -> list[str]:
    """What would name a hidden check: its id, title, why and hint."""
    return [check_id, text(CHECK_TITLE(check_id), "en"), text(CHECK_WHY(check_id), "en"),
            text(CHECK_HINT(check_id), "en")]


@pytest.fixture(scope="module")
def graded(tmp_path_factory) -> dict:
    """{"student": {flag or "stdout": text}, "instructor": {...}} of one program graded twice."""
    out = tmp_path_factory.mktemp("visibility")
    (out / "queue.py").write_text(two_mistakes(), encoding="utf-8")
    (out / "grader.toml").write_text(CONFIG, encoding="utf-8")
    found = {}
    for copy, extra in (("student", []), ("instructor", ["--instructor"])):
        folder = out / copy
        folder.mkdir()
        flags = [arg for flag, name in STUDENT_FILES.items() for arg in (flag, str(folder / name))]
        proc = run_grader("--impl", str(out / "queue.py"), "--config", str(out / "grader.toml"),
                          "-k", "boundaries", "--no-history", "--jobs", "2", "--replay", "1",
                          *flags, *extra)
        assert proc.returncode == 1, proc.stderr
        found[copy] = {flag: (folder / name).read_text(encoding="utf-8")
                       for flag, name in STUDENT_FILES.items()}
        found[copy]["stdout"] = proc.stdout
    found["dir"] = out
    return found


def student_texts(graded) -> dict[str, str]:
    """Every text a student reads: the terminal, and each file but results.json's hidden tests
    (Gradescope shows a test by its visibility: those are checked apart)."""
    texts = dict(graded["student"])
    results = json.loads(texts.pop("--json"))
    texts["results.json (top level)"] = results["output"]
    for test in results["tests"]:
        if test["extra_data"]["check_id"] != HIDDEN:
            texts[f"results.json ({test['extra_data']['check_id']})"] = json.dumps(test)
    return texts


def test_a_hidden_check_is_named_in_no_student_text(graded):
    for where, content in student_texts(graded).items():
        for secret in secrets_of(HIDDEN):
            assert secret not in content, (where, secret)
        if where != "--html":  # the page words it with markup around the numbers
            assert text("ui.hidden-checks", "en", count=1, points=points(HIDDEN)) in content \
                or where.startswith("results.json (") or where == "--junit", where


def test_gradescope_gets_the_hidden_check_whole_with_a_visibility_that_hides_it(graded):
    results = json.loads(graded["student"]["--json"])
    test = by_check(results)[HIDDEN]
    assert test["visibility"] == "after_published" and test["extra_data"]["show"] == "hidden"
    assert "What happened:" in test["output"]  # Gradescope shows it once published
    assert by_check(results)[VERDICT]["visibility"] == "visible"
    # the hidden check counts in the recorded score, as Gradescope's own totals do
    assert results["max_score"] == sum(t["max_score"] for t in results["tests"])
    assert results["score"] == sum(t["score"] for t in results["tests"])


def test_prairielearn_counts_the_hidden_check_in_the_score_but_does_not_list_it(graded):
    pl = json.loads(graded["student"]["--prairielearn"])
    assert HIDDEN not in json.dumps(pl)
    names = [t["name"] for t in pl["tests"]]
    assert any(VERDICT in name for name in names)
    boundaries = [cid for cid, info in all_checks().items() if info.module.endswith("boundaries")]
    total = sum(all_checks()[cid].points for cid in boundaries)
    assert pl["score"] == pytest.approx((total - points(HIDDEN, VERDICT)) / total)


def test_a_verdict_check_shows_its_verdict_and_message_only(graded):
    instructor = json.loads(graded["instructor"]["--json"])
    full = by_check(instructor)[VERDICT]["output"]
    assert all(mark in full for mark in DETAIL_MARKS), full  # there is detail to hide
    message = next(line for line in full.splitlines() if line.startswith("Came back: None"))
    hint = text(CHECK_HINT(VERDICT), "en")
    for where, content in student_texts(graded).items():
        for mark in (*DETAIL_MARKS, hint):
            assert mark not in content, (where, mark)
    student = json.loads(graded["student"]["--json"])
    assert by_check(student)[VERDICT]["output"].splitlines()[0].startswith(message)
    assert by_check(student)[VERDICT]["status"] == "failed"
    for flag in ("stdout", "--markdown", "--junit"):
        assert VERDICT in graded["student"][flag] and "Came back: None" in graded["student"][flag]
    pl = json.loads(graded["student"]["--prairielearn"])
    verdict = next(t for t in pl["tests"] if VERDICT in t["name"])
    assert verdict["message"].startswith("Came back: None") and verdict["points"] == 0
    # the page draws a failure's timeline: the instructor's has two, the student's none
    assert graded["instructor"]["--html"].count('class="seq"') == 2
    assert 'class="seq"' not in graded["student"]["--html"]
    assert f'id="check-{VERDICT}"' in graded["student"]["--html"]


def test_the_instructor_copy_has_every_check_in_full(graded):
    for flag, content in graded["instructor"].items():
        if flag in ("--html", "--junit") or not isinstance(content, str):
            continue
        assert HIDDEN in content, flag
    stdout = graded["instructor"]["stdout"]
    for secret in secrets_of(HIDDEN):
        assert secret in stdout, secret
    assert stdout.count("What happened:") == 2 and stdout.count("Hint:") == 2
    assert HIDDEN in graded["instructor"]["--html"] and HIDDEN in graded["instructor"]["--junit"]
    assert "hidden until" not in stdout


def test_classroom50_counts_hidden_checks_as_one_test_that_names_none(graded):
    results = json.loads(graded["student"]["--json"])
    import datetime as dt

    now = dt.datetime(2026, 6, 1, tzinfo=dt.timezone.utc)
    env = {name: "x" for name in classroom50.CONTEXT_ENV}
    payload = classroom50.from_results(results, env, submitted=now, graded=now)
    assert HIDDEN not in json.dumps(payload)
    for secret in secrets_of(HIDDEN)[1:]:
        assert secret not in json.dumps(payload, ensure_ascii=False)
    hidden = [t for t in payload["tests"] if t["check-id"] == "hidden"]
    assert len(hidden) == 1 and hidden[0]["max-score"] == points(HIDDEN)
    assert hidden[0]["passed"] is False and hidden[0]["score"] == 0
    assert payload["score"] == results["score"] and payload["max-score"] == results["max_score"]
    verdict = next(t for t in payload["tests"] if t["check-id"] == VERDICT)
    assert verdict["message"].startswith("Came back: None")


def test_batch_feedback_follows_the_config_and_the_gradebook_keeps_every_check(graded, tmp_path):
    submissions = tmp_path / "subs"
    (submissions / "alice" / "lab").mkdir(parents=True)
    shutil.copyfile(graded["dir"] / "queue.py", submissions / "alice" / "lab" / "queue.py")
    (tmp_path / "roster.csv").write_text("submission,name,id\nalice,Alice,1\n")
    out = tmp_path / "grades"
    proc = run_grader("batch", str(submissions), "--out", str(out), "--jobs", "1", "-q",
                      "-k", "boundaries", "--config", str(graded["dir"] / "grader.toml"),
                      "--roster", str(tmp_path / "roster.csv"))
    assert proc.returncode == 0, proc.stderr
    feedback = (out / "feedback" / "alice.txt").read_text(encoding="utf-8")
    for secret in (*secrets_of(HIDDEN), *DETAIL_MARKS, text(CHECK_HINT(VERDICT), "en")):
        assert secret not in feedback, secret
    assert VERDICT in feedback and "Came back: None" in feedback
    assert text("ui.hidden-checks", "en", count=1, points=points(HIDDEN)) in feedback
    header = (out / "gradebook.csv").read_text(encoding="utf-8").splitlines()[0]
    assert HIDDEN in header and VERDICT in header
    assert HIDDEN in (out / "class-report.html").read_text(encoding="utf-8")
    bad = tmp_path / "bad.toml"
    bad.write_text('[families.no-such-family]\nshow = "hidden"\n')
    proc = run_grader("batch", str(submissions), "--out", str(out), "--config", str(bad))
    assert proc.returncode == 2 and "no such rule family" in proc.stderr, proc.stderr


def test_the_hint_command_refuses_a_check_not_shown_in_full(graded):
    for check_id in (HIDDEN, VERDICT):
        proc = run_grader("hint", check_id, "--config", str(graded["dir"] / "grader.toml"))
        assert proc.returncode == 2 and text(CHECK_HINT(check_id), "en") not in proc.stdout
    proc = run_grader("hint", "finish-before-expiry", "--config",
                      str(graded["dir"] / "grader.toml"))
    assert proc.returncode == 0, proc.stderr


# -- the config's rules ---------------------------------------------------------------------
def load(tmp_path: Path, content: str) -> configs.Config:
    path = tmp_path / "grader.toml"
    path.write_text(content, encoding="utf-8")
    return configs.load(path, set(all_checks()), check_families())


def test_a_check_wins_over_its_family_and_a_family_over_the_top_level(tmp_path):
    config = load(tmp_path, 'show = "verdict"\n[families.boundaries]\nshow = "hidden"\n'
                            f'[checks.{VERDICT}]\nshow = "full"\n')
    assert config.level_of(HIDDEN) == "hidden"             # its family
    assert config.level_of(VERDICT) == "full"              # its own table
    assert config.level_of("lesson-timeline") == "verdict"  # the top level
    assert config.visibility_of(HIDDEN) == "after_published"
    assert config.visibility_of(VERDICT) == config.visibility_of("lesson-timeline") == "visible"
    config.instructor = True
    assert config.level_of(HIDDEN) == "full" and config.visibility_of(HIDDEN) == "after_published"


def test_visibility_and_show_say_one_thing(tmp_path):
    config = load(tmp_path, 'visibility = "after_due_date"\n'
                            f'[checks.{VERDICT}]\nvisibility = "visible"\n'
                            f'[checks.{HIDDEN}]\nshow = "hidden"\n')
    assert config.level_of("lesson-timeline") == "hidden"  # Gradescope hides it: so do we
    assert config.visibility_of("lesson-timeline") == "after_due_date"
    assert config.level_of(VERDICT) == "full" and config.visibility_of(VERDICT) == "visible"
    assert config.visibility_of(HIDDEN) == "after_due_date"  # hidden, as the top level says
    assert configs.load(None, set()).levels(all_checks()) == {}


@pytest.mark.parametrize("content, reason", [
    ('show = "secret"\n', "choose one of"),
    (f'[checks.{HIDDEN}]\nshow = "hidden"\nvisibility = "visible"\n', "a hidden check"),
    ('[families.boundaries]\nshow = "full"\nvisibility = "hidden"\n', "a hidden check"),
    ('[families.no-such-family]\nshow = "hidden"\n', "no such rule family"),
    (f'[checks.{HIDDEN}]\ncolour = "red"\n', "only 'show' and 'visibility'"),
])
def test_a_config_that_contradicts_itself_or_names_nothing_is_refused(tmp_path, content, reason):
    with pytest.raises(configs.ConfigError, match=reason):
        load(tmp_path, content)


def test_the_exit_status_tells_no_hidden_verdict(graded, tmp_path):
    """A student's CI job must not turn red over a check they cannot see: the exit status is
    that of the checks shown; the instructor's copy's, that of every check."""
    config = tmp_path / "grader.toml"
    config.write_text(f'[checks.{HIDDEN}]\nshow = "hidden"\n[checks.{VERDICT}]\nshow = "hidden"\n')
    common = ("--impl", str(graded["dir"] / "queue.py"), "--config", str(config), "-k",
              "boundaries", "--no-history", "--jobs", "2")
    proc = run_grader(*common)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert HIDDEN not in proc.stdout and VERDICT not in proc.stdout
    assert run_grader(*common, "--instructor").returncode == 1
