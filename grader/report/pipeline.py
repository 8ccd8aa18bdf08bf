"""A grade's report, made once for every way of grading: the results of a run in words (the
view, cut to the detail level asked for), then the hints the policy shows (the instructor's
config, `--hints`, the local run history). `python -m grader`, `watch` and `python -m grader
report` all make their report here, so that what a report file holds never depends on which
command wrote it (before, `watch --json` wrote the hints a config's `hints = "never"` keeps
back)."""

from __future__ import annotations

from grader.checkdef import withheld
from grader.config import Config
from grader.results import CheckResult

from . import hints, history
from .causes import STUB_SOURCE_BYTES, stub_lines
from .view import STORIES, ReportView, report_view


def report_of(results: list[CheckResult], *, lang: str, target: str, impl: str, config: Config,
              seed: int | None, drawn: bool, duration: float = 0.0, detail: str | None = None,
              tell_all: bool = False, asked_hints: bool = False,
              use_history: bool = True) -> ReportView:
    """The report of `results` (graded from `impl`, shown as `target`): `detail` (default: the
    config's), every story in full with `tell_all`, hints as `config`'s policy and `asked_hints`
    say, counted in the local history of `impl` when `use_history`; what students see of each
check as `config` says (its `show`: grader.report.view.report_view's `levels`)."""
    report = report_view(results, lang, target=target, detail=detail or config.detail,
                         duration=duration, seed=seed, drawn=drawn, withheld=withheld(),
                         told=None if tell_all else STORIES,
                         levels=config.levels(r.id for r in results))
    hints.settle(report, results, impl=impl, policy=config.hints, after=config.hint_after,
                 asked=asked_hints, use_history=use_history)
    show_stubs(report, impl)
    return report.seal()  # a verdict check shows no hint, whatever the policy


def show_stubs(report: ReportView, impl: str) -> None:
    """Under each cause "not implemented yet", the stub's line of code and a caret (read from
    the target's file, parsed and never run: grader.report.causes.stub_lines), as a load error
    shows its own."""
    stubs = [c for c in report.causes if c.kind == "not-implemented" and not c.source]
    path = history.target_file(impl) if stubs else None
    if path is None:
        return
    try:
        with open(path, "rb") as f:
            source = f.read(STUB_SOURCE_BYTES + 1)
    except OSError:
        return
    if len(source) > STUB_SOURCE_BYTES:
        return
    for cause in stubs:
        cause.source = stub_lines(source.decode("utf-8", "replace"), cause.function or "",
                                  report.target, report.lang)
