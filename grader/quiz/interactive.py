"""The quiz in a terminal: one question at a time, immediate feedback with the explanation.

Reads stdin line by line, so it works the same from a keyboard, a pipe or a test's `input=`:
an answer that is not a choice is asked again, `q` or end of input (Ctrl-D) stops and scores
the questions answered so far (the rest count as not answered).
"""

from __future__ import annotations

from typing import TextIO

from grader.report.messages import text
from grader.report.render import Style
from .bank import Bank
from .present import question_lines, verdict_lines
from .scoring import Graded, grade, score_lines

QUIT = ("q", "quit", "exit")


class _Stop(Exception):
    pass


def run(bank: Bank, lang: str, stdin: TextIO, stdout: TextIO, style: Style) -> list[Graded]:
    def say(*lines: str) -> None:
        stdout.write("".join(line + "\n" for line in lines))
        stdout.flush()

    echo = not _isatty(stdin)  # piped input is not echoed by a terminal: show it in the transcript
    say(style("bold", text("quiz.header", lang, count=len(bank))), text("quiz.intro", lang))
    answers: dict[str, str] = {}
    stopped = False
    try:
        for number, question in enumerate(bank, 1):
            say("", *question_lines(question, number, len(bank), lang, style), "")
            answers[question.id] = _ask(question.choice_ids, lang, stdin, stdout, say, echo)
            say(*verdict_lines(question, answers[question.id], lang, style))
    except (_Stop, KeyboardInterrupt):
        stopped = True
        say("", text("quiz.stopped", lang, answered=len(answers), count=len(bank)))
    graded = grade(bank, answers)
    # stopped early: the answers of the questions never asked are not shown (the next try asks)
    say("", *score_lines(graded, lang, style, reveal_unanswered=not stopped))
    return graded


def _ask(choices: tuple[str, ...], lang: str, stdin: TextIO, stdout: TextIO, say, echo) -> str:
    shown = "/".join(choices)
    while True:
        stdout.write(text("quiz.ask", lang, choices=shown))
        stdout.flush()
        line = stdin.readline()
        if not line:            # end of input
            say("")
            raise _Stop
        answer = line.strip().lower()
        if echo:
            say(answer)
        if answer in QUIT:
            raise _Stop
        if answer in choices:
            return answer
        if answer:
            say(text("quiz.invalid", lang, given=line.strip(), choices=shown))


def _isatty(stream) -> bool:
    try:
        return stream.isatty()
    except (AttributeError, ValueError):
        return False
