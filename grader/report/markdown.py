"""A Markdown summary (`python -m grader --markdown PATH`), written for a GitHub Actions job
summary (the workflow appends it to $GITHUB_STEP_SUMMARY) but plain Markdown anywhere.

The header and score line (and, for a grade in a world drawn from a seed, which seed replays
it); the shared causes ("Fix this first": the mistake, its line of code and caret, the checks it
makes fail); the failing checks as a list, each with its id, title and the first line of its
failure ("See: <the mistake>" for a check a cause explains); then the whole text of each failure
no cause explains (as the terminal shows it, without colours) in a fenced block. Student text is
escaped in the list (no markup, no HTML) and fenced by more
backticks than it holds in the blocks.
"""

from __future__ import annotations

import html
import re

from .messages import text
from .render import check_text, first_line
from .sentences import plain
from .view import ReportView

#: Markdown punctuation that could start markup inside a line.
MARKUP = re.compile(r"([\\`*_\[\]{}|~#!])")


def inline(s: str) -> str:
    """`s` as literal text inside a Markdown line."""
    return MARKUP.sub(r"\\\1", html.escape(plain(s), quote=False))


def fenced(s: str) -> str:
    """`s` in a fenced code block no line of it can close."""
    longest = max((len(run) for run in re.findall(r"`+", s)), default=0)
    fence = "`" * max(3, longest + 1)
    return f"{fence}text\n{s}\n{fence}"


def from_view(report: ReportView) -> str:
    """The summary (final newline)."""
    lang = report.lang
    score = text("ui.score", lang, score=report.score, max_score=report.max_score)
    summary = text("ui.summary", lang, passed=report.passed, failed=report.failed)
    lines = [f"## {inline(text('ui.header', lang, target=report.target))}", "",
             f"**{inline(score)}** — {inline(summary)}", ""]
    if report.hidden_line:  # how many checks are hidden until published, never which
        lines += [inline(report.hidden_line), ""]
    if report.drawn:  # a grade in a world of its own says which, to replay it
        lines += [inline(text("ui.drawn-world", lang, seed=report.seed)), ""]
    if report.unstable:
        lines += [inline(text("ui.unstable-summary", lang, ids=", ".join(report.unstable))), ""]
    failing = [c for c in report.checks if not c.passed]
    if not failing:
        done = [] if report.hidden else [inline(text("ui.all-passed", lang))]
        return "\n".join(lines + done).rstrip("\n") + "\n"
    for cause in report.causes:
        lines += [f"### ▶ {inline(cause.heading)}", "", fenced(plain("\n".join(
            [cause.sentence, *["    " + line for line in cause.source]]))),
                  "", inline(cause.affects), ""]
    lines += [f"### {inline(text('formats.failing-checks', lang))}", ""]
    lines += [f"- `{c.id}` {inline(c.title)}: {inline(first_line(c, lang))}" for c in failing]
    for c in failing:
        if c.cause is None:
            lines += ["", f"#### `{c.id}` {inline(c.title)}", "",
                      fenced(plain(check_text(c, lang)))]
    return "\n".join(lines) + "\n"
