"""The extra report formats against their documented contracts: JUnit XML (`--junit`, read back
with junitparser as CI tools read it, and with xml.etree), PrairieLearn's results.json
(`--prairielearn`) and the Markdown job summary (`--markdown`).

Each implementation is graded once, on a few checks (`-k`), with every report flag in one grade:
the files must agree with each other and with the terminal. Student text that could break a
format (markup, `]]>`, control characters, ANSI escapes, backtick fences) is fed to the writers
through a view built here, without grading.
"""

from __future__ import annotations

import json
import os
import re
import threading
import xml.etree.ElementTree as ET
from pathlib import Path

import junitparser
import pytest

from conftest import MUTANTS, by_check, run_grader
from test_cli_args import refused

from grader.report import files, junit, markdown, prairielearn
from grader.report.messages import text
from grader.report.view import report_view
from grader.results import MAX_SHOWN, CheckResult, Failure, Kind, Outcome, shown_text

SOME = "finish-before-expiry or finish-at-expiry or reclaim-at-expiry"
IDS = {"finish-before-expiry", "finish-at-expiry", "reclaim-at-expiry"}
SYNTAX_ERROR = "def claim(conn, owner, now, lease_ms)\n    return None\n"
IMPLS = {"reference": "solutions.queue",
         "mutant": str(MUTANTS / "boundary_finish_at_expiry_accepted.py"),
         "stubs": "lab.queue",
         "syntax-error": None}  # written into a temporary folder
FLAGS = {"--json": "results.json", "--junit": "junit.xml", "--prairielearn": "pl.json",
         "--markdown": "summary.md", "--html": "report.html"}


@pytest.fixture(scope="module")
def grade_once(tmp_path_factory):
    """`grade_once(name)`: one grade of an implementation with every report flag (the process
    and the files), graded the first time it is asked for."""
    done: dict[str, dict] = {}

    def grade(name: str) -> dict:
        if name not in done:
            done[name] = _grade(name, tmp_path_factory.mktemp(name))
        return done[name]

    return grade


def _grade(name: str, out: Path) -> dict:
    impl = IMPLS[name]
    if impl is None:
        impl = str(out / "queue.py")
        Path(impl).write_text(SYNTAX_ERROR)
    args = [a for flag, file in FLAGS.items() for a in (flag, str(out / file))]
    proc = run_grader("--impl", impl, "-k", SOME, "--lang", "en", *args)
    assert proc.returncode in (0, 1), proc.stderr
    found = {flag: (out / file).read_text(encoding="utf-8") for flag, file in FLAGS.items()}
    return {"name": name, "proc": proc, "json": json.loads(found["--json"]),
            "junit": found["--junit"], "junit_path": out / FLAGS["--junit"],
            "pl": json.loads(found["--prairielearn"]), "markdown": found["--markdown"],
            "html": found["--html"]}


@pytest.fixture(params=sorted(IMPLS))
def graded(request, grade_once) -> dict:
    return grade_once(request.param)


# -- every grade --------------------------------------------------------------------------------
def test_the_files_of_one_grade_agree(graded):
    results = graded["json"]
    score, max_score = results["score"], results["max_score"]
    failed = sum(t["status"] == "failed" for t in results["tests"])
    assert {t["extra_data"]["check_id"] for t in results["tests"]} == IDS
    suite = ET.fromstring(graded["junit"]).find("testsuite")
    earned = sum(int(_properties(case)["score"]) for case in suite.iter("testcase"))
    assert (earned, int(suite.get("tests"))) == (score, len(IDS))
    assert int(suite.get("failures")) + int(suite.get("errors")) == failed
    if graded["pl"]["gradable"]:
        assert graded["pl"]["score"] == pytest.approx(score / max_score)
        assert sum(t["points"] for t in graded["pl"]["tests"]) == score
    assert f"**{text('ui.score', 'en', score=score, max_score=max_score)}**" in graded["markdown"]
    assert text("ui.score", "en", score=score, max_score=max_score) in graded["html"]
    assert text("ui.score", "en", score=score, max_score=max_score) in graded["proc"].stdout


def test_no_colours_and_no_escapes_in_any_file(graded):
    for name in ("junit", "markdown"):
        assert "\x1b" not in graded[name], name
    assert "\x1b" not in json.dumps(graded["pl"], ensure_ascii=False)


def test_junit_is_one_suite_with_a_testcase_per_check_named_by_id(graded):
    xml = junitparser.JUnitXml.fromfile(str(graded["junit_path"]))
    suites = list(xml)
    assert [s.name for s in suites] == ["lease-lab"]
    cases = {case.name: case for case in suites[0]}
    assert set(cases) == IDS
    results = by_check(graded["json"])
    for check_id, case in cases.items():
        assert case.classname == "lease-lab.boundaries" and case.time >= 0
        test = results[check_id]
        assert _properties(_case(graded["junit"], check_id)) == {
            "title": test["name"].removesuffix(f" [{check_id}]"),
            "points": text("ui.points", "en", score=test["score"], points=test["max_score"]),
            "score": str(test["score"]), "max_score": str(test["max_score"]),
            "outcome": test["extra_data"]["outcome"]}
        if test["status"] == "passed":
            assert case.result == []
            continue
        verdict, = case.result
        outcome = test["extra_data"]["outcome"]
        assert type(verdict) is (junitparser.Failure if outcome == "failed" else junitparser.Error)
        assert verdict.type == outcome
        assert "\n" not in verdict.message and verdict.message.strip()
        assert verdict.text == test["output"]  # the terminal's lines, plain


# -- each implementation ------------------------------------------------------------------------
def test_the_reference_passes_in_every_format(grade_once):
    graded = grade_once("reference")
    assert graded["pl"]["gradable"] is True and graded["pl"]["score"] == 1.0
    assert all(t["points"] == t["max_points"] > 0 for t in graded["pl"]["tests"])
    assert all(t["message"] == text("outcome.passed", "en") for t in graded["pl"]["tests"])
    assert 'failures="0"' in graded["junit"] and 'errors="0"' in graded["junit"]
    assert text("ui.all-passed", "en") in graded["markdown"]
    assert text("formats.failing-checks", "en") not in graded["markdown"]


def test_the_mutant_fails_finish_at_expiry_with_what_came_back(grade_once):
    graded = grade_once("mutant")
    line = f"{text('ui.came-back', 'en')} True  {text('ui.expected', 'en')} False"
    pl = {t["name"].rsplit(" [", 1)[1].rstrip("]"): t for t in graded["pl"]["tests"]}
    output = by_check(graded["json"])["finish-at-expiry"]["output"]
    assert pl["finish-at-expiry"]["message"] == line
    assert pl["finish-at-expiry"]["output"] == output
    assert pl["finish-at-expiry"]["points"] == 0 < pl["finish-at-expiry"]["max_points"]
    assert 0 < graded["pl"]["score"] < 1 and graded["pl"]["gradable"] is True
    assert f'<failure message="{line}" type="failed">' in graded["junit"]
    md = graded["markdown"]
    assert re.search(r"^- `finish-at-expiry` .+: Came back: True  Expected: False$", md, re.M)
    assert md.count("\n- `") == 1  # only the failing check is listed
    assert f"```text\n{output}\n```" in md


def test_the_stubs_are_not_implemented_but_gradable(grade_once):
    graded = grade_once("stubs")
    assert graded["pl"]["gradable"] is True and graded["pl"]["score"] == 0
    assert re.findall(r'<error message="[^"]*" type="([a-z_]+)">', graded["junit"]) == [
        "not_implemented"] * len(IDS)
    assert graded["markdown"].count("\n- `") == len(IDS)


def test_a_target_that_does_not_compile_is_not_gradable_on_prairielearn(grade_once):
    graded = grade_once("syntax-error")
    pl = graded["pl"]
    assert pl["gradable"] is False and pl["tests"] == []
    problem, source = pl["format_errors"]  # the sentence, then the line of code and a caret
    assert "does not compile" in problem and "\n" not in problem
    assert source.splitlines()[-1].strip().startswith("^")
    assert re.findall(r'<error message="[^"]*" type="([a-z_]+)">', graded["junit"]) == [
        "errored"] * len(IDS)


# -- hostile student text, without grading ------------------------------------------------------
HOSTILE = "]]><b>&amp;</b>\x00\x1b[31mred\x1b[0m\x07 ``` `*_[x](y)` \ud800\r\nsecond line"


@pytest.mark.parametrize("raw, shown", [
    ("a\nb\r\tc", "a\\nb\\r\\tc"), ("\x1b[2J\x07\x00", "\\x1b[2J\\x07\\x00"),
    ("\x9b2J\x85\x7f", "\\x9b2J\\x85\\x7f"),
    ("\u202eab\u2066\u200f\u061c", "\\u202eab\\u2066\\u200f\\u061c"),
    ("x\u2028y\u2029\ufeff", "x\\u2028y\\u2029\\ufeff"), ("lone \ud800", "lone \\ud800"),
    ("Claim(owner='A', token=1) — 日本語 ✓", "Claim(owner='A', token=1) — 日本語 ✓"),
])
def test_text_from_the_code_under_grade_is_shown_on_one_line_escaped_as_a_repr(raw, shown):
    assert shown_text(raw) == shown
    assert shown_text(shown) == shown  # showing twice changes nothing


def test_shown_text_is_cut_and_a_failure_keeps_only_the_grader_s_own_lines():
    assert shown_text("x" * (MAX_SHOWN + 50)) == "x" * (MAX_SHOWN - 1) + "…"
    assert len(shown_text("\n" * MAX_SHOWN)) == MAX_SHOWN
    listing = "    1  BEGIN IMMEDIATE\n  ▶ 2  UPDATE jobs SET owner = '\x9b'"
    failure = Failure(Outcome.FAILED, Kind.DETAIL, detail="tx-left-open",
                      params={"function": "claim\nScore: 100", "statements": listing},
                      timeline=[{"op": "claim", "actor": "A", "t": 0, "raised": "E: a\nb"}])
    result = CheckResult("claim-in-one-immediate-transaction", 3, Outcome.FAILED, failure)
    assert result.result.params == {"function": "claim\\nScore: 100",
                                     "statements": listing.replace("\x9b", "\\x9b")}
    assert result.result.timeline[0]["raised"] == "E: a\\nb"
    assert failure.timeline[0]["raised"] == "E: a\nb"  # a copy: the check's own is as it was
    bug = CheckResult("x", 1, Outcome.ERRORED, Failure.grader_bug("Traceback\n  line\x1b\n"))
    assert bug.result.error == "Traceback\n  line\\x1b\n"


def hostile_view(lang: str = "en"):
    failures = {
        "finish-at-expiry": Failure(Outcome.FAILED, Kind.MISMATCH, function="finish",
                                    came_back=HOSTILE, expected="False"),
        "reclaim-at-expiry": Failure(Outcome.ERRORED, Kind.RAISED, function="claim",
                                     error="ValueError: " + HOSTILE, where="queue.py:3"),
        "reclaim-after-expiry": Failure(Outcome.TIMED_OUT, timeout=3.0),
        "reclaim-before-expiry": Failure(Outcome.NOT_IMPLEMENTED, Kind.NOT_IMPLEMENTED,
                                         function="work_once"),
    }
    results = [CheckResult("finish-before-expiry", 2, Outcome.PASSED, duration=0.25)] + [
        CheckResult(cid, 4, f.outcome, f, duration=0.5) for cid, f in failures.items()]
    return report_view(results, lang, target="queue.py", duration=1.5)


def test_junit_escapes_student_text_and_drops_what_xml_forbids(tmp_path):
    xml = junit.from_view(hostile_view())
    path = tmp_path / "junit.xml"
    files.write_atomically(path, xml)
    root = ET.parse(path).getroot()  # well-formed
    suite = root.find("testsuite")
    assert (suite.get("tests"), suite.get("failures"), suite.get("errors")) == ("5", "1", "3")
    cases = {case.name: case for suite in junitparser.JUnitXml.fromfile(str(path))
             for case in suite}
    failure, = cases["finish-at-expiry"].result
    # controls shown as a repr writes them (grader.results.shown_text), the line kept whole
    assert "]]><b>&amp;</b>\\x00\\x1b[31mred\\x1b[0m\\x07" in failure.text
    assert "\\ud800\\r\\nsecond line" in failure.text
    assert not re.search("[\x00-\x08\x0b\x0c\x0e-\x1f]", xml)
    types = {name: case.result[0].type for name, case in cases.items() if case.result}
    assert types == {"finish-at-expiry": "failed", "reclaim-at-expiry": "errored",
                     "reclaim-after-expiry": "timed_out",
                     "reclaim-before-expiry": "not_implemented"}
    assert cases["finish-before-expiry"].time == 0.25


def test_markdown_keeps_student_text_literal():
    md = markdown.from_view(hostile_view())
    assert "\x1b" not in md and "\x00" not in md and "<b>" not in md.split("````text")[0]
    item = next(line for line in md.splitlines() if line.startswith("- `finish-at-expiry`"))
    assert "&lt;b&gt;" in item and r"\`\`\`" in item and r"\[x\]" in item
    assert "````text\n" in md  # the text holds ```, so its fence is longer
    assert md.count("\n- `") == 4


def test_prairielearn_text_is_plain_and_encodable():
    payload = prairielearn.from_view(hostile_view("ja"))
    dumped = json.dumps(payload, ensure_ascii=False)
    dumped.encode("utf-8")  # no lone surrogate left
    assert "\\u001b" not in dumped and "\\u0000" not in dumped
    assert payload["gradable"] is True and payload["score"] == pytest.approx(2 / 18)
    assert payload["tests"][0]["message"] == text("outcome.passed", "ja")


def test_only_a_target_that_cannot_be_loaded_is_not_gradable():
    load = Failure.load_error(Kind.IMPORT_ERROR, {"error": "ModuleNotFoundError: x"})
    unloadable = report_view([CheckResult("finish-at-expiry", 4, Outcome.ERRORED, load)],
                             "en", target="q.py")
    assert prairielearn.from_view(unloadable)["gradable"] is False
    assert prairielearn.from_view(hostile_view())["gradable"] is True
    assert prairielearn.from_view(report_view([], "en", target="q.py"))["gradable"] is True


# -- arguments and files ------------------------------------------------------------------------
@pytest.mark.parametrize("flag", ["--junit", "--prairielearn", "--markdown"])
def test_an_unwritable_report_path_is_refused_before_grading(tmp_path, flag):
    path = tmp_path / "no-such-folder" / "report.out"
    refused(run_grader("--impl", "solutions.queue", "--json", str(tmp_path / "r.json"), flag,
                       str(path)), flag, "does not exist")
    assert not (tmp_path / "r.json").exists()
    refused(run_grader(flag, str(tmp_path)), flag, "is a folder")


def test_a_report_to_a_fifo_is_written_in_place_and_the_fifo_kept(tmp_path):
    fifo = tmp_path / "summary.md"
    os.mkfifo(fifo)
    got = []
    reader = threading.Thread(target=lambda: got.append(fifo.read_text(encoding="utf-8")))
    reader.start()
    files.remove_stale(fifo)
    files.write_atomically(fifo, "hello\n")
    reader.join(timeout=10)
    assert got == ["hello\n"] and fifo.is_fifo()


def _case(xml: str, check_id: str) -> ET.Element:
    return next(c for c in ET.fromstring(xml).iter("testcase") if c.get("name") == check_id)


def _properties(case: ET.Element) -> dict[str, str]:
    return {p.get("name"): p.get("value") for p in case.iter("property")}
