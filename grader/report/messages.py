"""The message catalogue: every word the grader shows, in English and Japanese.

The catalogue is the JSON files in grader/report/catalogue/, merged: each maps a key to
`{"en": "...", "ja": "..."}`; texts are `str.format` templates. Check texts use the keys
`check.<id>.title`, `check.<id>.why`, `check.<id>.hint`, and `detail.<name>` for a sentence a
check's failure adds. Terminal, JSON and HTML reports all read from here. The files are written
by `python -m grader catalogue set|remove|format` (grader/instructor/catalogue.py), one key a
line, not by hand.

Keys built at run time are built by a `Family` declared below (`OUTCOME("failed")` ->
`outcome.failed`), each with its finite set of members, so tests/test_catalogue.py can enumerate
every key the grader may ask for and find the keys nobody asks for. A family whose members a
module of this package declares is declared in that module (`outputs.OUTPUT_OPTION`, the report
files' flags): this module imports none of the package.

Strict mode (`LEASELAB_STRICT_MESSAGES=1`, on in the project's tests): a missing key, a language
that is not in LANGS or lacks the text, a placeholder the caller did not give, or a family member
that is not declared raises `MessageError`. Outside it a report never crashes over a word: a
missing key shows as the key, a template that cannot be filled as the template.
"""

from __future__ import annotations

import functools
import json
import os
import string
from pathlib import Path
from typing import Callable, Iterable

CATALOGUE_DIR = Path(__file__).with_name("catalogue")
LANGS = ("en", "ja")
STRICT_ENV = "LEASELAB_STRICT_MESSAGES"


#: A sentence names a check's workers by role, `{A}`, `{B}`...: the names the check's world gave
#: them come in its parameters; without them (the lesson's world) a role's name is its letter.
ROLE_NAMES = {role: role for role in string.ascii_uppercase}


class MessageError(LookupError):
    """Strict mode: a message that cannot be shown as asked."""


def strict(environ=os.environ) -> bool:
    return environ.get(STRICT_ENV, "") not in ("", "0")


@functools.lru_cache(maxsize=None)
def catalogue() -> dict[str, dict[str, str]]:
    merged: dict[str, dict[str, str]] = {}
    for path in sorted(CATALOGUE_DIR.glob("*.json")):
        entries = json.loads(path.read_text(encoding="utf-8"))
        for key, texts in entries.items():
            if key in merged:
                raise ValueError(f"message key {key!r} defined twice (again in {path.name})")
            merged[key] = texts
    return merged


def has(key: str) -> bool:
    return key in catalogue()


def text(key: str, lang: str = "en", **params) -> str:
    """The message `key` in `lang` (falling back to English), formatted with `params`.

    Strict mode raises MessageError instead of falling back (see the module docstring)."""
    texts = catalogue().get(key)
    if texts is None:
        _complain(f"no message {key!r} in the catalogue")
        return key
    if not texts.get(lang):
        _complain(f"message {key!r} has no {lang!r} text" if lang in LANGS
                  else f"unknown language {lang!r} (asked for {key!r}; known: {LANGS})")
    template = texts.get(lang) or texts.get("en") or key
    try:
        return template.format(**{**ROLE_NAMES, **params})
    except (KeyError, IndexError, ValueError, AttributeError) as exc:
        _complain(f"message {key!r} ({lang}) cannot be filled: {type(exc).__name__}: {exc}"
                  f" (given: {sorted(params)})")
        return template


def _complain(problem: str) -> None:
    if strict():
        raise MessageError(problem)


class Family:
    """Catalogue keys built at run time: `pattern` (one `{}`) filled with one of `members`.

    `members` is the finite set of values the code may fill in: a tuple, or a function returning
    them when they are declared elsewhere (the registry of checks). A family without members
    relays a name chosen where the result is made (a check's `lab.fail("name")`): the static scan
    of tests/test_catalogue.py sees those names at their source."""

    def __init__(self, pattern: str, members: Iterable[str] | Callable[[], Iterable[str]] | None):
        if pattern.count("{}") != 1:
            raise ValueError(f"a family pattern has exactly one {{}}: {pattern!r}")
        self.pattern = pattern
        self._members = members

    def __call__(self, member) -> str:
        if strict() and isinstance(self._members, tuple) and member not in self._members:
            raise MessageError(f"{member!r} is not a member of {self.pattern!r}: "
                               f"{self._members}")
        return self.pattern.format(member)

    def members(self) -> tuple[str, ...] | None:
        """The declared members (None for a relay)."""
        found = self._members() if callable(self._members) else self._members
        return None if found is None else tuple(found)

    def keys(self) -> list[str]:
        return [self.pattern.format(m) for m in self.members() or ()]

    def __repr__(self) -> str:
        return f"Family({self.pattern!r})"


def _declared_check_ids() -> tuple[str, ...]:
    from grader.checkdef import all_checks  # imports every check module: only when enumerating

    return tuple(all_checks())


#: The words of each check (title, why, hint), one family per part.
CHECK_TITLE = Family("check.{}.title", _declared_check_ids)
CHECK_WHY = Family("check.{}.why", _declared_check_ids)
CHECK_HINT = Family("check.{}.hint", _declared_check_ids)
#: The hint for a function that returned a value of the wrong type
#: (grader.report.view.fitting_hint).
WRONG_TYPE_HINT = Family("hint.wrong-type.{}", ("claim", "finish", "work_once"))
#: The hint for a function whose row is right but whose value is not (Kind.WRONG_VALUE); finish
#: has none: a finish that answers wrongly over a right row changed another row, its rule.
WRONG_VALUE_HINT = Family("hint.wrong-value.{}", ("claim", "work_once"))
#: A failure's detail sentence with a hint of its own: the check meets another rule than its
#: own there (in its setup, or on its way), and the check's hint would not fit it.
DETAIL_HINT = Family("hint.detail.{}", (
    "tokens.not-quarantined-for-requeue", "selection.only-spent-job-changes",
    "grader-write-locked", "grader-read-locked",
))
#: A check's outcome (grader.results.CheckResult.outcome).
OUTCOME = Family("outcome.{}", ("passed", "failed", "errored", "timed_out", "not_implemented",
                                 "resource_limit"))
#: A result kind that is worded from its own fields (grader.report.sentences.problem_line).
KIND = Family("kind.{}", ("not-implemented", "wrong-type", "wrong-value", "wrong-field-type", "syntax-error", "import-error",
                          "missing-function", "no-such-file", "own-connection"))
#: A shared cause of failures worded without what differs per check (grader.report.causes).
CAUSE = Family("cause.{}", ("wrong-type", "wrong-field-type", "timed-out", "timed-out-import",
                              "send-in-transaction", "isolation-level-changed",
                              "transaction-left-open", "not-graded", "own-connection"))
#: Which resource limit ran out (grader.harness.processes.sandbox.LIMIT_SIGNALS: CPU time, file
#: size; grader.harness.judge.outcomes.limit_hit: memory, file size).
LIMIT = Family("limit.{}", ("memory", "file-size", "cpu-time"))
#: A call into the target or a step of the Lab on the timeline (the event's "op").
TIMELINE = Family("timeline.{}", ("enqueue", "requeue", "import", "claim", "finish", "work_once"))
#: A check's own sentence about its failure: the names are given where the check fails.
DETAIL = Family("detail.{}", None)

# Families built inside the checks and the instructor tools (their members are declared here,
# next to the words; tests/test_catalogue.py holds code and declaration together).
#: test_race: a child that exited or never answered.
RACE_CHILD = Family("detail.race-{}", ("exited", "no-answer"))
#: Every check: the rule a call broke (grader.harness.judge.invariants.Broken.rule).
INVARIANT = Family("detail.invariant-{}", ("transaction-open", "statement-running", "rows",
                                           "clock-before-send-returned", "send-in-transaction",
                                           "send-statement-running", "busy-timeout-lowered"))
#: test_lock_probe: what work_once's open transaction blocked.
LOCK_BLOCKED = Family("detail.lock-blocked-{}", ("both", "enqueue", "claim"))
#: test_stamps: the field of a forged stamp that finish accepted.
STAMP_FORGED = Family("detail.stamps.forged-{}-accepted",
                      ("id", "owner", "token", "attempt", "lease_until"))
#: test_crash: the state a killed claim left the job in (a half claim fails instead).
CRASH_STATE = Family("crash.{}", ("untouched", "claimed"))
#: test_integration: a worker's event or the grader's own step on the timeline.
INTEGRATION_EVENT = Family("timeline.integration.{}", (
    "bad-claim", "clock", "crashed", "exited", "exited-signal", "holding", "journal-mode",
    "load-error", "open-failed", "protocol", "raised", "receiver", "release", "release-after-stop",
    "released", "returned", "returned-nothing", "sent", "stopped-no-go", "stopped-no-turn",
    "stopped-rounds", "timed-out", "turns"))
#: grader.instructor.isolated: a submission's status in a batch.
INSTRUCTOR_STATUS = Family("instructor.status.{}",
                           ("graded", "timed_out", "crashed", "missing", "ambiguous",
                            "not_regular", "too_large"))
#: grader.instructor: why a submission could not be graded (its files).
INSTRUCTOR_NOT_GRADED = Family("instructor.{}", ("missing", "ambiguous", "not_regular"))
#: grader.instructor.isolated: which bound of the copy a submission is over (TooLarge.kind).
INSTRUCTOR_TOO_LARGE = Family("instructor.too-large.{}", ("file", "entries", "total"))
#: grader.instructor.lms: why a roster is refused (RosterError.kind).
ROSTER_PROBLEM = Family("instructor.roster.{}", ("unreadable", "no-header", "unknown-column",
                                                 "repeated-column", "long-row", "no-submission",
                                                 "duplicate"))
#: grader.quiz.answers: a problem of an answers file (Problem.key).
QUIZ_ERROR = Family("quiz.error.{}", ("duplicate", "malformed", "unknown-choice",
                                      "unknown-question", "unreadable"))
def _declared_commands() -> tuple[str, ...]:
    from grader.commands import SUBCOMMANDS

    return tuple(SUBCOMMANDS)


#: grader.cli: the one line `python -m grader --help` gives each command (grader.commands).
CLI_COMMAND = Family("cli.command.{}", _declared_commands)

FAMILIES = (CHECK_TITLE, CHECK_WHY, CHECK_HINT, WRONG_TYPE_HINT, WRONG_VALUE_HINT, DETAIL_HINT,
            OUTCOME, LIMIT, KIND, CAUSE, TIMELINE, DETAIL, RACE_CHILD, LOCK_BLOCKED, STAMP_FORGED, CRASH_STATE,
            INTEGRATION_EVENT, INSTRUCTOR_STATUS, INSTRUCTOR_NOT_GRADED, INSTRUCTOR_TOO_LARGE, ROSTER_PROBLEM,
            QUIZ_ERROR, CLI_COMMAND)


def default_lang(environ=os.environ) -> str:
    """Japanese when the locale says so (LC_ALL, then LC_MESSAGES, then LANG), else English."""
    for name in ("LC_ALL", "LC_MESSAGES", "LANG"):
        value = environ.get(name)
        if value:
            return "ja" if value.lower().startswith("ja") else "en"
    return "en"
