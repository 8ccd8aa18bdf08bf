"""`python -m grader quiz`: the quiz that follows the lesson.

    python -m grader quiz                      interactive, one question at a time
    python -m grader quiz --answers FILE       score an answers file (see grader/quiz/answers.py)
    python -m grader quiz --answers FILE --json results.json
    python -m grader quiz --list               question ids and titles
    python -m grader quiz --template           a blank answers file

Exit status: 0 every question answered correctly, 1 any wrong or not answered, 2 the quiz cannot
run (bad arguments, an answers file it cannot score, a broken question bank).
"""

from __future__ import annotations

import os
import sys
import time

from grader import arguments
from grader.report import results_json
from grader.report.messages import QUIZ_ERROR, default_lang, text
from grader.report.render import Style
from . import answers as answers_file
from . import interactive, scoring
from .bank import BankError, default_bank


def parser() -> arguments.Parser:
    p = arguments.Parser(prog="python -m grader quiz",
                         description="The lease lab quiz (interactive, or score an "
                                     "answers file).")
    p.add_argument("--lang", choices=("en", "ja"), help="language (default: from the locale)")
    mode = p.add_mutually_exclusive_group()
    mode.add_argument("--answers", metavar="FILE",
                      help="score this answers file (one 'question-id: letter' per line)")
    mode.add_argument("--list", action="store_true", help="print the question ids and titles")
    mode.add_argument("--template", action="store_true", help="print a blank answers file")
    p.add_argument("--json", metavar="PATH", help="write Gradescope results.json here")
    return p


def main(argv: list[str] | None = None) -> int:
    try:
        return _main(argv)
    except BrokenPipeError:  # `... | head`: the reader left; stop quietly
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 1


def _main(argv: list[str] | None) -> int:
    args = parser().parse_command(argv)
    if isinstance(args, int):  # --help, or a bad argument
        return args
    lang = args.lang or default_lang()
    try:
        bank = default_bank()
    except BankError as exc:
        print(text("quiz.error.bank", lang), *exc.problems, sep="\n  ", file=sys.stderr)
        return 2
    if args.list:
        width = max(len(q.id) for q in bank)
        print("\n".join(f"{q.id:<{width}}  {q.text(lang).title}" for q in bank))
        return 0
    if args.template:
        sys.stdout.write(answers_file.template(bank, lang))
        return 0
    style = Style.for_stream(sys.stdout)
    start = time.monotonic()
    if args.answers:
        try:
            given = answers_file.read(args.answers, bank)
        except answers_file.AnswersError as exc:
            print("\n".join(error_lines(exc, lang)), file=sys.stderr)
            return 2
        graded = scoring.grade(bank, given)
        print("\n".join(scoring.summary_lines(graded, lang, style)))
    else:
        graded = interactive.run(bank, lang, sys.stdin, sys.stdout, style)
    if args.json:
        results_json.write(args.json, scoring.results_json(
            graded, lang, answers=args.answers, duration=time.monotonic() - start))
        print(text("quiz.results-written", lang, path=args.json))
    return 0 if all(g.correct for g in graded) else 1


def error_lines(exc: answers_file.AnswersError, lang: str) -> list[str]:
    """Every problem of an answers file, one line each, naming the file and the line."""
    lines = [text("quiz.error.header", lang, file=exc.path, count=len(exc.problems))]
    for problem in exc.problems:
        params = dict(problem.params)
        if problem.key == "unknown-question":
            close = params.pop("close", None)
            params["suggestion"] = text("quiz.error.did-you-mean", lang, id=close) if close else ""
        where = f"{exc.path}:{problem.line}" if problem.line else exc.path
        lines.append(f"  {where}: " + text(QUIZ_ERROR(problem.key), lang, **params))
    return lines
