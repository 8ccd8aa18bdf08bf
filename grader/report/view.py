"""What a report says, before any format: one `CheckView` per check result and a `ReportView`
of the whole grading, built once and read by every writer (terminal, HTML, results.json).

Every part is already in words (the message catalogue, in the report's language) and already
cut to the `detail` level: "full" shows everything; "actual-only" what the code did and produced
but no expected value, expected row or hint; "none" only the why, after the one-line problem
when the code crashed, hung or is missing (an outcome other than 'failed'). A writer only lays
the parts out.

The sentences the views are made of live in `sentences`; the shared causes of failures, which
the reports lead with, in `causes`.

Stories (`ReportView.stories`): what the report tells, in the order it recommends: the causes
(most checks first), then the failures no cause explains, in lesson order. The terminal tells the
first `told` (`STORIES`, 3) in full and each of the others in one line; `--all` (told None), the
HTML report and the results files tell every one. When the causes explain every check and each
stops the code before any rule is reached (it does not load, nothing it calls is implemented, its
import hangs: `ReportView.whole`), the terminal report is short: the causes, with the line of
code and a caret (`Cause.source`), and the score.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from lab.store import COLUMNS

from grader.checkdef import REGISTRY
from grader.config import DETAILS
from grader.results import CheckResult, Failure, Kind, Outcome, RowDiff
from .wrapping import display_width
from .messages import (CHECK_HINT, CHECK_TITLE, CHECK_WHY, DETAIL_HINT, OUTCOME, ROLE_NAMES,
                       WRONG_TYPE_HINT, WRONG_VALUE_HINT, text)
from .causes import BLOCKING, Cause, root_causes
from .sentences import (detail_sentence, event_text, failing_step, plain, problem_line,
                        setup_line, shown_failure, value)

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


#: How many stories (causes, then failures of their own) the terminal tells in full.
STORIES = 3


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
