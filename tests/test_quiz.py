"""The quiz companion (`python -m grader quiz`): the bank is whole in both languages and covers
every topic, scenario keys are what the reference actually does, answers files are scored or
refused line by line, the interactive mode teaches as it goes, and results.json has the
grader's shape."""

from __future__ import annotations

import dataclasses
import inspect
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from grader.report import results_json
from grader.report.messages import LANGS
from grader.quiz import answers, bank, present, scenarios
from grader.quiz.bank import TOPICS, BankError, default_bank

from conftest import MUTANTS, ROOT

reference = "solutions.queue"  # graded in a target process, as in a grade

BANK = default_bank()
SCENARIOS = [q for q in BANK if q.kind == "scenario"]


def quiz(*args: str, input: str | None = None, lang_env: str = "C.UTF-8", cwd: Path = ROOT):
    """`python -m grader quiz ARGS` as a student or CI runs it, stdin fed from `input`."""
    env = {**os.environ, "NO_COLOR": "1", "LANG": lang_env}
    for name in ("LC_ALL", "LC_MESSAGES"):
        env.pop(name, None)
    return subprocess.run([sys.executable, "-m", "grader", "quiz", *args], cwd=cwd, env=env,
                          input=input if input is not None else "", capture_output=True,
                          text=True, timeout=60)


def key_file(**overrides: str | None) -> str:
    """An answers file with the right answer everywhere, except `overrides` (id -> letter)."""
    lines = []
    for q in BANK:
        letter = overrides.get(q.id.replace("-", "_"), q.answer)
        lines.append(f"{q.id}: {letter or ''}")
    return "\n".join(lines) + "\n"


def wrong_letter(question) -> str:
    return next(c for c in question.choice_ids if c != question.answer)


# -- the bank ------------------------------------------------------------------------------
def test_bank_covers_every_topic_with_14_to_20_questions():
    covered = {topic for q in BANK for topic in q.topics}
    assert covered == set(TOPICS)
    assert 14 <= len(BANK) <= 20
    assert len(set(BANK.ids)) == len(BANK)
    assert {q.kind for q in BANK} == {"choice", "scenario"}


@pytest.mark.parametrize("question", BANK.questions, ids=BANK.ids)
def test_every_question_is_whole_in_both_languages(question):
    assert bank.ID_PATTERN.match(question.id)
    assert question.answer in question.choice_ids
    for lang in LANGS:
        t = question.texts[lang]
        assert t.title and t.prompt and t.explanation, lang
        if question.kind == "choice":
            assert set(t.choices) == set(question.choice_ids), lang
            assert all(t.choices.values()), lang
    assert set(question.texts["en"].feedback) == set(question.texts["ja"].feedback)


@pytest.mark.parametrize("question", BANK.questions, ids=BANK.ids)
def test_every_distractor_is_a_misconception_the_quiz_answers(question):
    """A wrong choice is there because a student could hold it: each has its feedback, saying
    what it gets wrong, in both languages."""
    wrong = set(question.choice_ids) - {question.answer}
    for lang in LANGS:
        feedback = question.texts[lang].feedback
        assert wrong <= set(feedback) and all(feedback[c].strip() for c in wrong), lang


def test_no_distractor_blames_sqlite_for_a_rule_it_does_not_have():
    """Throwaway distractors ('SQLite refuses ...', 'SQLite forbids ...') were replaced by
    misconceptions about the lease and the token; keep them out."""
    throwaways = ("SQLite refuses", "SQLite forbids", "SQLite cannot store",
                  "evaluates <= differently")
    texts = [t for q in BANK if q.kind == "choice" for t in q.text("en").choices.values()]
    assert [t for t in texts if any(w in t for w in throwaways)] == []


def test_the_key_is_not_given_away_by_being_the_longest_choice():
    """Test-wise students pick the longest choice; it may be the key only now and then."""
    pairs = [(q, lang) for q in BANK if q.kind == "choice" for lang in LANGS]
    giveaways = 0
    for q, lang in pairs:
        lengths = sorted(((len(text), cid) for cid, text in q.text(lang).choices.items()),
                         reverse=True)
        giveaways += lengths[0][1] == q.answer and lengths[0][0] > lengths[1][0]
    assert giveaways <= len(pairs) // 3


def test_the_answer_keys_are_spread_over_the_letters():
    letters = [q.answer for q in BANK]
    assert max(letters.count(c) for c in set(letters)) <= len(letters) // 2


def broken_bank(tmp_path: Path, edit) -> Path:
    """A copy of the shipped bank with one edit: edit(structure, {lang: texts})."""
    for path in bank.HERE.glob("questions*.json"):
        shutil.copy(path, tmp_path / path.name)
    structure = json.loads((tmp_path / "questions.json").read_text(encoding="utf-8"))
    texts = {lang: json.loads((tmp_path / f"questions.{lang}.json").read_text(encoding="utf-8"))
             for lang in LANGS}
    edit(structure, texts)
    (tmp_path / "questions.json").write_text(json.dumps(structure), encoding="utf-8")
    for lang in LANGS:
        (tmp_path / f"questions.{lang}.json").write_text(json.dumps(texts[lang]),
                                                         encoding="utf-8")
    return tmp_path


FIRST = BANK.ids[0]
FIRST_SCENARIO = SCENARIOS[0].id


def _q(structure, qid):
    return next(q for q in structure["questions"] if q["id"] == qid)


BREAKAGES = {
    "ja text missing": (lambda s, t: t["ja"].pop(FIRST),
                        f"questions.ja.json: {FIRST}: missing"),
    "en explanation missing": (lambda s, t: t["en"][FIRST].pop("explanation"),
                               f"questions.en.json: {FIRST}: needs a non-empty explanation"),
    "choice text missing": (lambda s, t: t["ja"][FIRST]["choices"].pop("d"),
                            f"questions.ja.json: {FIRST}: choices needs a text"),
    "feedback in one language only": (lambda s, t: t["ja"][FIRST]["feedback"].pop("a"),
                                      "feedback is given for different choices"),
    "duplicate id": (lambda s, t: s["questions"].append(dict(s["questions"][0])),
                     f"{FIRST}: id used twice"),
    "unknown topic": (lambda s, t: _q(s, FIRST)["topics"].append("vibes"),
                      "unknown topic 'vibes'"),
    "key not a choice": (lambda s, t: _q(s, FIRST).update(answer="z"),
                         "answer must be one of the choices"),
    "text for no question": (lambda s, t: t["en"].update({"ghost": t["en"][FIRST]}),
                             "questions.en.json: ghost: no such question"),
    "scenario asks a setup step": (lambda s, t: _q(s, FIRST_SCENARIO)["steps"][-1].update(
        result=False), "the asked step (the last) must not give its result"),
    "scenario choices differ in columns": (
        lambda s, t: _q(s, FIRST_SCENARIO)["choices"][0]["row"].pop("status"),
        "every choice must name the same row columns"),
}


@pytest.mark.parametrize("name", BREAKAGES)
def test_a_broken_bank_is_refused_with_the_reason(name, tmp_path):
    edit, message = BREAKAGES[name]
    with pytest.raises(BankError) as refused:
        bank.load(broken_bank(tmp_path, edit))
    assert any(message in problem for problem in refused.value.problems), refused.value.problems


def test_every_quiz_message_has_english_and_japanese():
    entries = json.loads((ROOT / "grader" / "report" / "catalogue" / "quiz.json").read_text("utf-8"))
    for key, texts in entries.items():
        assert key.startswith("quiz.")
        assert set(texts) == set(LANGS) and all(texts.values()), key


# -- scenario questions: the key is what the reference does ---------------------------------
@pytest.mark.parametrize("question", SCENARIOS, ids=[q.id for q in SCENARIOS])
def test_scenario_key_is_what_the_reference_does(question):
    assert scenarios.derive_answer(question, reference) == question.answer


def name_check_finish(conn, claim, now):
    """finish matching the worker's name and the row's own lease, not the whole stamp."""
    cur = conn.execute(
        "UPDATE jobs SET status = 'done', finished_at = ? WHERE id = ? AND status = 'leased'"
        " AND owner = ? AND ? < lease_until AND ? < deadline",
        (now, claim.id, claim.owner, now, now))
    return cur.rowcount == 1


@pytest.mark.parametrize("mutant, question_id, its_answer", [
    ("boundary_finish_at_expiry_accepted", "finish-at-lease-until", "b"),
    ("name-check finish", "restart-same-name", "b"),
])
def test_a_wrong_key_would_be_caught(mutant, question_id, its_answer, tmp_path):
    """Run against a buggy implementation, the scenario picks a different choice: so the test
    above compares the key with real behaviour, and would fail if the key were that choice."""
    if mutant == "name-check finish":
        code = tmp_path / "name_check.py"
        code.write_text("from solutions.queue import claim, work_once\n\n\n"
                        + inspect.getsource(name_check_finish).replace("name_check_finish",
                                                                       "finish"))
        code = str(code)
    else:
        code = str(MUTANTS / f"{mutant}.py")
    question = BANK.get(question_id)
    assert scenarios.derive_answer(question, code) == its_answer != question.answer
    with_wrong_key = dataclasses.replace(question, answer=its_answer)
    assert scenarios.derive_answer(with_wrong_key, reference) != with_wrong_key.answer


def test_the_story_shown_is_checked_too():
    """A setup step whose told result is not what happens fails the scenario run."""
    question = BANK.get("late-finish-after-reclaim")
    steps = [dict(s) for s in question.steps]
    steps[2]["result"] = {"token": 1, "lease_until": 2000}  # B's claim told as token=1
    told_wrong = dataclasses.replace(question, steps=tuple(steps))
    with pytest.raises(scenarios.ScenarioError, match="step 3 .* returned"):
        scenarios.run(told_wrong, reference)


# -- answers files -------------------------------------------------------------------------
def test_answers_file_tolerates_comments_blank_lines_case_and_bom():
    content = "\ufeff# my answers\n\n  owner-is-a-name :  B   # sure\n\njob-id-vs-token:\n"
    assert answers.parse(content, BANK) == {"owner-is-a-name": "b", "job-id-vs-token": None}


BAD_FILES = {
    "malformed": ("owner-is-a-name: b\nthis line has no colon\n",
                  [(2, "cannot read “this line has no colon”")]),
    "two letters": ("owner-is-a-name: b c\n", [(1, "cannot read")]),
    "unknown question": ("owner-is-a-nmae: b\n",
                         [(1, "no question “owner-is-a-nmae” (did you mean “owner-is-a-name”?)")]),
    "unknown choice": ("# header\nfinish-at-lease-until: d\n",
                       [(2, "“d” is not a choice of finish-at-lease-until; its choices are a, b, c")]),
    "duplicate": ("owner-is-a-name: b\n\nowner-is-a-name: a\n",
                  [(3, "owner-is-a-name is answered a second time (first on line 1)")]),
    "several": ("nonsense\nowner-is-a-name: q\nowner-is-a-name: b\n",
                [(1, "cannot read"), (2, "not a choice"), (3, "answered a second time")]),
}


@pytest.mark.parametrize("name", BAD_FILES)
def test_bad_answers_file_names_the_line_and_exits_2(name, tmp_path):
    content, expected = BAD_FILES[name]
    path = tmp_path / "answers.txt"
    path.write_text(content, encoding="utf-8")
    out = tmp_path / "results.json"
    proc = quiz("--answers", str(path), "--json", str(out))
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert proc.stdout == "" and not out.exists()
    errors = proc.stderr.splitlines()
    assert f"Cannot score the answers file {path} ({len(expected)} problem(s))" in errors[0]
    assert len(errors) == 1 + len(expected)
    for line, (number, snippet) in zip(errors[1:], expected):
        assert line.startswith(f"  {path}:{number}: ") and snippet in line, line


def test_bad_answers_file_in_japanese(tmp_path):
    path = tmp_path / "answers.txt"
    path.write_text("owner-is-a-name: z\n", encoding="utf-8")
    proc = quiz("--answers", str(path), "--lang", "ja")
    assert proc.returncode == 2
    assert f"{path}:1: 「z」は owner-is-a-name の選択肢ではありません" in proc.stderr


@pytest.mark.parametrize("content", [None, b"owner-is-a-name: \xff\n"],
                         ids=["missing", "not-utf8"])
def test_unreadable_answers_file_exits_2(content, tmp_path):
    path = tmp_path / "answers.txt"
    if content is not None:
        path.write_bytes(content)
    proc = quiz("--answers", str(path))
    assert proc.returncode == 2
    assert f"{path}: cannot read the file" in proc.stderr


def test_all_right_answers_score_full_marks(tmp_path):
    path = tmp_path / "answers.txt"
    path.write_text(key_file(), encoding="utf-8")
    out = tmp_path / "results.json"
    proc = quiz("--answers", str(path), "--json", str(out))
    assert proc.returncode == 0, proc.stderr
    assert f"Score: {len(BANK)} / {len(BANK)}" in proc.stdout
    assert "Every answer is right." in proc.stdout
    results = json.loads(out.read_text(encoding="utf-8"))
    assert results["score"] == results["max_score"] == len(BANK)


def test_wrong_and_missing_answers_are_scored_and_explained(tmp_path):
    wrong = BANK.get("finish-at-lease-until")
    lines = [line for line in key_file(finish_at_lease_until=wrong_letter(wrong),
                                       owner_is_a_name=None).splitlines()
             if not line.startswith("job-id-vs-token")]   # left out entirely
    path = tmp_path / "answers.txt"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    out = tmp_path / "results.json"
    proc = quiz("--answers", str(path), "--json", str(out))
    assert proc.returncode == 1
    n = len(BANK)
    assert f"Score: {n - 3} / {n}   {n - 3} correct, 1 wrong, 2 not answered" in proc.stdout
    assert wrong.text("en").feedback[wrong_letter(wrong)][:40] in proc.stdout.replace("\n  ", " ")
    results = json.loads(out.read_text(encoding="utf-8"))
    tests = {t["extra_data"]["check_id"]: t for t in results["tests"]}
    assert tests["finish-at-lease-until"]["status"] == "failed"
    assert tests["finish-at-lease-until"]["extra_data"]["answer"] == wrong_letter(wrong)
    assert tests["job-id-vs-token"]["extra_data"]["answer"] is None
    assert "Not answered." in tests["owner-is-a-name"]["output"]
    assert results["score"] == n - 3


def review(out: str) -> str:
    """The list of missed questions after the score, as one line (wrapping undone)."""
    return " ".join(out[out.index("Score: "):].split())


def right_answer(question) -> str:
    return f"the answer is {question.answer}) {present.choice_text(question, question.answer, 'en')}"


def test_the_score_lists_every_missed_question_with_its_right_answer(tmp_path):
    wrong, unanswered = BANK.get("finish-at-lease-until"), BANK.get("owner-is-a-name")
    path = tmp_path / "answers.txt"
    path.write_text(key_file(finish_at_lease_until=wrong_letter(wrong), owner_is_a_name=None),
                    encoding="utf-8")
    listed = review(quiz("--answers", str(path)).stdout)
    assert "To review (2):" in listed
    assert (f"✗ {wrong.text('en').title} {wrong.id} you answered {wrong_letter(wrong)}; "
            f"{right_answer(wrong)}") in listed
    assert (f"✗ {unanswered.text('en').title} {unanswered.id} not answered; "
            f"{right_answer(unanswered)}") in listed
    right = [q for q in BANK if q not in (wrong, unanswered)]
    assert not any(f" {q.id} " in listed for q in right)


MISSED_SAID = {"en": ("you answered {given}; the answer is {key}", "not answered; the answer is {key}"),
               "ja": ("あなたの答えは {given}。正解は {key}", "未回答。正解は {key}")}


@pytest.mark.parametrize("lang", LANGS)
def test_results_json_lists_the_missed_questions_with_their_right_answer(lang, tmp_path):
    """Gradescope shows results.json's top-level output first: it ends like the terminal, with
    the questions to review and their right answers; extra_data.missed holds them as data."""
    wrong, unanswered = BANK.get("finish-at-lease-until"), BANK.get("owner-is-a-name")
    given = wrong_letter(wrong)
    path = tmp_path / "answers.txt"
    path.write_text(key_file(finish_at_lease_until=given, owner_is_a_name=None), encoding="utf-8")
    out = tmp_path / "results.json"
    assert quiz("--answers", str(path), "--json", str(out), "--lang", lang).returncode == 1
    results = json.loads(out.read_text(encoding="utf-8"))
    output = " ".join(results["output"].split())
    said_wrong, said_unanswered = MISSED_SAID[lang]
    for q, said in ((wrong, said_wrong), (unanswered, said_unanswered)):
        said = said.format(given=given, key=present.labelled(q, q.answer, lang))
        assert f"✗ {q.text(lang).title} {q.id} {' '.join(said.split())}" in output, output
    right = [q for q in BANK if q not in (wrong, unanswered)]
    assert not any(f" {q.id} " in output for q in right)
    assert results["extra_data"]["missed"] == [
        {"id": unanswered.id, "title": unanswered.text(lang).title, "answer": None,
         "answer_text": None, "key": unanswered.answer,
         "key_text": present.choice_text(unanswered, unanswered.answer, lang)},
        {"id": wrong.id, "title": wrong.text(lang).title, "answer": given,
         "answer_text": present.choice_text(wrong, given, lang), "key": wrong.answer,
         "key_text": present.choice_text(wrong, wrong.answer, lang)},
    ]


def test_interactive_results_json_lists_the_missed_questions_too(tmp_path):
    first, second = BANK.questions[0], BANK.questions[1]
    out = tmp_path / "results.json"
    quiz("--json", str(out), input=f"{first.answer}\n{wrong_letter(second)}\nq\n")
    results = json.loads(out.read_text(encoding="utf-8"))
    output = " ".join(results["output"].split())
    assert f"To review ({len(BANK) - 1}):" in output
    assert f"{second.id} you answered {wrong_letter(second)}; {right_answer(second)}" in output
    assert [m["id"] for m in results["extra_data"]["missed"]] == list(BANK.ids[1:])


def test_results_json_has_the_graders_shape(tmp_path):
    path = tmp_path / "answers.txt"
    path.write_text(key_file(owner_is_a_name="a"), encoding="utf-8")
    out = tmp_path / "results.json"
    quiz("--answers", str(path), "--json", str(out), "--lang", "ja")
    results = json.loads(out.read_text(encoding="utf-8"))
    graders = results_json.build([], "en", target="lab/queue.py", duration=0.0)
    assert set(results) == set(graders)
    assert isinstance(results["score"], int) and results["max_score"] == len(BANK)
    assert [t["extra_data"]["check_id"] for t in results["tests"]] == list(BANK.ids)
    for t in results["tests"]:
        assert set(t) == {"name", "score", "max_score", "status", "output", "extra_data"}
        assert t["status"] in ("passed", "failed") and t["max_score"] == 1
        assert t["score"] == (1 if t["status"] == "passed" else 0)
        assert t["name"].endswith(f"[{t['extra_data']['check_id']}]")
        assert "解説:" in t["output"]
    assert results["score"] == sum(t["score"] for t in results["tests"]) == len(BANK) - 1
    assert results["extra_data"]["lang"] == "ja"


def filled(template: str, key_of) -> str:
    """The template with key_of(question_id) written after each question's colon, as a student
    fills it in: the comments are left as they are."""
    return "".join(line + (key_of(line[:-1]) if line.endswith(":") and not line.startswith("#")
                           else "") + "\n" for line in template.splitlines())


@pytest.mark.parametrize("lang", LANGS)
def test_template_filled_with_the_key_scores_full_marks(lang, tmp_path):
    proc = quiz("--template", "--lang", lang)
    assert proc.returncode == 0
    assert answers.parse(proc.stdout, BANK) == {qid: None for qid in BANK.ids}
    path = tmp_path / "answers.txt"
    path.write_text(filled(proc.stdout, lambda qid: " " + BANK.get(qid).answer), encoding="utf-8")
    out = tmp_path / "results.json"
    scored = quiz("--answers", str(path), "--json", str(out), "--lang", lang)
    assert scored.returncode == 0, scored.stdout + scored.stderr
    results = json.loads(out.read_text(encoding="utf-8"))
    assert results["score"] == results["max_score"] == len(BANK)


AWKWARD = ("line one\nowner-is-a-name: a\rjob-id-vs-token: b\u2028attempts-vs-token: c"
           "\x85boundary-no-gap: d\x0bsend-raises: a\x1c# not a comment: x\u2029:")


@pytest.mark.parametrize("lang", LANGS)
def test_no_question_text_breaks_out_of_the_templates_comments(lang, tmp_path):
    """Whatever a question's text holds (line breaks of any kind, colons, '#', lines that look
    like answers), it stays inside the comments: the template parses as a blank answers file and,
    filled with the key, as the key."""
    def awkward(structure, texts):
        for t in texts.values():
            for question in t.values():
                question["title"] += " " + AWKWARD
                question["prompt"] = AWKWARD + " " + question["prompt"]
                for choice in question.get("choices", {}):
                    question["choices"][choice] += " " + AWKWARD
                for note in question.get("notes", {}):
                    question["notes"][note] += " " + AWKWARD
    tricky = bank.load(broken_bank(tmp_path, awkward))
    template = answers.template(tricky, lang)
    assert answers.parse(template, tricky) == {qid: None for qid in tricky.ids}
    key = {q.id: q.answer for q in tricky}
    assert answers.parse(filled(template, lambda qid: " " + key[qid]), tricky) == key


@pytest.mark.parametrize("lang", LANGS)
def test_template_carries_each_question_and_its_choices_above_its_line(lang):
    proc = quiz("--template", "--lang", lang)
    assert proc.returncode == 0
    assert answers.parse(proc.stdout, BANK) == {qid: None for qid in BANK.ids}
    blocks = proc.stdout.split("\n\n")[1:]           # after the head, one block per question
    assert len(blocks) == len(BANK)
    for question, block in zip(BANK, blocks):
        *comments, last = block.rstrip("\n").splitlines()
        assert last == f"{question.id}:" and all(c.startswith("#") for c in comments)
        shown = " ".join(" ".join(c.lstrip("#").split()) for c in comments)
        t = question.text(lang)
        for words in (t.title, t.prompt, *(present.labelled(question, c, lang)
                                          for c in question.choice_ids)):
            assert " ".join(words.split()) in shown, (question.id, words)


def test_list_prints_every_question_id():
    proc = quiz("--list")
    assert proc.returncode == 0
    assert [line.split()[0] for line in proc.stdout.splitlines()] == list(BANK.ids)


@pytest.mark.parametrize("args", [["--lang", "fr"], ["--list", "--template"], ["--bogus"]])
def test_bad_arguments_exit_2(args):
    assert quiz(*args).returncode == 2


# -- interactive ---------------------------------------------------------------------------
def test_interactive_gives_immediate_feedback_and_ends_cleanly_at_eof():
    first, second = BANK.questions[0], BANK.questions[1]
    wrong = wrong_letter(second)
    proc = quiz(input=f"{first.answer}\nzz\n\n{wrong.upper()}\n")
    out = proc.stdout
    assert proc.returncode == 1 and proc.stderr == ""
    one_line = " ".join(out.split())
    # question 1: right, with its explanation, before question 2 is asked
    assert out.index("✓ Correct.") < out.index("Question 2/")
    assert first.text("en").explanation in one_line
    # question 2: an answer that is no choice is asked again; then wrong, with the feedback
    assert "'zz' is not a choice here: answer with one of a/b/c/d, or q to stop." in out
    assert f"✗ Not quite: the answer is {second.answer}." in out
    assert second.text("en").feedback[wrong] in one_line
    assert second.text("en").explanation in one_line
    # end of input during question 3: a partial score, no traceback
    assert "Question 3/" in out and "Question 4/" not in out
    assert f"Stopped after 2 of {len(BANK)} questions" in out
    assert f"Score: 1 / {len(BANK)}   1 correct, 1 wrong, {len(BANK) - 2} not answered" in out


def test_interactive_score_lists_the_missed_questions_also_those_never_reached():
    first, second = BANK.questions[0], BANK.questions[1]
    listed = review(quiz(input=f"{first.answer}\n{wrong_letter(second)}\nq\n").stdout)
    assert f"To review ({len(BANK) - 1}):" in listed
    assert f"{second.id} you answered {wrong_letter(second)}; {right_answer(second)}" in listed
    assert f" {first.id} " not in listed
    for question in BANK.questions[2:]:
        assert f"{question.id} not answered; {right_answer(question)}" in listed


def test_all_right_lists_nothing_to_review(tmp_path):
    path = tmp_path / "answers.txt"
    path.write_text(key_file(), encoding="utf-8")
    assert "To review" not in quiz("--answers", str(path)).stdout


def test_interactive_scenario_question_shows_the_timeline():
    index = BANK.ids.index("late-finish-after-reclaim")
    keys = "".join(q.answer + "\n" for q in BANK.questions[:index + 1])
    out = quiz(input=keys).stdout
    assert "1000 ms  B claims (lease_ms=1000) → token=2, lease_until=2000" in out
    assert "▶   1001 ms  A finishes with token=1 → ?" in out
    assert ("d) returns False; row of job 1: status=leased, owner=B, token=2, finished_at=NULL"
            in out)


def test_interactive_all_right_in_japanese_from_the_locale(tmp_path):
    out_json = tmp_path / "results.json"
    keys = "".join(q.answer + "\n" for q in BANK)
    proc = quiz("--json", str(out_json), input=keys, lang_env="ja_JP.UTF-8")
    assert proc.returncode == 0, proc.stdout[-2000:]
    assert proc.stdout.count("✓ 正解です。") == len(BANK)
    assert "すべて正解です。" in proc.stdout
    assert BANK.questions[0].text("ja").explanation in proc.stdout
    results = json.loads(out_json.read_text(encoding="utf-8"))
    assert results["score"] == results["max_score"] == len(BANK)


def test_interactive_q_stops():
    proc = quiz("--lang", "en", input="q\n")
    assert proc.returncode == 1
    assert f"Stopped after 0 of {len(BANK)} questions" in proc.stdout
    assert f"Score: 0 / {len(BANK)}" in proc.stdout
