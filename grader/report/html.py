"""The HTML report (`python -m grader --html PATH`): one self-contained file a student opens.

Score at the top, then one `<details>` per check: failures open, passes collapsed. A failure
shows, as far as `detail` allows, what went wrong, the timeline (an SVG sequence diagram from
`grader.report.timeline_svg` and the same steps as text), what came back vs what was expected, the row
current vs expected with differing columns marked (≠ and colour), why it matters and a hint.

Everything is inline (CSS, SVG, one small script that opens every check before printing); a
Content-Security-Policy forbids any network access and any other script. The templates in
grader/templates/ run with autoescape on: owners, errors and values come from student code.
All words come from the message catalogue, the sentences through `grader.report.render` so that the
terminal, results.json and this report say the same thing.

`detail`: "full" (everything), "actual-only" (no expected value, no expected column, no hint;
the current row is shown unmarked), "none" (title, outcome and why; plus the one-line problem
for an outcome other than 'failed', e.g. what raised, as the terminal report does).
"""

from __future__ import annotations

import base64
import hashlib
from pathlib import Path

import jinja2

from lab.store import COLUMNS

from .messages import text
from .render import detail_sentence, event_text, failing_step, problem_line, value
from .terminal import MARKS
from grader.results import CheckResult
from . import timeline_svg

TEMPLATES = Path(__file__).with_name("templates")
DETAILS = ("full", "actual-only", "none")


def write(path: str | Path, results: list[CheckResult], lang: str, *, target: str,
          detail: str = "full") -> None:
    Path(path).write_text(render(results, lang, target=target, detail=detail), encoding="utf-8")


def render(results: list[CheckResult], lang: str, *, target: str, detail: str = "full") -> str:
    if detail not in DETAILS:
        raise ValueError(f"detail must be one of {DETAILS}, not {detail!r}")
    env = _environment()
    script = (TEMPLATES / "print.js").read_text(encoding="utf-8")
    checks = [_check_view(r, lang, detail) for r in results]
    score = sum(r.score for r in results)
    max_score = sum(r.points for r in results)
    passed = sum(r.passed for r in results)
    return env.get_template("report.html.j2").render(
        lang=lang, target=target, checks=checks, score=score, max_score=max_score,
        passed=passed, failed=len(results) - passed,
        percent=round(100 * score / max_score) if max_score else 0,
        css=(TEMPLATES / "report.css").read_text(encoding="utf-8"),
        script=script, script_hash=_csp_hash(script),
        t=lambda key, **params: text(key, lang, **params),
    )


def _environment() -> jinja2.Environment:
    return jinja2.Environment(loader=jinja2.FileSystemLoader(TEMPLATES), autoescape=True,
                              undefined=jinja2.StrictUndefined, trim_blocks=True,
                              lstrip_blocks=True, keep_trailing_newline=True)


def _csp_hash(script: str) -> str:
    digest = hashlib.sha256(script.encode("utf-8")).digest()
    return "sha256-" + base64.b64encode(digest).decode("ascii")


def _check_view(r: CheckResult, lang: str, detail: str) -> dict:
    """What the template needs for one check: plain strings and lists, nothing to compute."""
    mark, colour = MARKS.get(r.outcome, ("?", "red"))
    view = {
        "id": r.id, "title": text(f"check.{r.id}.title", lang), "passed": r.passed,
        "outcome": r.outcome, "outcome_label": text(f"outcome.{r.outcome}", lang),
        "mark": mark, "tone": "ok" if r.passed else ("warn" if colour == "yellow" else "bad"),
        "points": text("ui.points", lang, score=r.score, points=r.points),
        "runs": (text("html.runs", lang, passed=sum(o == "passed" for o in r.runs),
                      runs=len(r.runs)) if r.runs else None),
        "unstable": r.unstable,
        "why": text(f"check.{r.id}.why", lang),
        "hint": text(f"check.{r.id}.hint", lang) if detail == "full" and not r.passed else None,
        "problem": None, "sentence": None, "svg": "", "steps": [], "returned": None, "row": None,
    }
    if r.passed:
        return view
    result = r.result.to_json() if r.result else {}
    problem = problem_line(result, lang)
    if detail == "none":
        view["problem"] = problem if result.get("outcome") != "failed" else None
        return view
    view["problem"] = problem
    view["sentence"] = detail_sentence(result, lang)
    events = result.get("timeline") or []
    if events and result.get("outcome") != "not_implemented":
        view["svg"] = timeline_svg.build(events, lang, raised=result.get("kind") == "raised")
        view["steps"] = _steps(events, lang)
    if "came_back" in result and result.get("kind") == "mismatch":
        view["returned"] = {"came_back": result["came_back"],
                          "expected": result["expected"] if detail == "full" else None}
    if result.get("row"):
        view["row"] = _row_view(result["row"], lang, with_expected=detail == "full")
    return view


def _steps(events: list[dict], lang: str) -> list[dict]:
    failing = failing_step(events)
    return [{"time": text("html.svg.ms", lang, t=e["t"]) if isinstance(e.get("t"), int) else "",
             "text": event_text(e, lang), "failing": i == failing}
            for i, e in enumerate(events)]


def _row_view(row: dict, lang: str, *, with_expected: bool) -> dict:
    """The job's row as table lines: column, current, expected, and whether they differ."""
    missing = text("ui.no-row", lang)
    current = row.get("current") or {c: missing for c in COLUMNS}
    expected = row.get("expected") or {c: missing for c in COLUMNS}
    lines = []
    for column in COLUMNS:
        now, want = value(current.get(column)), value(expected.get(column))
        lines.append({"column": column, "current": now,
                      "expected": want if with_expected else None,
                      "differs": with_expected and now != want})
    return {"heading": text("ui.row-of", lang, job=row.get("job")), "lines": lines,
            "with_expected": with_expected, "any_differs": any(l["differs"] for l in lines)}
