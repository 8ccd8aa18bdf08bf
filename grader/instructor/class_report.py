"""The class report (HTML, self-contained: inline CSS, no scripts, no external files): the
failure rate of every check as a bar, most failed first, so the instructor sees which
misconception is most common; then the submissions that did not grade, and why."""

from __future__ import annotations

from pathlib import Path

import jinja2

from grader.checkdef import CheckInfo
from .gradebook import Row, check_stats, summary
from grader.report.files import write_atomically
from grader.report.messages import text

TEMPLATES = Path(__file__).with_name("templates")


def render(rows: list[Row], check_ids: list[str], declared: dict[str, CheckInfo],
           lang: str) -> str:
    env = jinja2.Environment(loader=jinja2.FileSystemLoader(TEMPLATES),
                             autoescape=jinja2.select_autoescape(["html"]),
                             trim_blocks=True, lstrip_blocks=True)
    template = env.get_template("class_report.html")
    return template.render(
        lang=lang,
        t=lambda key, **params: text(key, lang, **params),
        stats=check_stats(rows, check_ids, declared),
        summary=summary(rows),
        not_graded=[r for r in rows if not r.graded],
        never_ran=[r for r in rows if r.graded and not r.ran],
    )


def write(path: Path, rows: list[Row], check_ids: list[str], declared: dict[str, CheckInfo],
          lang: str) -> None:
    write_atomically(path, render(rows, check_ids, declared, lang))
