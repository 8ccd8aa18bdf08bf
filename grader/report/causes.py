"""Root causes (`root_causes`): when one mistake makes several checks fail, the reports lead with
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

The sentences a cause is worded with live in `sentences`; the view (`view`) sets each failed
check's `cause` and builds the reports' stories from these.

May import: the standard library, the grader's top-level basics (`grader.results`) and
`messages` and `sentences` of this package. Never `view`: the view is built on the causes (a
`Cause` holds its checks' `view.CheckView`s, which it names in annotations only).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from grader.results import Cause as ResultCause
from grader.results import CheckResult, Failure, Kind, Outcome
from .messages import CAUSE, text
from .sentences import UNCOMMITTED_CAUSES, plain, problem_line, seconds, shown_failure


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


#: How many checks a cause must make fail to be shown once for all of them.
SHARED = 2
#: How many of a cause's check ids its block names (every check still has its own line).
SHOWN_IDS = 8
#: Causes that stop the code before any rule is reached: when they explain every check, the
#: terminal report is short (ReportView.whole).
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
                    timeout=seconds(failure.timeout))
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
