"""What a report says, before any format: one `CheckView` per check result and a `ReportView`
of the whole grading, built once and read by every writer (terminal, HTML, results.json).

Every part is already in words (the message catalogue, in the report's language) and already
cut to the `detail` level: "full" shows everything; "actual-only" what the code did and produced
but no expected value, expected row or hint; "none" only the why, after the one-line problem
when the code crashed, hung or is missing (an outcome other than 'failed'). A writer only lays
the parts out.

Also here: the sentences the views are made of (a timeline event, the one-line problem, the
check's own sentence), shared with the SVG timeline and the quiz.

Root causes (`root_causes`): when one mistake makes several checks fail, the reports lead with
that mistake once ("fix this first") and show each check it affects as one line. A failure
has a cause when it is one of:

- not implemented: the same function raises NotImplementedError;
- a load error (syntax error, import error, missing function, no such file): the same
  kind and the same facts, i.e. every check of the run;
- a wrong return type (Kind.WRONG_TYPE, or WRONG_FIELD_TYPE and the same field): the same
  function returning the same type (whatever the value);
- the same exception (`Type: message`) raised at the same `where` (file:line);
- the same function opening a connection of its own to the check's database (Kind.OWN_CONNECTION;
  worded by its first check's problem);
- a timeout during a call of the same function (the op of the step that was running), or
  while importing the target;
- a mistake the check saw the code make before it failed (`Failure.cause`, a `results.Cause`:
  send called inside a transaction, a call that changed its connection's isolation_level, a row
  read while a call's transaction was left open: `cause:function` names the function too),
  whatever the check's own failure is: worded by `CAUSE`.

A cause is *shared* when at least `SHARED` (2) checks have it; a single check keeps its full
block. A cause's block names its count and its first `SHOWN_IDS` (8) check ids; every check it
affects still has its own one line (title, points, "see above"). Only failures whose one-line
problem the detail level shows are grouped (with "none" a wrong type, an outcome 'failed', is
not shown, so it is not grouped either), and those with a `Failure.cause` at any level but
"none". A wrong type and a timeout are worded by `CAUSE`
(without the value or the step, which differ from check to check); the others by the
problem of their first check, which every check of the cause words the same way. Causes are ordered
by how many checks they affect (most first), ties by the lesson order of their first check.
Other failures (a logic error) keep their full block. Without any shared cause the report
opens with the first failing check in lesson order and how many more fail.

Stories (`ReportView.stories`): what the report tells, in the order it recommends: the causes
(most checks first), then the failures no cause explains, in lesson order. The terminal tells the
first `told` (`STORIES`, 3) in full and each of the others in one line; `--all` (told None), the
HTML report and the results files tell every one. When the causes explain every check and each
stops the code before any rule is reached (it does not load, nothing it calls is implemented, its
import hangs: `ReportView.whole`), the terminal report is short: the causes, with the line of
code and a caret (`Cause.source`), and the score.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from lab.store import COLUMNS

from grader.checkdef import REGISTRY
from grader.config import DETAILS
from grader.results import Cause as ResultCause
from grader.results import CheckResult, Failure, Kind, Outcome, RowDiff
from .wrapping import display_width
from .messages import (CAUSE, CHECK_HINT, CHECK_TITLE, CHECK_WHY, DETAIL, DETAIL_HINT, KIND, LIMIT,
                       OUTCOME, ROLE_NAMES, TIMELINE, WRONG_TYPE_HINT, WRONG_VALUE_HINT, text)

MARKS = {Outcome.PASSED: "✓", Outcome.FAILED: "✗", Outcome.ERRORED: "!",
         Outcome.TIMED_OUT: "⏱", Outcome.NOT_IMPLEMENTED: "·", Outcome.RESOURCE_LIMIT: "!"}
#: ok / warn (hung or not written yet) / bad
TONES = {Outcome.PASSED: "ok", Outcome.TIMED_OUT: "warn", Outcome.NOT_IMPLEMENTED: "warn"}


@dataclass
class Step:
    """One event of the timeline: its logical time (ms, or None) and what happened."""
    t: int | None
    text: str
    failing: bool  # the step the failure is about (the last call into the target)
    #: what the call printed, line by line (sanitised, at most PRINTED_LINES, then a line that
    #: says how much more there was): students debug by printing
    printed: list[str] = field(default_factory=list)


#: Lines of what one call printed that a step shows.
PRINTED_LINES = 12


@dataclass
class RowLine:
    column: str
    current: str
    expected: str | None  # None when expected values are not shown
    differs: bool


@dataclass
class RowView:
    """The job's row, current vs expected, as table lines."""
    heading: str
    lines: list[RowLine]
    with_expected: bool

    @property
    def any_differs(self) -> bool:
        return any(line.differs for line in self.lines)


@dataclass
class Returned:
    came_back: str
    expected: str | None  # None when expected values are not shown


@dataclass
class CheckView:
    """One check's result in words; parts a detail level hides are None or empty."""
    id: str
    title: str
    outcome: str
    outcome_label: str
    passed: bool
    mark: str
    tone: str
    points: str                   # "3/4 pt"
    score: int
    max_score: int
    runs: list[str]               # each run's outcome with --repeat (empty for one run)
    seeds: list[int]              # each run's world's seed with --sweep (else empty)
    failed_seeds: list[int]       # with --sweep: the worlds' seeds where it did not pass
    passed_runs: int
    failed_runs: list[int]        # 1-based numbers of the runs that did not pass
    unstable: bool
    stability: str | None         # "passed k/N" (and the failed runs when unstable)
    why: str
    kind: str | None = None       # the failure's kind (grader.results.Kind), None when passed
    oracle: str | None = None     # what judged, when not the check's own expectations
    duration: float = 0.0         # seconds the check took
    hint: str | None = None       # the hint that fits this failure, when it is shown
    hint_withheld: bool = False   # a hint fits, but the hint policy does not show it (yet)
    hint_runs: int | None = None  # shown by itself: the check failed this many runs in a row
    problem: str | None = None    # what went wrong with the code itself (raised, hung, ...)
    sentence: str | None = None   # the check's own sentence about this failure
    events: list[dict] = field(default_factory=list)  # the timeline, for drawing it
    raised: bool = False          # the timeline ends in a raise
    steps: list[Step] = field(default_factory=list)
    returned: Returned | None = None
    row: RowView | None = None
    cause: Cause | None = None    # the shared cause it failed for (shown once, above)
    #: what students see of it (grader.config.LEVELS): full, verdict (the verdict and a
    #: one-line message: `seal`), hidden (not in ReportView.checks: in ReportView.hidden)
    level: str = "full"


@dataclass
class Cause:
    """One mistake that makes several checks fail: what it is, in words, and the checks."""
    number: int                   # 1-based, in the order the reports show causes
    kind: str                     # not-implemented, a Kind.LOAD_ERRORS, wrong-type,
    #                               wrong-field-type, raised, own-connection, timed-out,
    #                               timed-out-import, or a results.Cause (send-in-transaction)
    function: str | None
    sentence: str                 # the mistake, in words
    checks: list[CheckView]       # the checks it makes fail, in lesson order
    type: str | None = None       # the wrong type returned (wrong-type, wrong-field-type)
    error: str | None = None      # the exception (raised)
    where: str | None = None      # file:line of the raise (raised)
    heading: str = ""             # "Fix this first (1/2): one cause makes 22 checks fail"
    affects: str = ""             # "Checks it affects: id, id, ..."
    see_above: str = ""           # what an affected check's one line says instead of its block
    see: str = ""                 # what an affected check says in a results file: "See: ..."
    #: the line of the code under grade it is about and a caret under the spot (a syntax or
    #: import error), maybe after the file and line (an import error); empty when unknown
    source: list[str] = field(default_factory=list)

    @property
    def ids(self) -> list[str]:
        return [c.id for c in self.checks]

    @property
    def hint(self) -> str | None:
        """The hint every check of the cause shows (a wrong type's: the function's type hint),
        read when a writer asks: the hint policy (grader.report.hints) settles each check's
        after the view is built. None when they differ or none is shown."""
        hints = {c.hint for c in self.checks}
        return hints.pop() if len(hints) == 1 else None

    def to_json(self) -> dict:
        """Plain data for results.json's extra_data."""
        data = {"kind": self.kind, "function": self.function, "checks": len(self.checks)}
        data.update({k: v for k, v in (("type", self.type), ("error", self.error),
                                       ("where", self.where)) if v is not None})
        return data


@dataclass
class ReportView:
    """The whole grading: the checks in order, and the totals every report shows."""
    target: str
    lang: str
    detail: str
    checks: list[CheckView]
    duration: float = 0.0
    seed: int | None = None       # what the checks' worlds and the random timelines were drawn
    # from (--replay SEED)
    #: the seed is not the lesson's: times, names and ids are not the lesson's (the report says
    #: so, and how to replay it)
    drawn: bool = False
    #: checks this copy of the grader does not hold ({"id", "points"}): they run only where
    #: grades are recorded (grader.checkdef.withheld)
    withheld: list[dict] = field(default_factory=list)
    #: the shared causes of failures, most checks first (see the module docstring)
    causes: list[Cause] = field(default_factory=list)
    #: how to see the hints the policy withheld (grader.report.hints), or None
    hint_note: str | None = None
    #: the student asked for the hints (--hints): a failure told in one line shows its hint too
    hints_asked: bool = False
    #: this run against the last local one (grader.report.history), or None
    progress: str | None = None
    #: how many stories the terminal tells in full (the rest one line each); None: every one
    told: int | None = None
    #: the checks students do not see until the results are published (the config's `show`),
    #: whole: counted in the recorded score, written only where the platform hides them itself
    #: (Gradescope's results.json, with their visibility); every other writer says only how
    #: many there are and their points (`hidden_line`)
    hidden: list[CheckView] = field(default_factory=list)
    #: every check's id in the order of the results (lesson order), hidden ones included
    order: list[str] = field(default_factory=list)

    @property
    def every_check(self) -> list[CheckView]:
        """The checks shown and the hidden ones, in the results' order (the recorded grade's)."""
        if not self.hidden:
            return list(self.checks)
        rank = {cid: i for i, cid in enumerate(self.order)}
        return sorted([*self.checks, *self.hidden], key=lambda c: rank.get(c.id, len(rank)))

    @property
    def recorded_score(self) -> int:
        """The grade: every check's points, the hidden ones' too."""
        return self.score + sum(c.score for c in self.hidden)

    @property
    def recorded_max_score(self) -> int:
        return self.max_score + sum(c.max_score for c in self.hidden)

    @property
    def hidden_ids(self) -> frozenset[str]:
        """The checks students do not see: an exit status must not tell their verdicts (empty
        in the instructor's copy, which hides nothing)."""
        return frozenset(c.id for c in self.hidden)

    @property
    def hidden_line(self) -> str | None:
        """What a student's report says of the hidden checks: how many, their points, and that
        they count (None when there is none)."""
        if not self.hidden:
            return None
        return text("ui.hidden-checks", self.lang, count=len(self.hidden),
                    points=sum(c.max_score for c in self.hidden))

    def seal(self) -> "ReportView":
        """Cut every check shown as a verdict to its verdict and one-line message (`message_line`,
        read before the cut): no timeline, values, row, hint or printed output. Called once the
        view is built and again after the hint policy (grader.report.hints) had its say."""
        for c in self.checks:
            if c.level != "verdict" or c.passed:
                continue
            c.problem = message_line(c, self.lang)
            c.sentence, c.steps, c.events, c.raised = None, [], [], False
            c.returned, c.row = None, None
            c.hint, c.hint_withheld, c.hint_runs = None, False, None
        return self

    @property
    def stories(self) -> list[Cause | CheckView]:
        """What the report tells, in the order it recommends: the causes, then the failures no
        cause explains (lesson order)."""
        return [*self.causes, *self.uncaused]

    def in_full(self, story: Cause | CheckView) -> bool:
        """Whether the terminal tells `story` in full (else in one line)."""
        if self.told is None:
            return True
        return any(s is story for s in self.stories[:self.told])

    @property
    def untold(self) -> int:
        """How many stories the terminal tells in one line only."""
        return 0 if self.told is None else max(0, len(self.stories) - self.told)

    @property
    def whole(self) -> bool:
        """The causes explain every check, and each stops the code before any rule is
        reached (`BLOCKING`): the short report."""
        return (bool(self.checks) and all(c.cause is not None for c in self.checks)
                and all(cause.kind in BLOCKING for cause in self.causes))

    @property
    def uncaused(self) -> list[CheckView]:
        """The failed checks that no shared cause explains, in lesson order."""
        return [c for c in self.checks if not c.passed and c.cause is None]

    @property
    def lead(self) -> str | None:
        """The sentence that opens the failures no shared cause explains: the first one in
        lesson order and how many more (None when there is none)."""
        rest = self.uncaused
        if not rest:
            return None
        first = rest[0]
        if self.causes:
            return text("ui.other-failures", self.lang, count=len(rest), title=first.title,
                        id=first.id)
        if len(rest) == 1:
            return text("ui.only-failure", self.lang, title=first.title, id=first.id)
        return text("ui.first-failure", self.lang, title=first.title, id=first.id,
                    more=len(rest) - 1)

    @property
    def score(self) -> int:
        return sum(c.score for c in self.checks)

    @property
    def max_score(self) -> int:
        return sum(c.max_score for c in self.checks)

    @property
    def passed(self) -> int:
        return sum(c.passed for c in self.checks)

    @property
    def failed(self) -> int:
        return len(self.checks) - self.passed

    @property
    def unstable(self) -> list[str]:
        return [c.id for c in self.checks if c.unstable]

    @property
    def unloadable(self) -> bool:
        """The target could not be loaded at all (it does not compile, does not import or
        lacks a function): every check failed over that, none over a rule."""
        return bool(self.checks) and all(c.kind in Kind.LOAD_ERRORS for c in self.checks)

    @property
    def repeat(self) -> int:
        return max((len(c.runs) for c in self.checks), default=0) or 1


def report_view(results: list[CheckResult], lang: str, *, target: str, detail: str = "full",
                duration: float = 0.0, seed: int | None = None, drawn: bool = False,
                withheld: list[dict] | None = None, told: int | None = None,
                levels: dict[str, str] | None = None) -> ReportView:
    """The view of `results`; `duration` (seconds) is what grading took, `seed` what its
    worlds and random timelines were drawn from (`drawn`: not the lesson's seed), `withheld`
    the checks this copy does not hold, `told` how many stories the terminal tells in full
    (None: every one; a grade gives `STORIES` unless --all), `levels` what students see of
    each check that is not shown in full (grader.config.Config.levels): a hidden check goes to
    `ReportView.hidden` (no cause names it), a verdict check is `seal`ed."""
    if detail not in DETAILS:
        raise ValueError(f"detail must be one of {DETAILS}, not {detail!r}")
    levels = levels or {}
    shown = [r for r in results if levels.get(r.id) != "hidden"]
    views = [check_view(r, lang, detail) for r in shown]
    for view in views:
        view.level = levels.get(view.id, "full")
    hidden = [check_view(r, lang, detail) for r in results if levels.get(r.id) == "hidden"]
    for view in hidden:
        view.level = "hidden"
    return ReportView(target, lang, detail, views, duration, seed, drawn, list(withheld or ()),
                      root_causes(shown, views, lang, detail), told=told, hidden=hidden,
                      order=[r.id for r in results]).seal()


#: How many checks a cause must make fail to be shown once for all of them.
SHARED = 2
#: How many of a cause's check ids its block names (every check still has its own line).
SHOWN_IDS = 8
#: How many stories (causes, then failures of their own) the terminal tells in full.
STORIES = 3
#: Causes that stop the code before any rule is reached: when they explain every check, the
#: terminal report is short (ReportView.whole).
#: Characters the calls of a check printed before the call that timed out, from which the timeout
#: says that printing takes time rather than guessing an endless loop (issue 39).
PRINTED_A_LOT = 100_000

#: Causes under which a row that looks unchanged is a change not committed (a transaction open on
#: the call's connection), not a wrong row: "the value is right, the row is wrong" would blame it.
UNCOMMITTED_CAUSES = (ResultCause.ISOLATION_LEVEL_CHANGED, ResultCause.TRANSACTION_LEFT_OPEN)

BLOCKING = (*Kind.LOAD_ERRORS, "not-implemented", "timed-out-import", "exited-import")


def cause_key(failure: Failure) -> tuple | None:
    """What makes two failures the same mistake (see the module docstring); None: its own."""
    kind = failure.kind
    if failure.cause:  # a mistake the check saw, whatever failed after it (and its function)
        kind, function = ResultCause.split(failure.cause)
        # one mistake, whichever call met it first in each check (work_once runs the claim or
        # finish that made it): one cause, worded by its first check's function
        return (kind, None) if kind in UNCOMMITTED_CAUSES else (kind, function)
    if failure.outcome == Outcome.NOT_IMPLEMENTED or kind == Kind.NOT_IMPLEMENTED:
        return ("not-implemented", failure.function)
    if kind in Kind.LOAD_ERRORS:
        return ("load-error", kind, repr(sorted((failure.params or {}).items())))
    if kind == Kind.WRONG_TYPE and failure.type:
        return ("wrong-type", failure.function, failure.type)
    if kind == Kind.WRONG_FIELD_TYPE and failure.type:
        return ("wrong-field-type", failure.function, failure.type,
                (failure.params or {}).get("field"))
    if kind == Kind.RAISED and failure.error:
        return ("raised", failure.function, failure.error, failure.where)
    if kind == Kind.OWN_CONNECTION:
        return ("own-connection", failure.function)
    if kind == Kind.NOT_GRADED:  # the same hang as the checks that waited for it
        return ("timed-out", failure.function)
    if kind == Kind.EXITED and isinstance(failure.step, dict) \
            and failure.step.get("op") == "import":  # the import itself ends the process
        return ("exited-import", None)
    if failure.outcome == Outcome.TIMED_OUT and isinstance(failure.step, dict):
        op = failure.step.get("op")
        if op in ("claim", "finish", "work_once"):
            return ("timed-out", op)
        if op == "import":
            return ("timed-out-import", None)
    return None


def cause_sentence(key: tuple, failure: Failure, lang: str) -> str:
    """The mistake in words: the failure's own problem when every check says it the same way,
    else a sentence without what differs from check to check (the value, the step)."""
    kind = key[0]
    if kind in ("not-implemented", "load-error", "raised", "exited-import"):
        return problem_line(failure, lang) or ""
    if kind == "own-connection":  # the same mistake on each check's own database file
        return text(CAUSE(kind), lang, function=key[1])
    if kind == "timed-out-import":
        return text(CAUSE(kind), lang)
    if failure.kind == Kind.NOT_GRADED:  # found by the probe before the checks
        return text(CAUSE("not-graded"), lang, function=key[1],
                    timeout=_seconds(failure.timeout))
    function = key[1] if key[1] or not failure.cause else ResultCause.split(failure.cause)[1]
    params = {**(failure.params or {}), "function": function, "type": failure.type,
              "wanted": failure.wanted}
    return text(CAUSE(kind), lang, **params)


def root_causes(results: list[CheckResult], views: list[CheckView], lang: str,
                detail: str = "full") -> list[Cause]:
    """The shared causes of the failures in `results` (their views get `cause` set)."""
    groups: dict[tuple, list[tuple[CheckView, Failure]]] = {}
    for r, view in zip(results, views):
        if r.passed or r.result is None:
            continue
        failure = shown_failure(r.result, lang)
        # a failure is grouped when the report shows why it failed: its one-line problem, or
        # (a mistake the check saw, worded by the cause) anything but detail "none"
        if view.problem is None and not (failure.cause and detail != "none"):
            continue
        key = cause_key(failure)
        if key is not None:
            groups.setdefault(key, []).append((view, failure))
    shared = [(key, members) for key, members in groups.items() if len(members) >= SHARED]
    shared.sort(key=lambda item: -len(item[1]))  # stable: ties keep lesson order
    causes = []
    for number, (key, members) in enumerate(shared, 1):
        failure, load = members[0][1], key[0] == "load-error"
        function = key[1] if key[1] or not failure.cause else ResultCause.split(failure.cause)[1]
        cause = Cause(number, key[1] if load else key[0], None if load else function,
                      cause_sentence(key, failure, lang), [view for view, _ in members],
                      type=failure.type if key[0].startswith("wrong") else None,
                      error=failure.error if key[0] == "raised" else None,
                      where=failure.where if key[0] == "raised" else None,
                      source=source_lines(key[1], failure.params or {}, lang) if load else [])
        for view, _ in members:
            view.cause = cause
        causes.append(cause)
    for cause in causes:
        cause.heading = (text("ui.cause-heading", lang, number=cause.number,
                              total=len(causes), count=len(cause.checks)) if len(causes) > 1
                         else text("ui.cause-heading-one", lang, count=len(cause.checks)))
        shown = cause.ids[:SHOWN_IDS]
        cause.affects = (text("ui.cause-checks", lang, ids=", ".join(shown))
                         if len(shown) == len(cause.ids) else
                         text("ui.cause-checks-more", lang, ids=", ".join(shown),
                              more=len(cause.ids) - len(shown)))
        cause.see_above = text("ui.see-above", lang, number=cause.number)
        cause.see = text("ui.see-cause", lang, cause=cause.sentence.splitlines()[0]
                         if cause.sentence else "")
    return causes


def source_lines(kind: str, params: dict, lang: str) -> list[str]:
    """The line of code a load error is about, and a caret under the spot (`column` to
    `end_column`, 1-based; the whole line when unknown), its indentation taken off; for an
    import error the file and line first (a syntax error's sentence says them). Empty when
    the error did not say the line."""
    source = params.get("source")
    if not isinstance(source, str) or not source.strip():
        return []
    line = source.rstrip().replace("\t", " ")
    code = line.lstrip()
    cut = len(line) - len(code)
    start, end = params.get("column"), params.get("end_column")
    if isinstance(start, int) and start - 1 >= cut:
        start -= 1 + cut
        end = end - 1 - cut if isinstance(end, int) and end - 1 - cut > start else start + 1
        end = min(end, max(len(code), start + 1))
    else:
        start, end = 0, len(code)
    lines = [code, " " * start + "^" * (end - start)]
    if kind == Kind.IMPORT_ERROR and params.get("file"):
        lines.insert(0, text("ui.source-at", lang, file=params["file"], line=params.get("line")))
    return lines


#: The most of a target's file `stub_lines` reads (a file larger is not looked into).
STUB_SOURCE_BYTES = 1024 * 1024


def stub_lines(source: str, function: str, file: str, lang: str) -> list[str]:
    """Where `function` of the code under grade (its text `source`, shown as `file`) is still a
    stub: the file and line, the `raise NotImplementedError` statement in its body (indentation
    taken off) and a caret under it. Empty when the text does not parse or no such statement is
    found in a top-level `def function`. The text is parsed, never run."""
    import ast

    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return []
    for node in tree.body:
        if not (isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
                and node.name == function):
            continue
        for raised in ast.walk(node):
            if not isinstance(raised, ast.Raise) or raised.exc is None:
                continue
            exc = raised.exc.func if isinstance(raised.exc, ast.Call) else raised.exc
            if isinstance(exc, ast.Name) and exc.id == "NotImplementedError":
                line = source.splitlines()[raised.lineno - 1].rstrip().replace("\t", " ")
                code = line.lstrip()
                cut = len(line) - len(code)
                start = max(0, min(raised.col_offset - cut, len(code)))
                end = (raised.end_col_offset - cut if raised.end_lineno == raised.lineno
                       and raised.end_col_offset is not None else len(code))
                end = max(start + 1, min(end, len(code)))
                return [text("ui.source-at", lang, file=file, line=raised.lineno),
                        plain(code), " " * start + "^" * (end - start)]
    return []


def check_view(r: CheckResult, lang: str, detail: str = "full") -> CheckView:
    """One check result in words, cut to `detail`."""
    view = CheckView(
        id=r.id, title=text(CHECK_TITLE(r.id), lang), outcome=r.outcome,
        outcome_label=text(OUTCOME(r.outcome), lang), passed=r.passed,
        mark=MARKS.get(r.outcome, "?"), tone=TONES.get(r.outcome, "bad"),
        points=text("ui.points", lang, score=r.score, points=r.points), score=r.score,
        max_score=r.points, runs=r.runs, seeds=r.seeds, failed_seeds=r.failed_seeds,
        passed_runs=r.passed_runs,
        failed_runs=r.failed_run_numbers, unstable=r.unstable,
        stability=stability_line(r, lang) if r.runs else None,
        why=text(CHECK_WHY(r.id), lang), duration=r.duration,
        oracle=getattr(REGISTRY.get(r.id), "oracle", None))
    if not r.passed and r.result is not None:  # every writer shows student text plain
        failure = shown_failure(r.result, lang)
        if failure.names:  # a drawn world: the title and why name the workers its timeline does
            names = {k: v for k, v in failure.names.items() if k in ROLE_NAMES}
            view.title = text(CHECK_TITLE(r.id), lang, **names)
            view.why = text(CHECK_WHY(r.id), lang, **names)
        _add_failure(view, failure, lang, detail)
    return view


def _add_failure(view: CheckView, failure: Failure, lang: str, detail: str) -> None:
    """The parts of a failure that `detail` shows."""
    full = detail == "full"
    view.kind = failure.kind
    problem = problem_line(failure, lang)
    if full:
        view.hint = fitting_hint(view.id, failure, lang)
    if detail == "none":
        view.problem = problem if failure.outcome != Outcome.FAILED else None
        return
    returned = failure.kind in Kind.VALUES and failure.came_back is not None
    if failure.setup:
        setup = setup_line(failure, view.title, lang, full)
        problem = setup if problem is None else setup + "\n" + problem
        returned = returned and not full  # the setup sentence already says both values
    view.problem = problem
    view.sentence = detail_sentence(failure, lang)
    if failure.timeline and failure.outcome != Outcome.NOT_IMPLEMENTED:
        view.events = failure.timeline
        view.raised = failure.kind == Kind.RAISED
        view.steps = steps(failure.timeline, lang)
    if returned:
        view.returned = Returned(failure.came_back, failure.expected if full else None)
    if failure.row is not None:
        view.row = row_view(failure.row, lang, with_expected=full)


#: Failures about the check's rule: its own hint (or its detail's) may fit them.
RULE_KINDS = (Kind.MISMATCH, Kind.ROW_MISMATCH, Kind.DETAIL, Kind.WRONG_VALUE)
#: Detail sentences about another check's rule, met on the way: that rule's hint fits them.
HINT_OF_DETAIL = {
    "integration-journal-mode": "check.journal-mode-stays-delete.hint",
    "race-journal-mode": "check.journal-mode-stays-delete.hint",
    "integration-worker-rounds": "check.work-once-empty-queue.hint",
    "work-once-send-uncommitted": "check.lock-free-during-send.hint",
    "timeline-locked-in-send": "check.lock-free-during-send.hint",  # a lock held across send
    "lock-probe-claim": "check.lowest-id-first.hint",  # the probe got another job than the next
    "integration-stale-finish-value": "hint.wrong-type.finish",  # not False: None, 0...
    "lease-until-rule": "check.deadline-clamp.hint",  # met in any check that claims
    "lease-until-other-deadline": "check.deadline-clamp.hint",
}
#: Detail sentences no hint fits: the code ended, or did not answer the same way twice, or
#: it never did what the check's rule is about (a claim that wrote nothing, a work_once that
#: never claims: the sentence sends the student to the claim checks).
NO_HINT_DETAILS = ("integration-worker-exited", "timeline-unreproduced",
                   "tx-journal-nothing-written", "work-once-never-claims",
                   "tx-claim-wrote-nothing", "tx-finish-wrote-nothing")


def fitting_hint(check_id: str, failure: Failure, lang: str) -> str | None:
    """The hint that fits `failure` of check `check_id`, in words, or None: a hint follows only
    the failure it is about.

    - a wrong return type: the type hint of that function (`hint.wrong-type.<function>`), or of
      a Claim's field (`hint.wrong-field-type`), never a hint about the rule's logic;
    - a failure whose detail sentence is about another rule the check meets on its way (in its
      setup too): that rule's hint (`HINT_OF_DETAIL`: another check's; `hint.detail.<detail>`:
      one of its own), or none (`NO_HINT_DETAILS`);
    - a right row with a wrong value returned by claim or work_once: the function's value hint
      (`hint.wrong-value.<function>`; a finish that answers wrongly changed another row: the
      check's rule);
    - a failure while setting the check up: no hint (the check's rule was not reached);
    - a failure of the rule (a value or a row not as the contract says): the check's hint;
    - anything else (not implemented, not loadable, raised, exited, hung, out of a limit, its
      own connection, the grader's bug): no hint; the problem line says what to fix."""
    if failure.outcome != Outcome.FAILED:
        return None
    if failure.kind == Kind.WRONG_TYPE:
        if failure.function not in WRONG_TYPE_HINT.members():
            return None
        return text(WRONG_TYPE_HINT(failure.function), lang)
    if failure.kind == Kind.WRONG_FIELD_TYPE:
        return text("hint.wrong-field-type", lang, field=(failure.params or {}).get("field"),
                    wanted=failure.wanted)
    if failure.kind not in RULE_KINDS or failure.detail in NO_HINT_DETAILS:
        return None
    if failure.detail in HINT_OF_DETAIL:
        return text(HINT_OF_DETAIL[failure.detail], lang)
    if failure.detail and failure.detail in DETAIL_HINT.members():
        return text(DETAIL_HINT(failure.detail), lang)
    if failure.kind == Kind.WRONG_VALUE and failure.function in WRONG_VALUE_HINT.members():
        return text(WRONG_VALUE_HINT(failure.function), lang)  # the row is right, its answer not
    if failure.setup:
        return None
    return text(CHECK_HINT(check_id), lang)


def message_line(check: CheckView, lang: str) -> str:
    """One line saying what went wrong with a failed check: for a check a shared cause
    explains, that cause ("See: ..."); else the first line of the problem or of the check's own
    sentence; else what came back (and what was expected, if shown); else why the rule matters
    (what detail "none" leaves)."""
    if check.cause is not None:
        return check.cause.see
    said = check.problem or check.sentence
    if said:
        return said.splitlines()[0]
    if check.returned is not None:
        line = f"{text('ui.came-back', lang)} {check.returned.came_back}"
        if check.returned.expected is not None:
            line += f"  {text('ui.expected', lang)} {check.returned.expected}"
        return " ".join(line.splitlines())  # a value a student's code made can hold newlines
    return f"{text('ui.why', lang)} {check.why}"


def stability_line(r: CheckResult, lang: str) -> str:
    """'passed k/N', and for an unstable check the runs that did not pass; with --sweep, in how
    many worlds it passed and the seeds of those it did not."""
    if r.seeds:
        worlds = list(dict.fromkeys(r.seeds))
        line = text("ui.passed-worlds", lang, k=len(worlds) - len(r.failed_seeds), n=len(worlds))
        if r.failed_seeds and len(r.failed_seeds) < len(worlds):  # all: the count says it
            line += " — " + text("ui.failed-worlds", lang,
                                 seeds=", ".join(map(str, r.failed_seeds)))
        if r.unstable:
            line += " — " + text("ui.unstable", lang,
                                 runs=", ".join(map(str, r.failed_run_numbers)))
        return line
    line = text("ui.passed-runs", lang, k=r.passed_runs, n=len(r.runs))
    if r.unstable:
        runs = ", ".join(map(str, r.failed_run_numbers))
        line += " — " + text("ui.unstable", lang, runs=runs)
    return line


def row_view(row: RowDiff, lang: str, *, with_expected: bool) -> RowView:
    """The job's row as table lines: column, current, expected, and whether they differ."""
    missing = text("ui.no-row", lang)
    current = row.current or {c: missing for c in COLUMNS}
    expected = row.expected or {c: missing for c in COLUMNS}
    lines = []
    for column in COLUMNS:
        now, want = value(current.get(column)), value(expected.get(column))
        lines.append(RowLine(column, now, want if with_expected else None,
                             with_expected and now != want))
    return RowView(text("ui.row-of", lang, job=row.job), lines, with_expected)


def steps(events: list[dict], lang: str) -> list[Step]:
    """A timeline's events as steps, the failing one marked."""
    failing = failing_step(events)
    return [Step(e.get("t") if isinstance(e.get("t"), int) else None, event_text(e, lang),
                 i == failing, printed_lines(e.get("printed"), lang))
            for i, e in enumerate(events)]


def printed_lines(printed, lang: str) -> list[str]:
    """What a call printed (the event's [its lines, characters left out]; every line already
    made printable, grader.results.shown_text: a tab or an escape written as a repr writes it)
    as lines to show: at most PRINTED_LINES, then one line saying how much more there was."""
    if not (isinstance(printed, list) and len(printed) == 2 and isinstance(printed[0], list)
            and isinstance(printed[1], int)):
        return []
    lines = [plain(str(line)).rstrip() for line in printed[0]]
    lost = printed[1]
    more = len(lines) - PRINTED_LINES
    shown = lines[:PRINTED_LINES]
    if more > 0 or lost > 0:
        shown.append(text("timeline.printed-more", lang, lines=max(more, 0), chars=lost))
    label = text("timeline.printed", lang)
    return [f"{label if i == 0 else ' ' * display_width(label)} │ {line}"
            for i, line in enumerate(shown)]


# -- text from the code under grade ----------------------------------------------------------------
#: An ANSI escape sequence (CSI ... final byte, or ESC and one character).
ANSI = re.compile(r"\x1b(?:\[[0-?]*[ -/]*[@-~]|[@-Z\\-_])")
#: Control characters other than tab and newline, and lone surrogates (never valid UTF-8).
CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f\ud800-\udfff]")


def plain(s: str) -> str:
    """`s` without ANSI escapes or control characters (student text can hold both: an
    exception's message may move the cursor or recolour a terminal). A carriage return is
    dropped too (CRLF becomes LF)."""
    return CONTROL.sub("", ANSI.sub("", s))


def shown_failure(failure: Failure, lang: str) -> Failure:
    """`failure` as every writer shows it: its student text plain (`_plain_data`), and the
    error of a fault the grader injected marked as such wherever it shows (`mark_faults`)."""
    return Failure.from_json(mark_faults(_plain_data(failure.to_json()), lang))


#: The injected fault's message in the lesson's world (grader.checks.faults.fault_message): it
#: says what it is. In a drawn world it is letters that say nothing (az4fapj7dsz3).
LESSON_FAULT = "injected fault"


def mark_faults(data: dict, lang: str) -> dict:
    """A failure's JSON form with each message of a fault the grader injected (named by the
    timeline's `note.fault-injected`) followed, wherever it shows (the error, the timeline's
    raised steps, a detail's words), by what it is: "(the grader's injected fault)"."""
    messages = {event["params"]["message"] for event in data.get("timeline") or ()
                if isinstance(event, dict) and event.get("key") == "note.fault-injected"
                and isinstance((event.get("params") or {}).get("message"), str)}
    messages.discard(LESSON_FAULT)
    messages.discard("")
    if not messages:
        return data
    marked = {m: text("fault.marked", lang, message=m) for m in messages}

    def mark(value):
        if isinstance(value, str):
            for message, words in marked.items():
                if message in value and words not in value:
                    value = value.replace(message, words)
            return value
        if isinstance(value, dict):
            if value.get("op") == "note":  # the narration names the message itself
                return value
            return {k: mark(v) for k, v in value.items()}
        if isinstance(value, list):
            return [mark(v) for v in value]
        return value

    return mark(data)


def _plain_data(data):
    """Every string in `data` (a failure's JSON form) made `plain`."""
    if isinstance(data, str):
        return plain(data)
    if isinstance(data, dict):
        return {_plain_data(k): _plain_data(v) for k, v in data.items()}
    if isinstance(data, list):
        return [_plain_data(v) for v in data]
    return data


# -- sentences ---------------------------------------------------------------------------------
def value(v) -> str:
    return "NULL" if v is None else str(v)


def claim_result(result, lang: str) -> str:
    if result is None:
        return "None"
    if isinstance(result, dict):
        return text("timeline.claim-result", lang, **result)
    return str(result)


def event_text(event: dict, lang: str) -> str:
    op = event["op"]
    if op == "note":
        return text(event["key"], lang, **event.get("params", {}))
    if op == "set-row":
        values = ", ".join(f"{k}={value(v)}" for k, v in event["values"].items())
        return text("timeline.set-row", lang, job=event["job"], values=values)
    if op in ("enqueue", "requeue", "import"):
        return text(TIMELINE(op), lang, **event)
    if "raised" in event:
        result = text("timeline.raised", lang, error=event["raised"])
    elif event.get("not_called"):
        result = text("timeline.not-called", lang)
    elif "result" not in event:
        result = text("timeline.pending", lang)
    elif op == "claim":
        result = claim_result(event["result"], lang)
    else:
        result = str(event["result"])
    params = {**event, "result": result}
    if op == "finish":
        params["stamp"] = text("timeline.stamp", lang, **event["stamp"])
    if op == "work_once" and event.get("returns"):  # told after what happened inside its send
        return text("timeline.work_once-returns", lang, **params)
    return text(TIMELINE(op), lang, **params)


def failing_step(events: list[dict]) -> int | None:
    """Index of the step a failure is about: the call that left its transaction or statement
    open when the failure is the lock it still held (marked `left_open` by the judge), else the
    last call into the target (None: no call)."""
    left = [i for i, e in enumerate(events) if e.get("left_open") is True]
    if left:
        return left[0]
    return max((i for i, e in enumerate(events) if e["op"] in ("claim", "finish", "work_once")),
               default=None)


def step_text(step, lang: str) -> str:
    return event_text(step, lang) if step else text("kind.nothing-running", lang)


def problem_line(failure: Failure, lang: str) -> str | None:
    """One sentence for outcomes that are about the code under grade rather than the rule."""
    kind = failure.kind
    if kind == Kind.NOT_GRADED:  # without a step: at a call the check does not show
        return (text("kind.not-graded", lang, function=failure.function,
                     timeout=_seconds(failure.timeout), step=step_text(failure.step, lang))
                if failure.step else
                text("kind.not-graded-unshown", lang, function=failure.function,
                     timeout=_seconds(failure.timeout)))
    if (failure.outcome == Outcome.TIMED_OUT and isinstance(failure.step, dict)
            and failure.step.get("lock_held_busy_ms") is not None):  # it should have raised
        return text("kind.timed-out-lock-held", lang, timeout=_seconds(failure.timeout),
                    step=step_text(failure.step, lang), function=failure.step.get("op"),
                    busy_ms=failure.step["lock_held_busy_ms"])
    if failure.outcome == Outcome.TIMED_OUT:
        printed = failure.step.get("printed_before") if isinstance(failure.step, dict) else None
        if type(printed) is int and printed >= PRINTED_A_LOT:  # slow, not necessarily endless
            return text("kind.timed-out-printing", lang, timeout=_seconds(failure.timeout),
                        step=step_text(failure.step, lang), chars=f"{printed:,}")
        return text("kind.timed-out", lang, timeout=_seconds(failure.timeout),
                    step=step_text(failure.step, lang))
    if kind == Kind.RESOURCE_LIMIT:
        return text("kind.resource-limit", lang, limit=text(LIMIT(failure.error), lang),
                    step=step_text(failure.step or (failure.timeline or [None])[-1], lang))
    if kind == Kind.EXITED:
        how = (text("kind.exit-signal", lang, signal=failure.signal) if failure.signal is not None
               else text("kind.exit-code", lang, code=failure.code))
        step = failure.step or (failure.timeline or [None])[-1]
        return text("kind.exited", lang, how=how, step=step_text(step, lang))
    if kind == Kind.PROTOCOL:
        step = failure.step or (failure.timeline or [None])[-1]
        return text("kind.protocol-error", lang, error=failure.error, step=step_text(step, lang))
    if kind == Kind.RAISED:
        at = text("kind.at", lang, where=failure.where) if failure.where else ""
        return text("kind.raised", lang, function=failure.function, error=failure.error, at=at)
    if kind in (Kind.NOT_IMPLEMENTED, Kind.WRONG_TYPE, Kind.WRONG_VALUE, Kind.WRONG_FIELD_TYPE,
                Kind.OWN_CONNECTION):
        return text(KIND(kind), lang, **{**failure.to_json(), **(failure.params or {})})
    if kind in Kind.LOAD_ERRORS:
        return text(KIND(kind), lang, **(failure.params or {}))
    if kind == Kind.GRADER_BUG:
        return text("kind.grader-bug", lang) + "\n" + (failure.error or "")
    if kind == Kind.ROW_MISMATCH and failure.came_back is not None and failure.row is not None:
        if failure.cause and ResultCause.split(failure.cause)[0] in UNCOMMITTED_CAUSES:
            return text("kind.row-mismatch-uncommitted", lang, function=failure.function or "?",
                        came_back=failure.came_back, job=failure.row.job)
        return text("kind.row-mismatch-value-right", lang, function=failure.function or "?",
                    came_back=failure.came_back, job=failure.row.job)
    return None


def setup_line(failure: Failure, rule: str, lang: str, full: bool) -> str:
    """A failure while the check set up its situation: which step, what came back and what
    the contract gives (`full`), and that the rule under test was never reached."""
    events = failure.timeline or []
    at = failing_step(events)
    step = step_text(events[at] if at is not None else None, lang)
    if full and failure.kind in Kind.VALUES and failure.came_back is not None:
        return text("setup.came-back", lang, step=step, came_back=failure.came_back,
                    expected=failure.expected, rule=rule)
    if (full and failure.kind == Kind.ROW_MISMATCH and failure.came_back is not None
            and failure.row is not None):  # the value was right: the row was not
        return text("setup.row", lang, step=step, came_back=failure.came_back,
                    job=failure.row.job, rule=rule)
    return text("setup.step", lang, step=step, rule=rule)


def detail_sentence(failure: Failure, lang: str) -> str | None:
    """The check's own sentence about this failure (`detail.<name>`), if it gave one."""
    if failure.detail:
        return text(DETAIL(failure.detail), lang, **(failure.params or {}))
    if failure.kind == Kind.ROW_MISMATCH and failure.came_back is None:  # else: problem_line
        return text("kind.row-mismatch", lang)
    return None


def _seconds(timeout) -> str:
    return f"{timeout:g}" if isinstance(timeout, (int, float)) else "?"
