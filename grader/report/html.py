"""The HTML report (`python -m grader --html PATH`): one self-contained file a student opens.

Score at the top, then the shared causes ("fix this first": the mistake and the checks it
makes fail, grader.report.causes.root_causes; a list longer than SHOWN_IDS starts folded) and the
failures no cause explains ("to look at first"), numbered in lesson order, the first SHOWN_IDS
of them and how many more, as the terminal report leads with the causes, then the first
failure and how many more; then one `<details>` per check: failures
open, passes collapsed; a check a shared cause explains is one line (title, points, a link to
its cause). A failure shows, as far as `detail` allows, what went wrong (the statements a
function ran, when the sentence lists them, as a monospace block), the timeline (an SVG
sequence diagram from `grader.report.timeline_svg` and the same steps as text), what came back
vs what was expected, the row current vs expected with differing columns marked (≠ and
colour), why it matters and a hint.

Everything is inline (CSS, SVG, one small script that opens every failing check before printing);
a Content-Security-Policy forbids any network access and any other script. Printed, the report
reads as a student hands it in (report.css, `@media print`): the score and what to fix first,
then the failures in full, then the checks a cause explains and the passed checks, one line
each; badges keep their words on bordered chips, for a print without background graphics.
To a screen reader each diagram is one image named after its check (its marks, whose tooltips
are the steps' sentences, are hidden: the list of steps, named too, reads them), a glyph drawn
for the eye (▸, ▶, ✓, ⚠) is not read, and a page in another language than English marks its
code, SQL, ids and values lang="en". The templates in
grader/report/templates/ run with autoescape on: owners, errors and values come from student code.
Every word comes from the view (`grader.report.view`) that the terminal report and results.json
are written from too, so all three say the same thing.

`detail`: "full" (everything), "actual-only" (no expected value, no expected column, no hint;
the current row is shown unmarked), "none" (title, outcome and why; plus the one-line problem
for an outcome other than 'failed', e.g. what raised, as the terminal report does).
"""

from __future__ import annotations

import base64
import hashlib
from pathlib import Path

import jinja2

from grader.results import CheckResult
from .messages import text
from .causes import SHOWN_IDS
from .view import ReportView, report_view
from . import timeline_svg

TEMPLATES = Path(__file__).with_name("templates")


def write(path: str | Path, results: list[CheckResult], lang: str, *, target: str,
          detail: str = "full") -> None:
    Path(path).write_text(render(results, lang, target=target, detail=detail), encoding="utf-8")


def render(results: list[CheckResult], lang: str, *, target: str, detail: str = "full") -> str:
    """The page for `results` (the view built here; `from_view` when there is one)."""
    return from_view(report_view(results, lang, target=target, detail=detail))


def from_view(report: ReportView) -> str:
    """The page: the template reads the view's checks, their timelines drawn by `svg`."""
    lang = report.lang
    script = (TEMPLATES / "print.js").read_text(encoding="utf-8")
    return _environment().get_template("report.html.j2").render(
        lang=lang, target=report.target, checks=report.checks, score=report.score,
        max_score=report.max_score, passed=report.passed, failed=report.failed,
        causes=report.causes, lead=report.lead, uncaused=report.uncaused, shown_ids=SHOWN_IDS,
        hidden_line=report.hidden_line,
        percent=round(100 * report.score / report.max_score) if report.max_score else 0,
        css=(TEMPLATES / "report.css").read_text(encoding="utf-8"),
        script=script, script_hash=_csp_hash(script),
        t=lambda key, **params: text(key, lang, **params), blocks=blocks,
        svg=lambda c: timeline_svg.build(
            c.events, lang, raised=c.raised,
            expected=c.returned.expected if c.returned else None,
            check=c.title) if c.events else "",
    )


def blocks(sentence: str | None) -> list[tuple[str, str]]:
    """A check's sentence as ("prose", text) and ("code", text) blocks: its indented lines (the
    statements a function ran, one a line: grader.checks.txshape.listing) are code, set apart
    in a regular monospace block rather than in the sentence's bold proportional type."""
    found: list[tuple[str, list[str]]] = []
    for line in sentence.split("\n") if sentence else ():
        kind = "code" if line.startswith("  ") else "prose"
        if found and found[-1][0] == kind:
            found[-1][1].append(line)
        else:
            found.append((kind, [line]))
    return [(kind, "\n".join(lines)) for kind, lines in found]


def _environment() -> jinja2.Environment:
    return jinja2.Environment(loader=jinja2.FileSystemLoader(TEMPLATES), autoescape=True,
                              undefined=jinja2.StrictUndefined, trim_blocks=True,
                              lstrip_blocks=True, keep_trailing_newline=True)


def _csp_hash(script: str) -> str:
    digest = hashlib.sha256(script.encode("utf-8")).digest()
    return "sha256-" + base64.b64encode(digest).decode("ascii")
