"""The HTML report: what it says for the solution and for mutants, that it escapes what student
code returns, honours the detail levels, needs no network, and renders in a real browser.

The implementations are graded once each (in a child process, as the CLI would) and the reports
rendered from those results in every language and detail level. The browser tests load the report
in headless Chromium (Debian's package, installed by .ci/install-chromium) and look at the
screenshot; the screenshots are kept in artifacts/screenshots/ for a person to look at.
"""

from __future__ import annotations

import base64
import hashlib
import html as html_lib
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from markupsafe import escape

import cdp
from conftest import IN_CI, MUTANTS, ROOT, run_grader
from pngread import read_png

from grader.checkdef import all_checks
from grader.harness.target.loader import display_name
from grader.instructor import class_report, gradebook
from grader.report import html as report_html, timeline_svg
from grader.report.causes import SHOWN_IDS
from grader.report.messages import text
from grader.report.sentences import value
from grader.report.view import report_view
from grader.results import CheckResult, Failure
from lab.store import COLUMNS

SCREENSHOTS = ROOT / "artifacts" / "screenshots"
BOUNDARY = str(MUTANTS / "boundary_finish_at_expiry_accepted.py")
IMPLS = {
    "solution": "solutions.queue",
    "boundary": BOUNDARY,
    "raises": str(MUTANTS / "outcome_finish_raises_when_rejected.py"),
    "rowcount": str(MUTANTS / "outcome_finish_returns_rowcount.py"),
    "stubs": "lab.queue",
    "rollback": str(MUTANTS / "tx_no_rollback_on_error.py"),
    "race": str(MUTANTS / "race_split_with_own_trace_callback.py"),
    "many": str(MUTANTS / "integration_stale_finish_by_id.py"),
}
HOSTILE = '<script>alert("owned")</script><img src=x onerror=alert(1)>'

DUMP = ("import dataclasses, json, sys\n"
        "from grader.runner import run_checks\n"
        "results = run_checks(sys.argv[1])\n"
        "with open(sys.argv[2], 'w', encoding='utf-8') as out:\n"
        "    json.dump([dataclasses.asdict(r) for r in results], out)\n")


def grade_results(impl: str, tmp: Path) -> list[CheckResult]:
    """Grade `impl` in a child process; return its CheckResults."""
    out = tmp / f"{abs(hash(impl))}.json"
    env = {**os.environ, "NO_COLOR": "1"}
    proc = subprocess.run([sys.executable, "-c", DUMP, impl, str(out)], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    return [CheckResult(**{**r, "result": r["result"] and Failure.from_json(r["result"])})
            for r in json.loads(out.read_text(encoding="utf-8"))]


@pytest.fixture(scope="module")
def graded(tmp_path_factory) -> dict[str, list[CheckResult]]:
    tmp = tmp_path_factory.mktemp("html-results")
    with ThreadPoolExecutor(max_workers=2) as pool:
        return dict(zip(IMPLS, pool.map(lambda impl: grade_results(impl, tmp), IMPLS.values())))


def target(name: str) -> str:
    """The target as the CLI would show it when run from the project root."""
    impl = IMPLS[name]
    return display_name(os.path.relpath(impl, ROOT) if impl.endswith(".py") else impl)


def report(graded, name: str, lang: str = "en", detail: str = "full") -> str:
    return report_html.render(graded[name], lang, target=target(name), detail=detail)


def section(html: str, check_id: str) -> str:
    """The <details> of one check."""
    found = re.search(rf'<details[^>]*id="check-{re.escape(check_id)}".*?</details>', html, re.S)
    assert found, f"no section for {check_id}"
    return found.group(0)


def alone(graded, name: str, check_id: str, **options) -> str:
    """The page for one check's result only: no other check shares its cause, so it shows in
    full (a cause shared by several checks is shown once, above them: tests/test_root_causes)."""
    results = [r for r in graded[name] if r.id == check_id]
    return report_html.render(results, options.pop("lang", "en"), target=target(name), **options)


def cause_section(html: str, number: int = 1) -> str:
    found = re.search(rf'<section class="cause" id="cause-{number}">.*?</section>', html, re.S)
    assert found, f"no cause {number}"
    return found.group(0)


def caused_line(html: str, check_id: str) -> str:
    """The one line of a check that a shared cause explains."""
    found = re.search(rf'<div class="check caused[^"]*" id="check-{re.escape(check_id)}".*?</div>',
                      html, re.S)
    assert found, f"no one-line entry for {check_id}"
    return found.group(0)


def opening_tag(html: str, check_id: str) -> str:
    return re.match(r"<details[^>]*>", section(html, check_id)).group(0)


def marked_columns(html: str) -> set[str]:
    rows = re.findall(r'<tr class="differs">(.*?)</tr>', html, re.S)
    assert all("≠" in row for row in rows), "a differing row without the ≠ symbol"
    return {re.search(r'<th scope="row"><code>([a-z_]+)</code>', row).group(1) for row in rows}


def said(key: str, lang: str = "en", **params) -> str:
    """A catalogue text as it appears in the HTML (escaped)."""
    return str(escape(text(key, lang, **params)))


def failing(results: list[CheckResult]) -> list[CheckResult]:
    return [r for r in results if not r.passed]


# -- content ----------------------------------------------------------------------------------
def test_solution_report_shows_full_marks_and_every_check_collapsed(graded):
    results = graded["solution"]
    html = report(graded, "solution")
    total = sum(r.points for r in results)
    assert said("ui.score", "en", score=total, max_score=total) in html
    assert said("ui.all-passed", "en") in html
    assert html.count("<details") == len(results)
    for r in results:
        assert said(f"check.{r.id}.title", "en") in html
        assert " open" not in opening_tag(html, r.id), r.id
        assert 'data-outcome="passed"' in opening_tag(html, r.id)
    assert "<svg" not in html  # nothing failed, nothing to draw


def test_mutant_report_opens_the_failing_check_with_everything_a_student_needs(graded):
    results = graded["boundary"]
    html = report(graded, "boundary")
    failed = failing(results)
    # the boundary check, and the same bug met again on a random timeline
    assert [r.id for r in failed] == ["finish-at-expiry", "random-timelines"]
    r = failed[0]
    part = section(html, r.id)
    assert " open" in opening_tag(html, r.id)
    for other in results:
        if other.passed:
            assert " open" not in opening_tag(html, other.id)
    score = sum(x.score for x in results)
    assert said("ui.score", "en", score=score, max_score=sum(x.points for x in results)) in html
    assert f'href="#check-{r.id}"' in html  # listed under "to look at first"
    # what came back vs what was expected
    assert re.search(r'came-back">.*?<code>True</code>', part, re.S)
    assert re.search(r'class="value expected">.*?<code>False</code>', part, re.S)
    # the row side by side, the differing cells marked
    row = r.result.to_json()["row"]
    differing = {c for c in COLUMNS if value(row["current"][c]) != value(row["expected"][c])}
    assert differing == {"status", "finished_at"}
    assert marked_columns(part) == differing
    assert re.search(r'<td class="current">done</td><td class="expected">leased</td>', part)
    # the timeline: an SVG sequence diagram with the lease and the failing step, and as text
    svg = re.search(r"<svg.*?</svg>", part, re.S).group(0)
    assert 'class="lease"' in svg and "token=1" in svg
    assert 'class="ev finish failing"' in svg and "accepted, should be rejected" in svg
    assert '<li class="failing">' in part and "A finishes with token=1 → True" in part
    assert said(f"check.{r.id}.why", "en") in part
    assert said(f"check.{r.id}.hint", "en") in part


def test_a_raise_shows_what_raised_where(graded):
    cause = cause_section(report(graded, "raises"))
    assert "finish raised RuntimeError: lease lost for job 1" in cause
    assert "outcome_finish_raises_when_rejected.py:" in cause and "finish-at-expiry" in cause
    html = alone(graded, "raises", "finish-at-expiry")
    part = section(html, "finish-at-expiry")
    assert 'data-outcome="errored"' in part and " open" in opening_tag(html, "finish-at-expiry")
    assert "finish raised RuntimeError: lease lost for job 1" in part
    assert "outcome_finish_raises_when_rejected.py:" in part  # where, in the student's file
    assert "raised" in re.search(r"<svg.*?</svg>", part, re.S).group(0)


def test_a_wrong_return_type_is_named(graded):
    html = report(graded, "rowcount")
    assert "finish returns a value of type int; it must return bool." in cause_section(html)
    assert 'href="#cause-1"' in caused_line(html, "finish-before-expiry")
    part = section(alone(graded, "rowcount", "finish-before-expiry"), "finish-before-expiry")
    assert "finish returned 1 (type int); it must return bool." in part
    assert "<svg" in part


def test_stubs_say_not_implemented_without_a_timeline(graded):
    html = report(graded, "stubs")
    assert "<svg" not in html
    for r in graded["stubs"]:
        number = re.search(r'href="#cause-(\d)"', caused_line(html, r.id)).group(1)
        cause = cause_section(html, int(number))
        assert "is not implemented yet" in cause and f'href="#check-{r.id}"' in cause
        part = section(alone(graded, "stubs", r.id), r.id)
        assert " open" in opening_tag(part, r.id)
        assert "is not implemented yet" in part
        assert "<svg" not in part


def test_japanese_report_uses_the_japanese_catalogue(graded):
    html = report(graded, "boundary", lang="ja")
    assert '<html lang="ja">' in html
    for r in graded["boundary"]:
        ja, en = said(f"check.{r.id}.title", "ja"), said(f"check.{r.id}.title", "en")
        assert ja in html
        assert en == ja or en not in html
    part = section(html, "finish-at-expiry")
    for key in ("ui.came-back", "ui.why", "ui.hint", "html.row", "html.svg.queue"):
        assert said(key, "ja") in part, key
    assert said("check.finish-at-expiry.hint", "ja") in part


def test_detail_actual_only_hides_the_expected_value_column_and_hint(graded):
    html = report(graded, "boundary", detail="actual-only")
    part = section(html, "finish-at-expiry")
    assert re.search(r'came-back">.*?<code>True</code>', part, re.S)
    assert 'class="value expected"' not in part and said("ui.expected", "en") not in part
    assert '<td class="current">done</td>' in part
    assert 'class="expected"' not in part and "≠" not in part
    assert said("check.finish-at-expiry.hint", "en") not in part
    assert said("check.finish-at-expiry.why", "en") in part
    assert "<svg" in part


def test_detail_none_shows_only_title_outcome_and_why(graded):
    html = report(graded, "boundary", detail="none")
    part = section(html, "finish-at-expiry")
    assert said("check.finish-at-expiry.title", "en") in part
    assert said("outcome.failed", "en") in part
    assert said("check.finish-at-expiry.why", "en") in part
    for hidden in ("<svg", "<table", 'class="values"', said("ui.came-back", "en"),
                   said("ui.timeline", "en"), said("check.finish-at-expiry.hint", "en")):
        assert hidden not in part, hidden


def test_detail_none_still_says_what_raised(graded):
    assert "finish raised RuntimeError" in cause_section(report(graded, "raises", detail="none"))
    part = section(alone(graded, "raises", "finish-at-expiry", detail="none"), "finish-at-expiry")
    assert "finish raised RuntimeError" in part
    assert "<svg" not in part


def hostile_results() -> list[CheckResult]:
    row = {c: 1 for c in COLUMNS}
    events = [
        {"op": "enqueue", "job": 1, "qty": 1, "deadline": 5000, "max_attempts": 3},
        {"op": "claim", "actor": HOSTILE, "t": 0, "lease_ms": 1000,
         "result": {"id": 1, "qty": 1, "owner": HOSTILE, "token": HOSTILE, "attempt": 1,
                    "lease_until": 1000}},
        {"op": "finish", "actor": HOSTILE, "t": 1000, "stamp": {"token": HOSTILE},
         "result": HOSTILE},
    ]
    mismatch = {"outcome": "failed", "kind": "mismatch", "came_back": HOSTILE,
                "expected": "False", "detail": None, "params": {}, "timeline": events,
                "row": {"job": 1, "current": {**row, "owner": HOSTILE},
                        "expected": {**row, "owner": "A"}}}
    raised = {"outcome": "errored", "kind": "raised", "function": "finish", "error": HOSTILE,
              "where": HOSTILE, "timeline": [*events[:2], {**events[2], "raised": HOSTILE}]}
    return [CheckResult("finish-at-expiry", 4, "failed", Failure.from_json(mismatch)),
            CheckResult("finish-after-expiry", 3, "errored", Failure.from_json(raised))]


def test_student_strings_are_escaped_everywhere():
    html = report_html.render(hostile_results(), "en", target=HOSTILE)
    assert "<script>alert" not in html and "<img src=x" not in html
    assert html.count("<script") == 1  # the report's own, hash-pinned by the CSP
    assert "&lt;script&gt;alert(" in html
    assert marked_columns(html) == {"owner"}


def test_repeated_runs_show_passed_k_of_n_and_unstable():
    results = [CheckResult("finish-at-expiry", 4, "passed", None,
                           runs=["passed", "failed", "passed"]),
               CheckResult("finish-after-expiry", 3, "passed", None,
                           runs=["passed", "passed", "passed"])]
    html = report_html.render(results, "en", target="x.py")
    unstable, stable = section(html, "finish-at-expiry"), section(html, "finish-after-expiry")
    assert said("html.runs", "en", passed=2, runs=3) in unstable
    assert said("html.unstable", "en") in unstable
    assert said("html.runs", "en", passed=3, runs=3) in stable
    assert said("html.unstable", "en") not in stable


def test_the_report_is_self_contained(graded):
    html = report(graded, "boundary")
    assert re.findall(r"https?://[^\s\"'<>)]+", html) == ["http://www.w3.org/2000/svg"] * html.count("<svg")
    for needle in ("<link", " src=", "url(", "@import", "@font-face"):
        assert needle not in html, needle
    csp = re.search(r'http-equiv="Content-Security-Policy" content="([^"]+)"', html).group(1)
    assert "default-src 'none'" in csp
    script = re.search(r"<script>(.*?)</script>", html, re.S).group(1)
    digest = base64.b64encode(hashlib.sha256(script.encode()).digest()).decode()
    assert f"'sha256-{digest}'" in csp


def test_cli_writes_the_report(tmp_path):
    out = tmp_path / "report.html"
    proc = run_grader("--impl", BOUNDARY, "--html", str(out), "--lang", "ja")
    assert proc.returncode == 1, proc.stderr
    html = out.read_text(encoding="utf-8")
    assert '<html lang="ja">' in html
    assert said("check.finish-at-expiry.title", "ja") in section(html, "finish-at-expiry")
    assert " open" in opening_tag(html, "finish-at-expiry")


# -- in a real browser ----------------------------------------------------------------------
CHROMIUM_FLAGS = ("--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
                  "--no-first-run", "--disable-background-networking",
                  "--disable-component-update", "--disable-sync", "--hide-scrollbars")


@pytest.fixture(scope="module")
def chromium() -> str:
    path = shutil.which("chromium") or shutil.which("chromium-browser")
    if path is None:
        if IN_CI.get("CI"):
            pytest.fail("chromium is missing on CI: .ci/install-chromium should have installed it")
        pytest.skip("chromium is not installed (bash .ci/install-chromium installs Debian's)")
    return path


def browse(chromium: str, page: Path, *args: str) -> subprocess.CompletedProcess:
    with tempfile.TemporaryDirectory(prefix="leaselab-chromium-") as profile:
        proc = subprocess.run([chromium, *CHROMIUM_FLAGS, f"--user-data-dir={profile}", *args,
                               page.resolve().as_uri()],
                              capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr[-2000:]
    return proc


def screenshot(chromium: str, page: Path, png: Path, width: int, height: int):
    png.unlink(missing_ok=True)
    browse(chromium, page, f"--window-size={width},{height}", f"--screenshot={png}")
    assert png.exists(), f"chromium wrote no screenshot of {page}"
    return read_png(png)


def reddish(image, top: int, bottom: int) -> int:
    """Pixels in the failure colour (var(--bad), #c62828, and its shades) in rows top..bottom."""
    return sum(1 for r, g, b in image.pixels(top, bottom, step=2) if r > 160 and g < 90 and b < 90)


def assert_not_blank(image) -> None:
    grey = [(r * 299 + g * 587 + b * 114) // 1000 for r, g, b in image.pixels(step=4)]
    mean = sum(grey) / len(grey)
    variance = sum((v - mean) ** 2 for v in grey) / len(grey)
    assert variance > 50, f"the screenshot looks blank (luminance variance {variance:.1f})"
    assert len(set(image.pixels(step=8))) > 20, "the screenshot has almost no colours"


@pytest.fixture(scope="module")
def pages(graded) -> dict[str, Path]:
    """The reports a person can look at, next to their screenshots."""
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    made = {}
    for name, impl, lang in (("solution", "solution", "en"), ("mutant", "boundary", "en"),
                             ("mutant-ja", "boundary", "ja")):
        made[name] = SCREENSHOTS / f"{name}.html"
        report_html.write(made[name], graded[impl], lang, target=target(impl))
    return made


def test_browser_renders_the_solution_report(chromium, pages, graded):
    image = screenshot(chromium, pages["solution"], SCREENSHOTS / "solution-laptop.png", 1280,
                       page_height(graded["solution"]))
    assert_not_blank(image)
    assert reddish(image, 0, image.height) < 10, "the solution's report shows the failure colour"


def page_height(results: list[CheckResult]) -> int:
    """A window tall enough for the whole report at laptop width: the score, one line per
    passed check and room for the failures drawn open."""
    return 500 + 60 * len(results) + 1100 * len(failing(results))


def test_browser_shows_the_failing_check_open(chromium, pages, graded):
    height = page_height(graded["boundary"])
    image = screenshot(chromium, pages["mutant"], SCREENSHOTS / "mutant-laptop.png", 1280, height)
    assert_not_blank(image)
    # The score card and "to look at first" carry the failure colour at the top, however many
    # checks come before the failing one; the failing check, drawn open, carries much more.
    assert reddish(image, 0, 400) > 150, "no failure colour at the top of the mutant's report"
    assert reddish(image, 400, image.height) > 1000, "the failing check is not drawn open"
    dom = browse(chromium, pages["mutant"], "--dump-dom").stdout
    tag = re.search(r'<details[^>]*id="check-finish-at-expiry"[^>]*>', dom).group(0)
    assert "open" in tag
    assert said("check.finish-at-expiry.title", "en") in dom
    assert "<svg" in section(dom, "finish-at-expiry")


def test_browser_phone_width_in_japanese(chromium, pages):
    image = screenshot(chromium, pages["mutant-ja"], SCREENSHOTS / "mutant-phone-ja.png", 375, 1600)
    assert_not_blank(image)
    assert reddish(image, 0, 400) > 150, "no failure colour at the top at phone width"


ODD_TIMELINES = {
    "empty": [],
    "only-setup": [{"op": "enqueue", "job": 1, "qty": 1, "deadline": 10, "max_attempts": 1},
                   {"op": "note", "key": "ui.why", "params": {}}],
    "owner-is-a-list": [{"op": "claim", "actor": ["A"], "t": 0, "lease_ms": 5,
                         "result": {"token": [1], "lease_until": "soon"}}],
    "no-clock": [{"op": "work_once", "actor": "A", "t": None, "lease_ms": 5}],
    "lease-ends-before-it-starts": [{"op": "claim", "actor": "A", "t": 50, "lease_ms": 5,
                                     "result": {"token": 1, "lease_until": 10}},
                                    {"op": "finish", "actor": "A", "t": 50, "stamp": {},
                                     "result": "1"}],
    "same-actor-same-time": [{"op": "claim", "actor": "A", "t": 0, "lease_ms": 5,
                              "result": {"token": 1, "lease_until": 5}},
                             {"op": "claim", "actor": "A", "t": 0, "lease_ms": 5,
                              "result": {"token": 2, "lease_until": 5}},
                             {"op": "finish", "actor": "A", "t": 0, "stamp": {"token": 1},
                              "raised": "ValueError: x"}],
}


@pytest.mark.parametrize("name", ODD_TIMELINES)
def test_the_diagram_survives_odd_timelines(name, lenient_messages):
    events = ODD_TIMELINES[name]
    svg = str(timeline_svg.build(events, "en", raised=True))
    calls = [e for e in events if e["op"] in timeline_svg.CALLS]
    assert (svg.startswith("<svg") and svg.endswith("</svg>")) if calls else svg == ""
    assert svg.count("<g ") == svg.count("</g>")
    assert svg.count('<g class="ev ') == (len(events) if calls else 0)


# -- the diagram's layout (issue 15) ------------------------------------------------------------
def diagram(graded, name: str, check_id: str, lang: str = "en") -> str:
    part = section(alone(graded, name, check_id, lang=lang), check_id)
    return re.search(r"<svg.*?</svg>", part, re.S).group(0)


def marks(svg: str) -> list[tuple[str, bool, int, str]]:
    """(op, failing, x, inside) of every event group, in timeline order."""
    return [(op, bool(failing), int(x), inside) for op, failing, x, inside in re.findall(
        r'<g class="ev ([a-z_-]+)( failing)?" data-x="(-?\d+)">(.*?)</g>', svg, re.S)]


def texts(svg: str) -> list[tuple[str, float, float, str]]:
    """(class, x, y, words) of every <text> outside the <title>s."""
    return [(cls, float(x), float(y), html_lib.unescape(words)) for cls, x, y, words in
            re.findall(r'<text class="([^"]+)" x="(-?[\d.]+)" y="(-?[\d.]+)">(.*?)</text>', svg)]


def boxes(svg: str) -> list[tuple[float, float, float, str]]:
    """(left, right, y, words) of every label as drawn: centred for the ones whose class
    centres them (report.css), else starting at x; widths as the layout measures them."""
    found = []
    for cls, x, y, words in texts(svg):
        size = {"lane": 12, "tick": timeline_svg.TICK, "this-step": 10}.get(cls.split()[0],
                                                                            timeline_svg.SMALL)
        width = timeline_svg.text_width(words, size)
        left = x - width / 2 if cls in ("this-step", "qmark") else x
        found.append((left, left + width, y, words))
    return found


def assert_no_overlap(svg: str) -> None:
    drawn = boxes(svg)
    for n, (l1, r1, y1, w1) in enumerate(drawn):
        for l2, r2, y2, w2 in drawn[n + 1:]:
            if abs(y1 - y2) < 11 and l1 < r2 and l2 < r1:
                raise AssertionError(f"{w1!r} ({l1:.0f}-{r1:.0f}) and {w2!r} ({l2:.0f}-{r2:.0f}) "
                                     f"overlap at y={y1:.0f}")


def band_of(svg: str, tick: str) -> tuple[float, float]:
    """The x range of the shaded band whose time label is `tick`."""
    x = next(x for cls, x, _, words in texts(svg) if cls == "tick" and words == tick)
    for bx, w in re.findall(r'<rect class="moment" x="(-?\d+)" y="\d+" width="(\d+)"', svg):
        if abs(float(bx) + 2 - x) < 1:
            return float(bx), float(bx) + float(w)
    raise AssertionError(f"no band for {tick}")


@pytest.mark.parametrize("name, check_id", [("rollback", "claim-rolls-back-on-error"),
                                            ("race", "race-one-winner"),
                                            ("boundary", "finish-at-expiry")])
@pytest.mark.parametrize("lang", ["en", "ja"])
def test_diagram_labels_never_overlap_and_marks_go_left_to_right(graded, name, check_id, lang):
    """issue 15: the two "enqueue" labels of claim-rolls-back-on-error were drawn on top of
    each other; steps before the first claim were drawn right of it."""
    svg = diagram(graded, name, check_id, lang)
    assert_no_overlap(svg)
    xs = [x for _, _, x, _ in marks(svg)]
    assert xs == sorted(xs) and len(set(xs)) == len(xs), xs  # each mark its own x, in order


def test_steps_before_the_first_claim_are_drawn_left_of_it(graded):
    svg = diagram(graded, "rollback", "claim-rolls-back-on-error")
    drawn = marks(svg)
    claim = next(x for op, _, x, _ in drawn if op == "claim")
    enqueues = [x for op, _, x, _ in drawn if op == "enqueue"]
    assert len(enqueues) == 2 and max(enqueues) < claim
    # the deadline at 10 ms is drawn at the claim made at 10 ms, not at the first enqueue
    deadline = re.search(r'<line class="deadline" x1="(\d+)"', svg).group(1)
    assert int(deadline) == claim


def test_the_race_diagram_has_the_times_that_happened_and_no_others(graded):
    """issue 15: everything in the race happened at 0 ms, yet a dozen marks were spread between
    0 and 1000 ms on a time axis. Now the axis has a moment per time (0 ms: both claims, in
    the order they were told; 1000 ms: where their leases end) and nothing between them."""
    svg = diagram(graded, "race", "race-one-winner")
    assert [words for cls, _, _, words in texts(svg) if cls == "tick"] == ["0 ms", "1000 ms"]
    left, right = band_of(svg, "0 ms")
    drawn = marks(svg)
    claims = [x for op, _, x, _ in drawn if op == "claim"]
    assert len(claims) == 2 and all(left < x < right for x in claims)
    end = int(re.search(r'<line class="grid" x1="(\d+)"', svg).group(1))  # lease_until = 1000
    assert all(x < end for _, _, x, _ in drawn)  # nothing drawn as if it happened later
    for x, w in re.findall(r'<rect class="lease" x="(\d+)" y="\d+" width="(\d+)"', svg):
        assert int(x) in claims and abs(int(x) + int(w) - end) <= 1  # rounded apiece
    # the statements told before the claims are one labelled run, not a dozen bare marks
    notes = [x for op, _, x, _ in drawn if op == "note"]
    assert len(notes) >= 10 and all(x < min(claims) for x in notes)
    assert f"✎ {len(notes)} steps, in the list below" in svg


def test_a_wrong_verdict_is_said_in_words_not_with_a_red_tick(graded):
    """issue 15: a finish accepted where it must be rejected read "✓ accepted", in red."""
    for lang, said_here in (("en", "accepted, should be rejected"), ("ja", "受理(拒否すべき)")):
        svg = diagram(graded, "boundary", "finish-at-expiry", lang)
        (failing_finish,) = [inside for op, failing, _, inside in marks(svg) if failing]
        assert said_here in failing_finish and "✓" not in failing_finish
    # with the expected value hidden, the verdict is said plainly, still without the tick
    html = alone(graded, "boundary", "finish-at-expiry", detail="actual-only")
    svg = re.search(r"<svg.*?</svg>", section(html, "finish-at-expiry"), re.S).group(0)
    (failing_finish,) = [inside for op, failing, _, inside in marks(svg) if failing]
    assert ">accepted</text>" in failing_finish and "✓" not in failing_finish
    # a finish that is not the failing step keeps its mark
    events = [{"op": "claim", "actor": "A", "t": 0, "lease_ms": 5,
               "result": {"token": 1, "lease_until": 5}},
              {"op": "finish", "actor": "A", "t": 1, "stamp": {"token": 1}, "result": True},
              {"op": "claim", "actor": "B", "t": 2, "lease_ms": 5, "result": None}]
    assert "✓ accepted" in str(timeline_svg.build(events, "en"))


CROWDED = [
    {"op": "enqueue", "job": 1, "qty": 1, "deadline": 10, "max_attempts": 3},
    {"op": "enqueue", "job": 2, "qty": 1, "deadline": 10, "max_attempts": 3},
    {"op": "set-row", "job": 1, "values": {"status": "leased"}},
    {"op": "claim", "actor": "worker-with-a-long-name", "t": 5, "lease_ms": 5,
     "result": {"token": 1, "lease_until": 10}},
    {"op": "claim", "actor": "B", "t": 5, "lease_ms": 5, "result": None},
    {"op": "requeue", "job": 2},
    {"op": "finish", "actor": "worker-with-a-long-name", "t": 5, "stamp": {"token": 1},
     "result": False},
    {"op": "work_once", "actor": "B", "t": 5, "lease_ms": 5, "result": None},
    {"op": "finish", "actor": "B", "t": 10, "stamp": {"token": 1}, "result": True},
]


@pytest.mark.parametrize("lang", ["en", "ja"])
def test_a_crowded_moment_keeps_its_labels_apart(lang):
    svg = str(timeline_svg.build(CROWDED, lang, expected="False"))
    assert_no_overlap(svg)
    xs = [x for _, _, x, _ in marks(svg)]
    assert xs == sorted(xs) and len(set(xs)) == len(xs)


def css_rule(selector: str) -> str:
    css = (Path(report_html.TEMPLATES) / "report.css").read_text(encoding="utf-8")
    found = re.search(rf"(?m)^{re.escape(selector)}\s*\{{([^}}]*)\}}", css)
    assert found, f"no CSS rule for {selector}"
    return found.group(1)


def test_the_statements_a_function_ran_are_set_as_regular_monospace(graded):
    """issue 15: the traced SQL was set inside the sentence, in its bold proportional type."""
    part = section(alone(graded, "race", "claim-in-one-immediate-transaction"),
                   "claim-in-one-immediate-transaction")
    (listing,) = re.findall(r'<pre class="sql">(.*?)</pre>', part, re.S)
    lines = listing.split("\n")
    assert len(lines) >= 4 and "BEGIN IMMEDIATE" in lines[0] and "COMMIT" in listing
    assert all(re.match(r"  [ ▶] +\d+  \S", line) for line in lines), lines
    sentences = re.findall(r'<p class="sentence">(.*?)</p>', part, re.S)
    assert sentences and not any("BEGIN IMMEDIATE\n" in s or "  1  " in s for s in sentences)
    assert "Statements claim ran on conn, in order:" in sentences[-1]
    rule = css_rule("pre.sql")
    assert "monospace" in rule and re.search(r"font:\s*400\b", rule)


def test_a_sentence_splits_into_prose_and_code_blocks():
    assert report_html.blocks(None) == []
    assert report_html.blocks("one line") == [("prose", "one line")]
    assert report_html.blocks("Said.\nStatements:\n  ▶  1  BEGIN\n     2  COMMIT\nAfter.") == [
        ("prose", "Said.\nStatements:"), ("code", "  ▶  1  BEGIN\n     2  COMMIT"),
        ("prose", "After.")]


def test_to_look_at_first_is_numbered_in_lesson_order_and_capped(graded):
    """issue 15: "To look at first" listed all 17 failures of integration_stale_finish_by_id
    as an unordered list; now the first SHOWN_IDS, numbered, in the order of the checks below
    (lesson order), and how many more."""
    html = report(graded, "many")
    nav = re.search(r'<nav class="to-fix".*?</nav>', html, re.S).group(0)
    listed = re.findall(r'<li><a href="#check-([a-z0-9-]+)"', nav)
    failed = [r.id for r in graded["many"] if not r.passed]
    assert len(failed) > SHOWN_IDS
    lesson = [check_id for check_id in all_checks() if check_id in failed]
    assert listed == lesson[:SHOWN_IDS]
    assert "<ol>" in nav and "<ul>" not in nav
    assert said("html.to-fix-more", count=len(failed) - SHOWN_IDS) in nav
    # a short list is shown whole, with no "more"
    small = re.search(r'<nav class="to-fix".*?</nav>', report(graded, "race"), re.S).group(0)
    assert len(re.findall(r"<li>", small)) == len([r for r in graded["race"] if not r.passed])
    assert 'class="more"' not in small


#: The pages issue 15 item 4 was about, each as a screenshot a person can look at (committed in
#: artifacts/screenshots/issue-15-*.png): (name, implementation, the checks shown, size).
ISSUE_15_PAGES = (
    ("race", "race", ["race-one-winner"], (820, 940)),
    ("rollback", "rollback", ["claim-rolls-back-on-error"], (820, 880)),
    ("verdict", "boundary", ["finish-at-expiry"], (820, 660)),
    ("sql", "race", ["claim-in-one-immediate-transaction"], (820, 760)),
    ("to-fix", "many", None, (820, 600)),
)


@pytest.mark.parametrize("name, impl, ids, size", ISSUE_15_PAGES,
                         ids=[page[0] for page in ISSUE_15_PAGES])
def test_browser_issue_15_pages(chromium, graded, name, impl, ids, size):
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    page = SCREENSHOTS / f"issue-15-{name}.html"
    results = [r for r in graded[impl] if ids is None or r.id in ids]
    report_html.write(page, results, "en", target=target(impl))
    image = screenshot(chromium, page, SCREENSHOTS / f"issue-15-{name}.png", *size)
    assert_not_blank(image)
    assert reddish(image, 0, image.height) > 150, "no failure colour on a failing page"
    dom = browse(chromium, page, "--dump-dom").stdout
    for r in results:
        assert f'id="check-{r.id}"' in dom


# -- on a phone, on paper and to a screen reader (issue 39) ----------------------------------------
#: The browser tests below share one Chromium, driven through its DevTools protocol (tests/cdp.py):
#: they measure the page as laid out (sizes, scrolling), print it as a student's print dialog
#: does and read its accessibility tree.
PHONE = 390      # CSS px: a phone held upright
LEGIBLE = 12     # CSS px: the least a diagram's label is drawn at, on any screen
#: (implementation, at most this many pages on Letter paper): as measured on 2026-12-06 before
#: issue 39, 13 / 10 / 28 / 6 pages (the race mutant's first failure on page 6, the stubs'
#: first page blank but for the title); after it 6 / 4 / 17 / 3.
PRINTED = (("race", 7), ("boundary", 5), ("many", 23), ("stubs", 4))


@pytest.fixture(scope="module")
def devtools(chromium):
    why = cdp.unavailable()
    if why:
        pytest.skip(why)
    with cdp.Browser(chromium) as browser:
        yield browser


@pytest.fixture(scope="module")
def poppler() -> None:
    if not (shutil.which("pdftotext") and shutil.which("pdfinfo") and shutil.which("pdftoppm")):
        if IN_CI.get("CI"):
            pytest.fail("poppler-utils is missing on CI: .ci/install-chromium should install it")
        pytest.skip("pdftotext is not installed (bash .ci/install-chromium installs poppler-utils)")


def written(name: str, impl: str, graded, lang: str = "en") -> Path:
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    page = SCREENSHOTS / f"{name}.html"
    report_html.write(page, graded[impl], lang, target=target(impl))
    return page


LABEL_SIZES = """(() => {
  const sizes = [];
  for (const svg of document.querySelectorAll('svg.seq')) {
    const scale = svg.getBoundingClientRect().width / svg.viewBox.baseVal.width;
    for (const t of svg.querySelectorAll('text'))
      sizes.push(parseFloat(getComputedStyle(t).fontSize) * scale);
  }
  const frames = [...document.querySelectorAll('.svg-wrap')];
  return {sizes, page: document.documentElement.scrollWidth, width: innerWidth,
          scrolled: frames.filter(f => f.scrollWidth > f.clientWidth).length,
          focusable: frames.every(f => f.tabIndex === 0)};
})()"""


@pytest.mark.parametrize("width", [PHONE, 1280])
def test_the_diagrams_labels_are_legible_at_any_width(devtools, graded, width):
    """issue 39: at 390 px the diagram shrank with the screen, its labels to 3.5-6 px. Now it
    keeps at least LEGIBLE px for its smallest label and scrolls sideways in its frame (which a
    keyboard can focus and scroll); the page itself never scrolls sideways."""
    page = written("timelines", "many", graded)  # 17 diagrams, 415 to 950 units wide
    with devtools.page(page, width, 844, mobile=width == PHONE) as tab:
        got = tab.evaluate(LABEL_SIZES)
        if width == PHONE:
            tab.screenshot(SCREENSHOTS / "timeline-phone.png", "details[open] .timeline")
    assert got["width"] == width and len(got["sizes"]) > 200
    assert min(got["sizes"]) >= LEGIBLE - 0.05, f"a label drawn at {min(got['sizes']):.1f} px"
    assert got["page"] <= width, "the page scrolls sideways"
    assert got["focusable"]
    if width == PHONE:
        assert got["scrolled"] == len(re.findall("<svg", page.read_text(encoding="utf-8")))
        assert_not_blank(read_png(SCREENSHOTS / "timeline-phone.png"))


def a_class(lang: str) -> str:
    """A class report of 9 graded submissions over every check and 2 that did not grade."""
    declared = all_checks()
    rows = []
    for n in range(9):
        checks = {cid: (0, ("failed", "errored", "timed_out")[k % 3]) if (n + k) % 3 == 0
                  else (info.points, "passed") for k, (cid, info) in enumerate(declared.items())}
        rows.append(gradebook.Row(f"student-{n}", "graded", sum(p for p, _ in checks.values()),
                                  100, checks))
    rows.append(gradebook.Row("hang", "timed_out", 0, 100,
                              message="Grading stopped after 12 s, the limit per submission."))
    rows.append(gradebook.Row("syntax", "crashed", 0, 100,
                              message='  File "queue.py", line 3\n    def claim(conn)\n'
                                      '                   ^\nSyntaxError: expected \':\''))
    return class_report.render(rows, list(declared), declared, lang)


CLASS_TABLES = """(() => [...document.querySelectorAll('table')].map(table => {
  const frame = table.parentElement, box = () => frame.getBoundingClientRect();
  const first = table.querySelector('tbody tr > :first-child');
  const got = {id: table.id, page: document.documentElement.scrollWidth, width: innerWidth,
               frameRight: box().right, overflow: getComputedStyle(frame).overflowX,
               fits: table.getBoundingClientRect().right <= box().right + 0.5,
               scrolls: frame.scrollWidth > frame.clientWidth, focusable: frame.tabIndex === 0,
               name: frame.getAttribute('aria-labelledby') &&
                     document.getElementById(frame.getAttribute('aria-labelledby')).textContent,
               font: parseFloat(getComputedStyle(first).fontSize)};
  frame.scrollLeft = frame.scrollWidth;
  got.firstStays = Math.abs(first.getBoundingClientRect().left - box().left) < 1;
  got.lastShown = table.querySelector('tbody tr > :last-child').getBoundingClientRect().right
                  <= box().right + 0.5;
  frame.scrollLeft = 0;
  return got;
}))()"""


def test_the_class_report_reads_on_a_phone(devtools):
    """issue 39: the class report had no viewport setting (a phone drew it 980 px wide, shrunk)
    and its table's right columns were cut off. Now the page is as wide as the phone; a table
    wider than that scrolls sideways in its own frame (focusable, named by its heading, a shadow
    on the side that scrolls), its first column staying in view."""
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    page = SCREENSHOTS / "class-report.html"
    page.write_text(a_class("en"), encoding="utf-8")
    assert '<meta name="viewport" content="width=device-width, initial-scale=1">' in \
        page.read_text(encoding="utf-8")
    with devtools.page(page, PHONE, 844, mobile=True) as tab:
        tables = tab.evaluate(CLASS_TABLES)
        tab.screenshot(SCREENSHOTS / "class-report-phone.png", "#rates")
    assert [t["id"] for t in tables] == ["rates", "not-graded"]
    for t in tables:
        assert t["width"] == PHONE and t["page"] <= PHONE, t
        assert t["frameRight"] <= PHONE and t["font"] >= LEGIBLE, t
        assert t["fits"] or (t["scrolls"] and t["overflow"] == "auto" and t["focusable"]
                             and t["name"] and t["firstStays"] and t["lastShown"]), t
    assert tables[0]["scrolls"], "the rates' five columns cannot fit 390 px: the test is moot"
    assert_not_blank(read_png(SCREENSHOTS / "class-report-phone.png"))


def squeezed(s: str) -> str:
    """`s` without white space: a line pdftotext broke is found whole."""
    return re.sub(r"\s+", "", s)


def printed(devtools, page: Path) -> tuple[int, list[str]]:
    """Print `page` as a student's print dialog does: (pages, the text of each page)."""
    pdf = page.with_suffix(".pdf")
    with devtools.page(page, 1280) as tab:
        tab.pdf(pdf)
    info = subprocess.run(["pdfinfo", str(pdf)], capture_output=True, text=True, check=True)
    count = int(re.search(r"(?m)^Pages:\s+(\d+)", info.stdout).group(1))
    text = subprocess.run(["pdftotext", "-layout", str(pdf), "-"], capture_output=True,
                          text=True, check=True).stdout
    subprocess.run(["pdftoppm", "-r", "60", "-png", "-f", "1", "-l", "1", "-singlefile",
                    str(pdf), str(page.with_name(page.stem + "-page1"))], check=True)
    return count, text.split("\f")[:count]


@pytest.mark.parametrize("impl, most", PRINTED, ids=[p[0] for p in PRINTED])
def test_a_printed_report_starts_with_the_score_and_the_first_failure(devtools, poppler, graded,
                                                                       impl, most):
    """issue 39: the race mutant's report printed 13 pages, its first failure on page 6 (every
    passed check printed with its "why"); the stubs' first page was blank (the score's box was
    kept whole and did not fit). Now page 1 holds the score and the first failure (its failing
    step, or for the stubs the cause and the first check it makes fail); a passed check prints
    as one line, after the failures."""
    page = written(f"print-{impl}", impl, graded)
    pages, text = printed(devtools, page)
    view = report_view(graded[impl], "en", target=target(impl))
    first = squeezed(text[0])
    assert squeezed(text_of("ui.score", score=view.score, max_score=view.max_score)) in first
    if view.uncaused:
        check = view.uncaused[0]
        step = next((s.text for s in check.steps if s.failing), None)
        assert squeezed(check.title) in first and check.id in first
        assert squeezed(step or check.problem or check.sentence.split("\n")[0]) in first, check.id
    else:  # every failure has a cause
        assert squeezed(view.causes[0].sentence) in first
        assert squeezed(view.causes[0].checks[0].title) in first
    assert pages <= most, f"{pages} pages"


def text_of(key: str, **params) -> str:
    return text(key, "en", **params)


BADGES = """(() => [...document.querySelectorAll('.badge')].map(b => {
  const s = getComputedStyle(b);
  return {text: b.textContent.trim(), color: s.color, border: parseFloat(s.borderTopWidth),
          borderColor: s.borderTopColor};
}))()"""


def contrast_with_white(css_colour: str) -> float:
    r, g, b = (int(v) / 255 for v in re.findall(r"[\d.]+", css_colour)[:3])
    linear = [c / 12.92 if c <= 0.03928 else ((c + 0.055) / 1.055) ** 2.4 for c in (r, g, b)]
    luminance = 0.2126 * linear[0] + 0.7152 * linear[1] + 0.0722 * linear[2]
    return 1.05 / (luminance + 0.05)


def test_printed_badges_keep_their_meaning_without_backgrounds(devtools, graded):
    """issue 39: "failed" was white on a red background, which printing leaves out. On paper
    every badge says its word in a colour readable on white paper, on a bordered chip."""
    page = written("print-race", "race", graded)
    with devtools.page(page, 1280) as tab:
        tab.media("print")
        badges = tab.evaluate(BADGES)
    words = {text_of("outcome.failed"), text_of("outcome.passed")}
    assert words <= {b["text"] for b in badges}
    for b in badges:
        assert b["text"] and b["border"] >= 1, b
        assert contrast_with_white(b["color"]) >= 4.5, b
        assert contrast_with_white(b["borderColor"]) >= 3, b


GLYPHS = "▸▾▶"


def test_a_screen_reader_hears_each_timeline_once_by_its_own_name(devtools, graded):
    """issue 39: every diagram had the same name ("Sequence diagram of what happened") and its
    marks repeated the steps' sentences to a screen reader; the "▸" drawn before every check's
    title was read out. Now the diagram is one image named after its check, the list of steps
    has a name of its own, and no glyph is read."""
    page = written("timelines", "many", graded)
    with devtools.page(page, 1280) as tab:
        nodes = [n for n in tab.ax_nodes() if not n.get("ignored")]
    named = [(n.get("role", {}).get("value"), n.get("name", {}).get("value", "")) for n in nodes]
    view = report_view(graded["many"], "en", target=target("many"))
    drawn = [c for c in view.uncaused if c.events and timeline_svg.build(c.events, "en")]
    bar = text_of("html.score-of", score=view.score, max_score=view.max_score)
    images = [name for role, name in named if role == "image" and name != bar]
    lists = [name for role, name in named if role == "list" and name]
    assert images == [text_of("html.svg.label-of", check=c.title) for c in drawn]
    assert lists == [text_of("html.steps-label", check=c.title) for c in view.uncaused if c.steps]
    assert len(set(images + lists)) == len(images) + len(lists)
    sentences = {s.text for c in view.uncaused for s in c.steps}
    assert not [name for role, name in named if role != "StaticText" and role != "InlineTextBox"
                and name in sentences], "a step's sentence is read outside the list of steps"
    summaries = [name for role, name in named if role == "DisclosureTriangle"]
    assert len(summaries) == len([c for c in view.checks if not c.cause])
    assert not [name for _, name in named if any(g in name for g in GLYPHS)]


LANGS = """(selector => ({page: document.documentElement.lang,
  code: [...document.querySelectorAll(selector)].map(e => e.closest('[lang]').lang)}))"""


def test_japanese_pages_mark_code_as_english(devtools, graded):
    """issue 39: in a Japanese report a screen reader read ids, SQL and values with Japanese
    rules. The page is lang="ja"; in the student's report every code and pre element (ids, SQL,
    the student's source, values) is lang="en", in the class report every code element (ids;
    its pre elements hold the reason a submission did not grade, in the report's language)."""
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    pages = [(written("race-ja", "race", graded, "ja"), "code, pre"),
             (SCREENSHOTS / "class-report-ja.html", "code")]
    pages[1][0].write_text(a_class("ja"), encoding="utf-8")
    for page, selector in pages:
        with devtools.page(page, 1280) as tab:
            got = tab.evaluate(f"{LANGS}({json.dumps(selector)})")
        assert got["page"] == "ja" and len(got["code"]) > 10, page
        assert set(got["code"]) == {"en"}, page
    english = report(graded, "race")
    assert english.count(' lang="en"') == 1  # the page's own: its code needs no marks
