"""The sentences the views are made of (a timeline event, the one-line problem, the check's own
sentence), shared with the SVG timeline and the quiz, and the text from the code under grade
made plain before any writer shows it (`plain`, `shown_failure`, `mark_faults`).

May import: the standard library, the grader's top-level basics (`grader.results`) and
`messages` of this package. Never `view` or `causes`: they are made of these sentences.
"""

from __future__ import annotations

import re

from grader.results import Cause as ResultCause
from grader.results import Failure, Kind, Outcome
from .messages import DETAIL, KIND, LIMIT, TIMELINE, text

#: Characters the calls of a check printed before the call that timed out, from which the timeout
#: says that printing takes time rather than guessing an endless loop (issue 39).
PRINTED_A_LOT = 100_000

#: Causes under which a row that looks unchanged is a change not committed (a transaction open on
#: the call's connection), not a wrong row: "the value is right, the row is wrong" would blame it.
UNCOMMITTED_CAUSES = (ResultCause.ISOLATION_LEVEL_CHANGED, ResultCause.TRANSACTION_LEFT_OPEN)


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
    actor = event.get("actor")
    if isinstance(actor, str) and (not actor or actor != actor.strip()):
        params["actor"] = repr(actor)  # a name that is empty or has spaces at an end: quoted
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


#: SQLite's words when a COMMIT or ROLLBACK meets a statement of the connection still running.
IN_PROGRESS = "SQL statements in progress"


def problem_line(failure: Failure, lang: str) -> str | None:
    """One sentence for outcomes that are about the code under grade rather than the rule."""
    kind = failure.kind
    if kind == Kind.NOT_GRADED:  # without a step: at a call the check does not show
        return (text("kind.not-graded", lang, function=failure.function,
                     timeout=seconds(failure.timeout), step=step_text(failure.step, lang))
                if failure.step else
                text("kind.not-graded-unshown", lang, function=failure.function,
                     timeout=seconds(failure.timeout)))
    if kind == Kind.SQL_STUCK:  # the lane was ended in the code's SQL: no step kept
        return text("kind.sql-stuck", lang, timeout=seconds(failure.timeout))
    if (failure.outcome == Outcome.TIMED_OUT and isinstance(failure.step, dict)
            and failure.step.get("lock_held_busy_ms") is not None):  # it should have raised
        return text("kind.timed-out-lock-held", lang, timeout=seconds(failure.timeout),
                    step=step_text(failure.step, lang), function=failure.step.get("op"),
                    busy_ms=failure.step["lock_held_busy_ms"])
    if failure.outcome == Outcome.TIMED_OUT:
        printed = failure.step.get("printed_before") if isinstance(failure.step, dict) else None
        if type(printed) is int and printed >= PRINTED_A_LOT:  # slow, not necessarily endless
            return text("kind.timed-out-printing", lang, timeout=seconds(failure.timeout),
                        step=step_text(failure.step, lang), chars=f"{printed:,}")
        return text("kind.timed-out", lang, timeout=seconds(failure.timeout),
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
        said = text("kind.raised", lang, function=failure.function, error=failure.error, at=at)
        if IN_PROGRESS in (failure.error or ""):  # SQLite's: what it means, for the code's COMMIT
            said += " " + text("kind.raised-statements-in-progress", lang)
        return said
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


def seconds(timeout) -> str:
    return f"{timeout:g}" if isinstance(timeout, (int, float)) else "?"
