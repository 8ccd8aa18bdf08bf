"""Answers files: what a student hands in for `python -m grader quiz --answers FILE`.

    # comments start with '#', anywhere on a line; blank lines are fine
    owner-is-a-name: b
    job-id-vs-token: D          # letters in any case
    attempts-vs-token:          # nothing after the colon: not answered (scores 0, not an error)

One `question-id: letter` per line. A question missing from the file is not answered. Every
other deviation is an error naming the line: a malformed line, an unknown question, a choice the
question does not have, a question answered twice. All errors are collected, not just the first.
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass, field
from pathlib import Path

from .bank import Bank


@dataclass(frozen=True)
class Problem:
    line: int | None   # 1-based; None for a problem with the file as a whole
    key: str           # catalogue key quiz.error.<key>
    params: dict = field(default_factory=dict)


class AnswersError(Exception):
    """The answers file cannot be scored; `problems` says where and why."""

    def __init__(self, path: str, problems: list[Problem]):
        super().__init__(f"{path}: {len(problems)} problem(s)")
        self.path = path
        self.problems = problems


def read(path: str | Path, bank: Bank) -> dict[str, str | None]:
    """Read and parse the answers file at `path` ('-' is not special: give a real file)."""
    try:
        content = Path(path).read_bytes().decode("utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
        raise AnswersError(str(path), [Problem(None, "unreadable", {"error": reason})]) from None
    return parse(content, bank, name=str(path))


def parse(content: str, bank: Bank, name: str = "<answers>") -> dict[str, str | None]:
    """question id -> choice id (None: explicitly not answered), in file order."""
    answers: dict[str, str | None] = {}
    first_line: dict[str, int] = {}
    problems: list[Problem] = []
    content = content.removeprefix("\ufeff")  # a BOM some editors write
    for number, raw in enumerate(content.splitlines(), 1):
        line = raw.split("#", 1)[0].strip()
        if not line:
            continue
        question_id, colon, choice = (part.strip() for part in line.partition(":"))
        if not colon or not question_id or " " in question_id or any(
                c in choice for c in " \t:"):
            problems.append(Problem(number, "malformed", {"text": raw.strip()}))
            continue
        question = bank.get(question_id)
        if question is None:
            close = difflib.get_close_matches(question_id, bank.ids, n=1)
            problems.append(Problem(number, "unknown-question",
                                    {"id": question_id, "close": close[0] if close else None}))
            continue
        if question_id in first_line:
            problems.append(Problem(number, "duplicate",
                                    {"id": question_id, "first": first_line[question_id]}))
            continue
        first_line[question_id] = number
        choice = choice.lower() or None
        if choice is not None and choice not in question.choice_ids:
            problems.append(Problem(number, "unknown-choice",
                                    {"id": question_id, "choice": choice,
                                     "choices": ", ".join(question.choice_ids)}))
            continue
        answers[question_id] = choice
    if problems:
        raise AnswersError(name, problems)
    return answers


def template(bank: Bank, lang: str) -> str:
    """A blank answers file: every question as the interactive quiz shows it (title, text,
    timeline, choices), commented out above its `question-id:` line, nothing answered yet.

    Every line break `parse` would see (str.splitlines: also \\r, \\u2028, \\x85, ...) starts a
    new comment line, so no text of the bank can step out of the comments."""
    from grader.report.messages import text
    from .present import question_lines

    def commented(lines: list[str]) -> list[str]:
        return [f"# {part}".rstrip() for line in lines for part in line.splitlines() or [""]]

    lines = commented([text(key, lang) for key in ("quiz.template.head", "quiz.template.how")])
    for number, q in enumerate(bank, 1):
        lines += ["", *commented(question_lines(q, number, len(bank), lang)), f"{q.id}:"]
    return "\n".join(lines) + "\n"
