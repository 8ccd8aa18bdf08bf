"""Which hints a report shows, and the words around them: the instructor's policy (grader.config:
`hints = "always" | "after-runs" | "never"`, `hint_after`), what the student asked for
(`--hints`, `python -m grader hint ID`) and the local run history (grader.report.history).

A view (grader.report.view) carries the hint that fits each failure, or none; `apply` then
withholds those the policy does not show yet, so every writer (terminal, results.json, HTML,
...) shows the same hints. The detail level comes first: "actual-only" and "none" never have a
hint to show.

- `always`: every fitting hint;
- `never`: none (and `--hints` cannot bring them back);
- `after-runs`: the hints asked for (`--hints`: all of them), and the hint of each check that
  has failed on its rule `after` local runs in a row (this one included). Without a history
  (`--no-history`, the instructor's modes) no run counts, so only `--hints` shows them.
"""

from __future__ import annotations

from grader.checkdef import all_checks
from grader.results import CheckResult
from . import history
from .history import Comparison
from .messages import text
from .view import ReportView, fitting_hint

#: How many check ids a progress line names before "and N more".
SHOWN_IDS = 5


def apply(report: ReportView, policy: str, *, after: int, asked: bool = False,
          streaks: dict[str, int] | None = None, counted: bool = True) -> None:
    """Withhold the hints of `report` that `policy` does not show (see the module docstring);
    `streaks`: failing runs in a row per check, this run included; `counted`: the run has a
    local history that counts them (the note then says when a hint shows by itself)."""
    streaks = streaks or {}
    withheld = shown = False
    report.hints_asked = asked and policy != "never"
    for check in report.checks:
        if check.hint is None:
            continue
        runs = streaks.get(check.id, 0)
        if policy == "always" or (policy == "after-runs" and asked):
            shown = True
            continue
        if policy == "after-runs" and counted and runs >= after:
            check.hint_runs = runs
            shown = True
            continue
        check.hint, check.hint_withheld = None, True
        withheld = True
    shown = shown or any(cause.hint for cause in report.causes)
    if withheld and policy == "after-runs":
        key = ("hints.withheld-some" if shown else "hints.withheld") if counted \
            else "hints.withheld-no-history"
        report.hint_note = text(key, report.lang, after=after)


def progress_line(comparison: Comparison, report: ReportView) -> str:
    """One line: this run against the last local one (grader.report.history.compare)."""
    lang = report.lang
    if comparison.first:
        return text("progress.first", lang)
    if comparison.common == 0:
        return text("progress.nothing-common", lang)
    delta = f"{comparison.delta:+d}"
    if comparison.earlier:  # the last run was a -k run: compared with the one before it
        points = (text("progress.same-earlier", lang, now=comparison.now,
                       count=comparison.common, max_score=report.max_score)
                  if comparison.delta == 0 else
                  text("progress.points-earlier", lang, delta=delta, count=comparison.common,
                       before=comparison.before, now=comparison.now,
                       max_score=report.max_score))
    elif comparison.whole:
        points = (text("progress.same-whole", lang, now=comparison.now,
                       max_score=report.max_score) if comparison.delta == 0 else
                  text("progress.points-whole", lang, delta=delta, before=comparison.before,
                       now=comparison.now, max_score=report.max_score))
    else:
        points = text("progress.points-common", lang, delta=delta, count=comparison.common)
    parts = []
    if comparison.fixed:
        parts.append(text("progress.fixed", lang, ids=_ids(comparison.fixed, lang)))
    if comparison.broken:
        parts.append(text("progress.broken", lang, ids=_ids(comparison.broken, lang)))
    changes = (text("progress.separator", lang).join(parts) if parts
               else text("progress.unchanged", lang))
    return text("progress.line", lang, points=points, changes=changes)


def _ids(ids: list[str], lang: str) -> str:
    shown = ", ".join(ids[:SHOWN_IDS])
    if len(ids) <= SHOWN_IDS:
        return shown
    return text("progress.more", lang, ids=shown, more=len(ids) - SHOWN_IDS)


def settle(report: ReportView, results: list[CheckResult], *, impl: str, policy: str, after: int,
           asked: bool, use_history: bool) -> None:
    """A grade's hints and progress: read the target's local history (unless `use_history` is
    off), count this run in, write it back, set the report's progress line, then `apply` the
    hint policy. A history that cannot be read or written is as good as none. The checks the
    report hides (`ReportView.hidden`) are neither counted nor named: a progress line must not
    tell their verdicts."""
    hidden = {c.id for c in report.hidden}
    results = [r for r in results if r.id not in hidden]
    rule = {r.id for r in results if not r.passed and r.result is not None
            and fitting_hint(r.id, r.result, report.lang) is not None}
    streaks: dict[str, int] = {}
    where = history.location(impl) if use_history and not history.disabled() else None
    if where is not None:
        past = history.History.load(*where)
        comparison = past.record(history.states(results, rule), set(all_checks()))
        past.save()
        streaks = past.streaks()
        report.progress = progress_line(comparison, report)
    apply(report, policy, after=after, asked=asked, streaks=streaks,
          counted=where is not None)
    if asked and policy == "never":
        report.hint_note = text("hints.off", report.lang)
