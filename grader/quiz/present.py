"""Questions and verdicts as text, in English or Japanese: shared by the interactive quiz, the
answers-file summary and results.json.

A scenario question's story is drawn from its steps (with the grader's own timeline wording, so
the quiz reads like the grader's failure reports), and its choices from their outcomes: the text
a student reads cannot drift from the scenario the tests run.
"""

from __future__ import annotations

from lab.store import COLUMNS, Claim

from grader.harness.judge.outcomes import show
from grader.report import wrapping
from grader.report.messages import text
from grader.report.render import PLAIN, Style, timeline_lines
from grader.report.sentences import value
from .bank import Question


def wrap(paragraph: str, lang: str, indent: str = "", hanging: str | None = None) -> list[str]:
    """The quiz's paragraphs, at a fixed width whatever the terminal (they also go into its
    results.json and answers template, which must not depend on it), Japanese left whole."""
    if lang == "ja":
        return [indent + paragraph]
    return wrapping.wrap(paragraph, lang, indent, hanging, width=wrapping.FALLBACK)


def choice_text(question: Question, choice_id: str, lang: str) -> str:
    """The words of one choice (without its letter)."""
    if question.kind == "choice":
        return question.text(lang).choices[choice_id]
    choice = question.choice(choice_id)
    returns = show(Claim(**choice.returns)) if isinstance(choice.returns, dict) else show(
        choice.returns)
    row = ", ".join(f"{c}={value(choice.row[c])}" for c in COLUMNS if c in choice.row)
    return text("quiz.outcome", lang, returns=returns, job=question.row_of, row=row)


def labelled(question: Question, choice_id: str, lang: str) -> str:
    return f"{choice_id}) {choice_text(question, choice_id, lang)}"


def question_lines(question: Question, number: int, count: int, lang: str,
                   style: Style = PLAIN) -> list[str]:
    t = question.text(lang)
    lines = [style("dim", text("quiz.question-head", lang, n=number, count=count,
                               id=question.id)),
             style("bold", t.title), ""]
    lines += wrap(t.prompt, lang)
    if question.kind == "scenario":
        lines += ["", text("quiz.timeline", lang)]
        lines += ["  " + line for line in timeline_lines(story(question, lang), lang, style)]
    lines.append("")
    for choice_id in question.choice_ids:
        lines += wrap(labelled(question, choice_id, lang), lang, "  ", "     ")
    return lines


def verdict_lines(question: Question, given: str | None, lang: str,
                  style: Style = PLAIN) -> list[str]:
    """Right or wrong, what the chosen answer misses, and the explanation."""
    t = question.text(lang)
    correct = wrap(text("quiz.correct-answer", lang,
                        choice=labelled(question, question.answer, lang)), lang)
    feedback = wrap(t.feedback[given], lang, "  ") if given in t.feedback else []
    if given == question.answer:
        lines = [style("green", text("quiz.correct", lang)), *feedback]
    elif given is None:
        lines = [style("red", text("quiz.no-answer", lang)), *correct]
    else:
        lines = [style("red", text("quiz.wrong", lang, answer=question.answer)),
                 *wrap(text("quiz.your-answer", lang, choice=labelled(question, given, lang)),
                       lang),
                 *feedback, *correct]
    lines += wrap(f"{text('quiz.explanation', lang)} {t.explanation}", lang)
    return lines


def story(question: Question, lang: str) -> list[dict]:
    """The scenario's steps as timeline events; the asked step's result is '?'."""
    events: list[dict] = []
    claims: dict[str, dict] = {}
    jobs = 0
    for step in question.steps:
        what = step["do"]
        result = step.get("result", "?")
        if what == "enqueue":
            jobs += 1
            events.append({"op": "enqueue", "job": jobs, "qty": step["qty"],
                           "deadline": step["deadline"],
                           "max_attempts": step.get("max_attempts", 3)})
        elif what == "requeue":
            events.append({"op": "requeue", "job": step["job"]})
        elif what == "note":
            events.append({"op": "note", "key": "quiz.note",
                           "params": {"text": question.text(lang).notes[step["note"]]}})
        elif what == "claim":
            if "as" in step:
                claims[step["as"]] = {"owner": step["owner"], **(step.get("result") or {})}
            events.append({"op": "claim", "actor": step["owner"], "t": step["t"],
                           "lease_ms": step["lease_ms"], "result": result})
        elif what == "finish":
            stamp = claims[step["stamp"]]
            events.append({"op": "finish", "actor": stamp["owner"], "t": step["t"],
                           "stamp": stamp, "result": result})
    return events
