"""The results model: what grading one check produced. Every output format is a function of
these objects (grader.report), whichever process or platform they were produced in.

A check that did not pass carries a `Failure`: an outcome, a kind and the facts of that kind.
Its JSON form (`to_json`, `from_json`) is plain data: a run's result crosses a lane's pipe
(grader.runner.lanes) and a forked judge's (grader.harness.processes.sandbox) as `result_to_json` (a
passed run is `{"outcome": "passed"}`), a whole `CheckResult` watch's pipe and a pytest-json-report
file's item metadata (grader.plugin) as `check_result_to_json`.

No imports from the rest of the grader: the harness, the checks, the reports and the
instructor tools all stand on this.
"""

from __future__ import annotations

import dataclasses
import re
from dataclasses import dataclass, field
from typing import Any


class Outcome:
    """How a check ended."""
    PASSED = "passed"
    FAILED = "failed"                    # the code ran; the rule does not hold
    ERRORED = "errored"                  # it raised, exited, or could not be loaded
    TIMED_OUT = "timed_out"              # the sandbox's wall-clock safety net fired
    NOT_IMPLEMENTED = "not_implemented"  # a function still raises NotImplementedError
    RESOURCE_LIMIT = "resource_limit"    # memory, file size or CPU time ran out (error: which)
    ALL = (PASSED, FAILED, ERRORED, TIMED_OUT, NOT_IMPLEMENTED, RESOURCE_LIMIT)


class Kind:
    """What a failure is about (a timed-out check has no kind)."""
    MISMATCH = "mismatch"                # came_back vs expected, and the row when given a job
    ROW_MISMATCH = "row-mismatch"        # the row vs the expected row (with function and
    #                                      came_back: that value was right, the row was not)
    DETAIL = "detail"                    # the check's own sentence (detail.<detail>), maybe a row
    WRONG_TYPE = "wrong-type"            # function returned came_back, of type, not wanted
    WRONG_FIELD_TYPE = "wrong-field-type"  # function returned a Claim (came_back) whose
    #                                      params' field (value) is of type, not exactly wanted
    WRONG_VALUE = "wrong-value"          # the row is right; function returned came_back, not
    #                                      expected (its type named when that is the cause)
    RAISED = "raised"                    # function raised error, at where
    EXITED = "exited"                    # the process ended: code or signal, during step
    NOT_IMPLEMENTED = "not-implemented"  # function raises NotImplementedError
    GRADER_BUG = "grader-bug"            # the check itself broke: error is the traceback
    RESOURCE_LIMIT = "resource-limit"    # a limit ran out: error names it, step what ran
    OWN_CONNECTION = "own-connection"    # function opened a connection of its own to the
    #                                      check's database (params' files): the contract is
    #                                      the connection it is given, whatever its SQL did
    NOT_GRADED = "not-graded"            # (outcome timed_out) function did not return when
    #                                      the grader first called it, before any check (its
    #                                      `timeout`): the check stopped at `step`, its own first
    #                                      call of it, instead of waiting for it to hang again
    SQL_STUCK = "sql-stuck"              # (outcome timed_out) a statement of the code's SQL
    #                                      ran on in the judge past the check's time limit, in
    #                                      one step SQLite cannot interrupt (a lock waited for as
    #                                      long as its own busy timeout, one function over a
    #                                      large value): the lane was ended (processes.stuck)
    PROTOCOL = "protocol-error"          # the target process broke the channel's rules
    #                                      (error says which), during step: never believed
    # The target cannot be loaded; params say why (file, line, msg / error / names / file).
    SYNTAX_ERROR = "syntax-error"
    IMPORT_ERROR = "import-error"
    MISSING_FUNCTION = "missing-function"
    NO_SUCH_FILE = "no-such-file"
    VALUES = (MISMATCH, WRONG_VALUE)     # came_back vs expected
    LOAD_ERRORS = (SYNTAX_ERROR, IMPORT_ERROR, MISSING_FUNCTION, NO_SUCH_FILE)


class Cause:
    """A mistake a check saw the code make (Failure.cause), whatever failed after it: the
    report's root cause of every check that saw it."""
    #: work_once called send while the connection it was given had a transaction open (the
    #: target process says so with each send callback)
    SEND_IN_TRANSACTION = "send-in-transaction"
    #: a call (claim, finish or work_once: `Cause.of`) set its connection's isolation_level and
    #: left it so: Python's sqlite3 then opens a transaction before the next plain write on it
    #: that nobody commits, whatever the check fails on then (a row that looks unchanged)
    ISOLATION_LEVEL_CHANGED = "isolation-level-changed"
    #: a call returned with its transaction open, and the check then read a row as other
    #: connections see it: its change, not committed, does not show (the row looks wrong)
    TRANSACTION_LEFT_OPEN = "transaction-left-open"

    @staticmethod
    def of(cause: str, function: str) -> str:
        """A cause about one function, as Failure.cause holds it: `cause:function`."""
        return f"{cause}:{function}"

    @staticmethod
    def split(cause: str) -> tuple[str, str | None]:
        """(the cause, the function it is about or None) of a Failure.cause."""
        kind, _, function = cause.partition(":")
        return kind, function or None


@dataclass
class RowDiff:
    """The job's row as it is (`current`) and as the check expected it (None: no row)."""
    job: int | None
    current: dict | None
    expected: dict | None

    def to_json(self) -> dict:
        return {"job": self.job, "current": self.current, "expected": self.expected}

    @classmethod
    def from_json(cls, data: dict) -> RowDiff:
        return cls(data.get("job"), data.get("current"), data.get("expected"))


#: Fields a kind writes in its JSON form even when they are None (`None`: a timeout).
_WRITTEN_WHEN_NONE = {Kind.MISMATCH: ("row", "detail"), Kind.ROW_MISMATCH: ("detail",),
                      Kind.RAISED: ("where",), None: ("step",)}


@dataclass
class Failure:
    """Why a check did not pass. Values come from student code already shown as text."""
    outcome: str
    kind: str | None = None
    function: str | None = None    # the target's function it is about
    came_back: str | None = None   # what came back, as a student would write it
    expected: str | None = None    # what should have come back
    type: str | None = None        # the type's name of what came back (wrong-type)
    wanted: str | None = None      # the return type wanted (wrong-type)
    error: str | None = None       # `Type: message` (raised), a traceback (grader-bug)
    where: str | None = None       # file:line of the raise in the target's code
    row: RowDiff | None = None
    detail: str | None = None      # the catalogue sentence `detail.<detail>` of the check
    params: dict | None = None     # its parameters (or a load error's)
    step: dict | None = None       # the call running when the child hung or ended
    code: Any = None               # the exit code
    signal: str | None = None      # the signal that ended the child
    timeout: float | None = None   # seconds waited before the child was killed
    timeline: list[dict] | None = None  # the check's events, in order
    # The timeline is the check's own list (not a copy): events added later still show.
    setup: bool | None = None      # True: it went wrong while setting up the check's situation,
    # before the rule the check tests was reached (the check's hint is not about it)
    names: dict | None = None      # the names the check's world gave its roles ({"A": ...}),
    # when not the lesson's: the check's title and why name its workers by them
    cause: str | None = None       # a mistake the check saw the code make, whatever failed
    # after it (a `Cause`): the report's root cause (report.view.cause_key)

    @classmethod
    def load_error(cls, kind: str, params: dict) -> Failure:
        """The target cannot be loaded (one of `Kind.LOAD_ERRORS`)."""
        return cls(Outcome.ERRORED, kind, params=params)

    @classmethod
    def grader_bug(cls, error: str) -> Failure:
        return cls(Outcome.ERRORED, Kind.GRADER_BUG, error=error)

    def to_json(self) -> dict:
        """Plain data: the fields that are set, and those this kind always writes."""
        data = {}
        for f in dataclasses.fields(self):
            value = getattr(self, f.name)
            if value is not None or self._written_when_none(f.name):
                data[f.name] = value.to_json() if isinstance(value, RowDiff) else value
        return data

    def _written_when_none(self, name: str) -> bool:
        if self.kind == Kind.EXITED:  # the step when there is no timeline; code unless a signal
            return ((name == "step" and self.timeline is None)
                    or (name == "code" and self.signal is None))
        return name in _WRITTEN_WHEN_NONE.get(self.kind, ())

    @classmethod
    def from_json(cls, data: dict) -> Failure:
        row = data.get("row")
        return cls(**{**data, "row": RowDiff.from_json(row) if row is not None else None})

    def shown(self) -> Failure:
        """This failure with every text in it `shown_text`: what a report may print of it. A
        copy (its timeline too). Texts the grader writes a line at a time keep their lines,
        each line shown: a grader bug's traceback, the statements a check lists (one a line,
        each already on one line: grader.harness.judge.interleave.sql_line)."""
        data = shown_data(self.to_json())
        if self.kind == Kind.GRADER_BUG and isinstance(self.error, str):
            data["error"] = shown_lines(self.error)
        for name in LISTINGS:
            if isinstance((self.params or {}).get(name), str):
                data["params"][name] = shown_lines(self.params[name])
        for name in SOURCE_LINES:  # one line of the student's file, its line end not its text
            if isinstance((self.params or {}).get(name), str):
                data["params"][name] = shown_text(self.params[name].rstrip("\r\n"))
        return Failure.from_json(data)


# -- text from the code under grade ----------------------------------------------------------------
#: Characters no text from the code under grade brings into a result: C0 controls (newline, tab
#: and carriage return among them, ESC that opens every escape sequence), DEL, C1 controls
#: (U+009B is a one-character CSI, U+0085 a newline), zero-width and bidirectional controls
#: (U+202E turns the rest of a line around), line and paragraph separators, the BOM, and lone
#: surrogates (never valid UTF-8).
UNSHOWN = re.compile("[\x00-\x1f\x7f-\x9f\u061c\u200b-\u200f\u2028-\u202e\u2060-\u206f"
                     "\ufeff\ud800-\udfff]")
#: Characters of one text at most: a value's repr, a message, a path, an owner.
MAX_SHOWN = 2_000
_ESCAPES = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}


def _escape(match: re.Match) -> str:
    char = match.group()
    code = ord(char)
    return _ESCAPES.get(char) or (f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}")


def shown_text(text: str, limit: int = MAX_SHOWN) -> str:
    """`text` (from the code under grade: a repr, a type's name, a message, a path, a value it
    stored) as one line any report may print: every character of `UNSHOWN` written visibly as
    Python writes it in a repr (`\\n`, `\\x9b`, `\\u202e`), at most `limit` characters (the
    rest cut, with "…"). Escaping sequences leaves nothing a terminal or a viewer obeys."""
    text = UNSHOWN.sub(_escape, text)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def shown_lines(text: str) -> str:
    """A text the grader wrote a line at a time: each of its lines `shown_text`."""
    return "\n".join(shown_text(line) for line in text.split("\n"))


#: A failure's parameters that are listings the grader writes a line at a time.
LISTINGS = ("statements",)
#: A failure's parameters that are one line of the code under grade, as read with its line end
#: (a syntax or import error's `source`: the report puts a caret under it).
SOURCE_LINES = ("source",)


def shown_data(data):
    """Every string in `data` (plain data: dicts, lists, scalars) `shown_text`, keys too."""
    if isinstance(data, str):
        return shown_text(data)
    if isinstance(data, dict):
        return {shown_data(k): shown_data(v) for k, v in data.items()}
    if isinstance(data, (list, tuple)):
        return [shown_data(v) for v in data]
    return data


def result_to_json(failure: Failure | None) -> dict:
    """One run of a check as plain data: the failure, or `{"outcome": "passed"}`."""
    return {"outcome": Outcome.PASSED} if failure is None else failure.to_json()


def result_from_json(data: dict) -> Failure | None:
    return None if data["outcome"] == Outcome.PASSED else Failure.from_json(data)


def outcome_of(failure: Failure | None) -> str:
    return Outcome.PASSED if failure is None else failure.outcome


@dataclass
class CheckResult:
    id: str
    points: int
    outcome: str  # one of Outcome.ALL
    result: Failure | None = None  # None when the check passed
    duration: float = 0.0
    #: With --repeat N: the outcome of each run, in order (empty for a single run).
    runs: list[str] = field(default_factory=list)
    #: With --sweep N: the seed of each run's world, parallel to `runs` (empty otherwise).
    seeds: list[int] = field(default_factory=list)

    def __post_init__(self):
        # The one seam where text from the code under grade enters the results every report is
        # made of: whichever process or path produced the failure, what is kept is `shown`.
        if self.result is not None:
            self.result = self.result.shown()

    @property
    def unstable(self) -> bool:
        """The verdict changed between repeated runs of the same world."""
        by_world: dict[int | None, set[bool]] = {}
        for i, outcome in enumerate(self.runs):
            seed = self.seeds[i] if i < len(self.seeds) else None
            by_world.setdefault(seed, set()).add(outcome == Outcome.PASSED)
        return any(len(verdicts) > 1 for verdicts in by_world.values())

    @property
    def failed_seeds(self) -> list[int]:
        """With --sweep: the seeds of the worlds in which some run did not pass, in order."""
        failed = [seed for seed, outcome in zip(self.seeds, self.runs)
                  if outcome != Outcome.PASSED]
        return list(dict.fromkeys(failed))

    @property
    def passed(self) -> bool:
        return self.outcome == Outcome.PASSED

    @property
    def score(self) -> int:
        return self.points if self.passed else 0

    @property
    def passed_runs(self) -> int:
        return sum(outcome == Outcome.PASSED for outcome in self.runs)

    @property
    def failed_run_numbers(self) -> list[int]:
        """1-based numbers of the runs that did not pass."""
        return [i for i, outcome in enumerate(self.runs, 1) if outcome != Outcome.PASSED]


def check_result_to_json(r: CheckResult) -> dict:
    """A whole check result as plain JSON (watch's pipe, pytest-json-report's metadata)."""
    return {"id": r.id, "points": r.points, "outcome": r.outcome,
            "result": result_to_json(r.result), "duration": r.duration, "runs": r.runs,
            "seeds": r.seeds}


def check_result_from_json(d: dict) -> CheckResult:
    """`check_result_to_json` read back (KeyError, TypeError, ValueError: not one)."""
    if not isinstance(d, dict) or d.get("outcome") not in Outcome.ALL:
        raise ValueError(f"not a check result: {d!r:.80}")
    return CheckResult(str(d["id"]), int(d["points"]), d["outcome"],
                       result_from_json(d["result"]), float(d.get("duration", 0.0)),
                       list(d.get("runs", [])), list(d.get("seeds", [])))
