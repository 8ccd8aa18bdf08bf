"""Score answers against the key: one point per question; a question not answered scores 0.

`results_json` builds the same shape as the grader's results.json (Gradescope), its tests made by
grader.report.results_json.entry: extra_data.check_id is here the question id, so instructors
collect quiz results in CI the same way as lab results.
"""

from __future__ import annotations

from dataclasses import dataclass

from grader.report import results_json as results_shape
from grader.report.messages import text
from grader.report.render import PLAIN, Style
from .bank import Bank, Question
from .present import choice_text, labelled, verdict_lines, wrap

POINTS = 1


@dataclass(frozen=True)
class Graded:
    question: Question
    given: str | None   # the chosen letter, or None when not answered

    @property
    def correct(self) -> bool:
        return self.given == self.question.answer

    @property
    def score(self) -> int:
        return POINTS if self.correct else 0


def grade(bank: Bank, answers: dict[str, str | None]) -> list[Graded]:
    """Every question of the bank, in bank order, with the answer given to it (if any)."""
    return [Graded(q, answers.get(q.id)) for q in bank]


def counts(graded: list[Graded]) -> dict[str, int]:
    correct = sum(g.correct for g in graded)
    unanswered = sum(g.given is None for g in graded)
    return {"correct": correct, "wrong": len(graded) - correct - unanswered,
            "unanswered": unanswered, "score": correct * POINTS,
            "max_score": len(graded) * POINTS}


def score_lines(graded: list[Graded], lang: str, style: Style = PLAIN,
                reveal_unanswered: bool = True) -> list[str]:
    """The score, then every question missed (wrong or not answered) with its right answer;
    `reveal_unanswered=False` (a quiz stopped early): the questions never asked are counted, their
    answers kept back for the next try."""
    c = counts(graded)
    lines = [style("bold", text("quiz.score", lang, **c)) + "   " + text("quiz.summary", lang, **c)]
    if c["correct"] == len(graded):
        lines.append(style("green", text("quiz.all-correct", lang)))
    lines += missed_lines([g for g in graded if reveal_unanswered or g.given], lang, style)
    kept = 0 if reveal_unanswered else sum(1 for g in graded if not g.given)
    if kept:
        lines += wrap(text("quiz.unanswered-kept", lang, count=kept), lang, "")
    return lines


def missed_lines(graded: list[Graded], lang: str, style: Style = PLAIN) -> list[str]:
    """One entry per missed question: its title and id, the answer given and the right one."""
    missed = [g for g in graded if not g.correct]
    if not missed:
        return []
    lines = [text("quiz.missed", lang, count=len(missed))]
    for g in missed:
        q = g.question
        right = labelled(q, q.answer, lang)
        said = (text("quiz.missed-wrong", lang, given=g.given, choice=right) if g.given
                else text("quiz.missed-unanswered", lang, choice=right))
        lines.append(f"  {style('red', '✗')} {q.text(lang).title}  {style('dim', q.id)}")
        lines += wrap(said, lang, "      ")
    return lines


def summary_lines(graded: list[Graded], lang: str, style: Style = PLAIN) -> list[str]:
    """The terminal report for an answers file: one line per question, the teaching text under
    each miss, then the score."""
    lines = []
    for g in graded:
        mark = style("green", "✓") if g.correct else style("red", "✗")
        lines.append(f"{mark} {g.question.text(lang).title}  {style('dim', g.question.id)}")
        if not g.correct:
            lines += ["    " + line for line in verdict_lines(g.question, g.given, lang, style)]
            lines.append("")
    return lines + [""] + score_lines(graded, lang, style)


def missed_entries(graded: list[Graded], lang: str) -> list[dict]:
    """The missed questions as data (results.json): id, title, the answer given (letter and
    text, None when not answered) and the right one."""
    return [{"id": g.question.id, "title": g.question.text(lang).title,
             "answer": g.given,
             "answer_text": choice_text(g.question, g.given, lang) if g.given else None,
             "key": g.question.answer,
             "key_text": choice_text(g.question, g.question.answer, lang)}
            for g in graded if not g.correct]


def results_json(graded: list[Graded], lang: str, *, answers: str | None,
                 duration: float) -> dict:
    """results.json: `output` is the score as the terminal ends it (the missed questions with
    their right answers included), extra_data.missed the same list as data."""
    tests = [_test(g, lang) for g in graded]
    c = counts(graded)
    return {
        "score": c["score"],
        "max_score": c["max_score"],
        "execution_time": round(duration, 3),
        "output": "\n".join(score_lines(graded, lang)),
        "tests": tests,
        "extra_data": {"quiz": True, "answers": answers, "lang": lang, **c,
                       "missed": missed_entries(graded, lang)},
    }


def _test(g: Graded, lang: str) -> dict:
    """One question as a results.json test: extra_data holds the answer given and the key."""
    q = g.question
    return results_shape.entry(q.id, q.text(lang).title, score=g.score, max_score=POINTS,
                               passed=g.correct, output="\n".join(verdict_lines(q, g.given, lang)),
                               answer=g.given, key=q.answer, topics=list(q.topics))
