"""Turn check results (language-neutral dicts) into text: the terminal report and the
`output` of results.json. Colours only when asked (a TTY without NO_COLOR)."""

from __future__ import annotations

import os
import sys
import unicodedata

from lab.store import COLUMNS

from .messages import CHECK_HINT, CHECK_WHY, DETAIL, KIND, TIMELINE, text


class Style:
    CODES = {"red": "31", "green": "32", "yellow": "33", "dim": "2", "bold": "1"}

    def __init__(self, enabled: bool):
        self.enabled = enabled

    def __call__(self, name: str, s: str) -> str:
        return f"\033[{self.CODES[name]}m{s}\033[0m" if self.enabled else s

    @classmethod
    def for_stream(cls, stream=sys.stdout) -> "Style":
        wanted = stream.isatty() and not os.environ.get("NO_COLOR") and os.environ.get("TERM") != "dumb"
        return cls(wanted)


PLAIN = Style(False)


def width(s: str) -> int:
    """Columns `s` takes in a terminal: East Asian wide characters take two."""
    return sum(2 if unicodedata.east_asian_width(ch) in "WF" else 1 for ch in s)


def pad(s: str, columns: int) -> str:
    return s + " " * max(0, columns - width(s))


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
    elif "result" not in event:
        result = text("timeline.pending", lang)
    elif op == "claim":
        result = claim_result(event["result"], lang)
    else:
        result = str(event["result"])
    params = {**event, "result": result}
    if op == "finish":
        params["stamp"] = text("timeline.stamp", lang, **event["stamp"])
    return text(TIMELINE(op), lang, **params)


def failing_step(events: list[dict]) -> int | None:
    """Index of the last call into the target: the step a failure is about (None: no call)."""
    return max((i for i, e in enumerate(events) if e["op"] in ("claim", "finish", "work_once")),
               default=None)


def timeline_lines(events: list[dict], lang: str, style: Style = PLAIN) -> list[str]:
    lines = []
    last_call = failing_step(events)
    for i, event in enumerate(events):
        t = event.get("t")
        clock = f"{t:>6} ms" if isinstance(t, int) else " " * 9
        marker = "▶" if i == last_call else " "
        line = f"{marker} {clock}  {event_text(event, lang)}"
        lines.append(style("bold", line) if i == last_call else line)
    return lines


def row_lines(row: dict, lang: str, style: Style = PLAIN, show_expected: bool = True) -> list[str]:
    """The job's row as a two-column table, current vs expected, differing fields marked ≠."""
    current, expected = row.get("current"), row.get("expected")
    missing = text("ui.no-row", lang)
    current = current or {c: missing for c in COLUMNS}
    expected = expected or {c: missing for c in COLUMNS}
    head = text("ui.row-of", lang, job=row["job"])
    cells = max([width(value(current.get(c))) for c in COLUMNS] + [width(text("ui.current", lang))])
    title = f"  {pad(head, 14)} {pad(text('ui.current', lang), cells)}"
    lines = [title + (f"    {text('ui.expected-col', lang)}" if show_expected else "")]
    for column in COLUMNS:
        now, want = value(current.get(column)), value(expected.get(column))
        if not show_expected:
            lines.append(f"    {column:<12} {now}")
        elif now == want:
            lines.append(f"    {column:<12} {pad(now, cells)}    {want}")
        else:
            lines.append(style("red", f"  ≠ {column:<12} {pad(now, cells)}    ")
                         + style("green", want))
    return lines


def step_text(step, lang: str) -> str:
    return event_text(step, lang) if step else text("kind.nothing-running", lang)


def problem_line(result: dict, lang: str) -> str | None:
    """One sentence for outcomes that are about the code under grade rather than the rule."""
    kind = result.get("kind")
    outcome = result.get("outcome")
    params = result.get("params", {}) or {}
    if outcome == "timed_out":
        return text("kind.timed-out", lang, timeout=_seconds(result.get("timeout")),
                    step=step_text(result.get("step"), lang))
    if kind == "exited":
        how = (text("kind.exit-signal", lang, signal=result["signal"]) if "signal" in result
               else text("kind.exit-code", lang, code=result.get("code")))
        step = result.get("step") or (result.get("timeline") or [None])[-1]
        return text("kind.exited", lang, how=how, step=step_text(step, lang))
    if kind == "raised":
        at = text("kind.at", lang, where=result["where"]) if result.get("where") else ""
        return text("kind.raised", lang, function=result["function"], error=result["error"], at=at)
    if kind in ("not-implemented", "wrong-type"):
        return text(KIND(kind), lang, **result)
    if kind in ("syntax-error", "import-error", "missing-function", "no-such-file"):
        return text(KIND(kind), lang, **params)
    if kind == "grader-bug":
        return text("kind.grader-bug", lang) + "\n" + result.get("error", "")
    return None


DETAIL_LEVELS = ("full", "actual-only", "none")


def detail_sentence(result: dict, lang: str) -> str | None:
    """The check's own sentence about this failure (`detail.<name>`), if it gave one."""
    if result.get("detail"):
        return text(DETAIL(result["detail"]), lang, **(result.get("params") or {}))
    if result.get("kind") == "row-mismatch":
        return text("kind.row-mismatch", lang)
    return None


def failure_lines(check_id: str, result: dict, lang: str, style: Style = PLAIN,
                  detail: str = "full") -> list[str]:
    """The teaching part of a failed check: what happened, what came back, the row, the why.

    `detail` (for hidden grading): "full" shows everything; "actual-only" shows what the code
    did and produced but no expected value, expected row or hint; "none" shows only the why,
    after the one-line problem when the code crashed, hung or is missing (outcome not 'failed').
    """
    why = f"{text('ui.why', lang)} {text(CHECK_WHY(check_id), lang)}"
    problem = problem_line(result, lang)
    if detail == "none":
        return ([problem] if problem and result.get("outcome") != "failed" else []) + [why]
    full = detail == "full"
    lines: list[str] = []
    if problem:
        lines.append(problem)
    sentence = detail_sentence(result, lang)
    if sentence:
        lines.append(sentence)
    if result.get("timeline") and result.get("outcome") != "not_implemented":
        lines.append(text("ui.timeline", lang))
        lines += ["  " + line for line in timeline_lines(result["timeline"], lang, style)]
    if "came_back" in result and result.get("kind") == "mismatch":
        lines.append(f"{text('ui.came-back', lang)} {result['came_back']}")
        if full:
            lines.append(f"{text('ui.expected', lang)} {result['expected']}")
    if result.get("row"):
        lines += row_lines(result["row"], lang, style, show_expected=full)
    lines.append(why)
    if full:
        lines.append(f"{text('ui.hint', lang)} {text(CHECK_HINT(check_id), lang)}")
    return lines


def _seconds(timeout) -> str:
    return f"{timeout:g}" if isinstance(timeout, (int, float)) else "?"
