"""The question bank: load the quiz's data files and refuse a bank that is not whole.

Three files, all in this folder:
- `questions.json`: the structure, language-neutral. Each question has a stable kebab-case `id`,
  a `kind`, the `topics` it covers (from TOPICS), its `choices` and its `answer` (a choice id).
  - kind "choice": `choices` is a list of choice ids ("a", "b", ...); their texts are per language.
  - kind "scenario": `steps` (what happens, in order; the last step is the one asked about),
    `row_of` (the job whose row the question asks about) and `choices`, each a possible outcome
    `{"id", "returns", "row"}`: what the asked step returns (null, true/false, or a Claim as an
    object of all six fields) and some columns of the row afterwards. Every choice names the same
    columns. The project's tests run the steps against solutions.queue and check that exactly one
    choice matches what the code does, and that it is `answer`.
- `questions.en.json`, `questions.ja.json`: the texts, keyed by question id: `title`, `prompt`,
  `explanation`, `choices` (choice kind: one text per choice id), optional `feedback`
  (choice id -> why that choice is wrong, or right), `notes` (scenario narration, by name).
  Both languages must hold exactly the same questions, choices, feedback and notes.

Scenario steps (`t` is the logical time in ms):
    {"do": "enqueue", "qty": 5, "deadline": 1000000, "max_attempts": 3}   -> job 1, 2, ... in order
    {"do": "claim", "t": 0, "owner": "A", "lease_ms": 1000, "as": "a", "result": {"token": 1, ...}}
    {"do": "finish", "t": 1001, "stamp": "a", "result": false}
    {"do": "requeue", "job": 1}
    {"do": "note", "note": "stalls"}                  -> the text notes.stalls of the language file
Every claim/finish but the last carries the `result` it must give (null, a bool, or some Claim
fields); the runner checks it, so the story the student reads is the story the code runs.
"""

from __future__ import annotations

import functools
import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from lab.store import COLUMNS, Claim

from grader.report.messages import LANGS

HERE = Path(__file__).resolve().parent
STRUCTURE_FILE = "questions.json"

#: What the quiz must cover (from the issue); every question names at least one of these.
TOPICS = (
    "identity-fields",         # what owner / job id / token / attempts each distinguish
    "lease-boundary",          # the boundary at exactly lease_until
    "same-name-restart",       # why a name check fails after a same-name restart
    "begin-immediate",         # why the selection must sit inside BEGIN IMMEDIATE
    "send-after-commit",       # why send runs after commit
    "idempotency-vs-fencing",  # the receiver's idempotency vs fencing: what the token does not do
    "longer-lease-no-fix",     # why a longer lease_ms is not a fix
    "deadline-clamp",          # lease_until = min(now + lease_ms, deadline)
    "quarantine-before-token", # exhausted/expired jobs are quarantined before any new token
)
KINDS = ("choice", "scenario")
ID_PATTERN = re.compile(r"^[a-z0-9]+(-[a-z0-9]+)*$")
CHOICE_IDS = "abcdefgh"
CLAIM_FIELDS = tuple(Claim.__dataclass_fields__)
STEP_FIELDS = {
    "enqueue": ({"qty", "deadline"}, {"max_attempts"}),
    "claim": ({"t", "owner", "lease_ms"}, {"as", "result"}),
    "finish": ({"t", "stamp"}, {"result"}),
    "requeue": ({"job"}, set()),
    "note": ({"note"}, set()),
}
TEXT_FIELDS = ("title", "prompt", "explanation")


class BankError(Exception):
    """The bank's files are broken; `problems` lists every problem found, one line each."""

    def __init__(self, problems: list[str]):
        super().__init__("\n".join(problems))
        self.problems = problems


@dataclass(frozen=True)
class Choice:
    id: str
    returns: Any = None              # scenario: what the asked step returns (None/bool/dict)
    row: dict | None = None          # scenario: some columns of the row afterwards


@dataclass(frozen=True)
class Texts:
    title: str
    prompt: str
    explanation: str
    choices: dict[str, str] = field(default_factory=dict)
    feedback: dict[str, str] = field(default_factory=dict)
    notes: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class Question:
    id: str
    kind: str
    topics: tuple[str, ...]
    choices: tuple[Choice, ...]
    answer: str
    texts: dict[str, Texts]
    steps: tuple[dict, ...] = ()
    row_of: int | None = None

    @property
    def choice_ids(self) -> tuple[str, ...]:
        return tuple(c.id for c in self.choices)

    def choice(self, choice_id: str) -> Choice:
        return next(c for c in self.choices if c.id == choice_id)

    def text(self, lang: str) -> Texts:
        return self.texts.get(lang) or self.texts["en"]


@dataclass(frozen=True)
class Bank:
    questions: tuple[Question, ...]

    def __post_init__(self):
        object.__setattr__(self, "_by_id", {q.id: q for q in self.questions})

    def __iter__(self):
        return iter(self.questions)

    def __len__(self):
        return len(self.questions)

    def get(self, question_id: str) -> Question | None:
        return self._by_id.get(question_id)

    @property
    def ids(self) -> tuple[str, ...]:
        return tuple(q.id for q in self.questions)


@functools.lru_cache(maxsize=None)
def default_bank() -> Bank:
    """The bank shipped with the grader (loaded once)."""
    return load(HERE)


def load(folder: Path | str) -> Bank:
    """Read and validate the bank in `folder`; raise BankError listing every problem."""
    folder = Path(folder)
    problems: list[str] = []
    structure = _read_json(folder / STRUCTURE_FILE, problems)
    texts = {lang: _read_json(folder / f"questions.{lang}.json", problems) for lang in LANGS}
    if problems:
        raise BankError(problems)
    raw = structure.get("questions") if isinstance(structure, dict) else None
    if not isinstance(raw, list) or not raw:
        raise BankError([f"{STRUCTURE_FILE}: needs a non-empty list 'questions'"])
    questions = []
    seen: set[str] = set()
    for n, entry in enumerate(raw, 1):
        where = f"{STRUCTURE_FILE}: question {n}"
        if not isinstance(entry, dict):
            problems.append(f"{where}: not an object")
            continue
        qid = entry.get("id")
        if not isinstance(qid, str) or not ID_PATTERN.match(qid):
            problems.append(f"{where}: id must be kebab-case, got {qid!r}")
            continue
        if qid in seen:
            problems.append(f"{STRUCTURE_FILE}: {qid}: id used twice")
            continue
        seen.add(qid)
        question = _question(entry, texts, problems)
        if question is not None:
            questions.append(question)
    for lang in LANGS:
        for extra in sorted(set(texts[lang]) - seen):
            problems.append(f"questions.{lang}.json: {extra}: no such question in {STRUCTURE_FILE}")
    if problems:
        raise BankError(problems)
    return Bank(tuple(questions))


def _read_json(path: Path, problems: list[str]) -> Any:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        problems.append(f"{path.name}: missing")
        return {}
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        problems.append(f"{path.name}: not valid JSON: {exc}")
        return {}
    if not isinstance(data, dict):
        problems.append(f"{path.name}: must hold a JSON object")
        return {}
    return data


def _question(entry: dict, texts: dict[str, dict], problems: list[str]) -> Question | None:
    qid = entry["id"]
    before = len(problems)

    def problem(message: str) -> None:
        problems.append(f"{STRUCTURE_FILE}: {qid}: {message}")

    unknown = set(entry) - {"id", "kind", "topics", "choices", "answer", "steps", "row_of"}
    if unknown:
        problem(f"unknown fields {sorted(unknown)}")
    kind = entry.get("kind")
    if kind not in KINDS:
        problem(f"kind must be one of {list(KINDS)}, got {kind!r}")
        return None
    topics = entry.get("topics")
    if not isinstance(topics, list) or not topics:
        problem("needs a non-empty list of topics")
        topics = []
    for topic in topics:
        if topic not in TOPICS:
            problem(f"unknown topic {topic!r} (topics: {', '.join(TOPICS)})")
    steps: tuple[dict, ...] = ()
    row_of = None
    if kind == "choice":
        choices = _plain_choices(entry.get("choices"), problem)
        if "steps" in entry or "row_of" in entry:
            problem("only scenario questions have steps and row_of")
    else:
        choices = _scenario_choices(entry.get("choices"), problem)
        steps = tuple(entry.get("steps") or ())
        row_of = entry.get("row_of")
        _check_steps(steps, row_of, problem)
    ids = [c.id for c in choices]
    if entry.get("answer") not in ids:
        problem(f"answer must be one of the choices {ids}, got {entry.get('answer')!r}")
    question_texts = {}
    for lang in LANGS:
        found = _texts(qid, lang, texts[lang].get(qid), kind, ids, steps, problems)
        if found is not None:
            question_texts[lang] = found
    feedback_sets = {lang: sorted(t.feedback) for lang, t in question_texts.items()}
    if len({tuple(f) for f in feedback_sets.values()}) > 1:
        problem(f"feedback is given for different choices per language: {feedback_sets}")
    if len(problems) > before:
        return None
    return Question(qid, kind, tuple(topics), tuple(choices), entry["answer"], question_texts,
                    steps, row_of)


def _expected_ids(n: int) -> list[str]:
    return list(CHOICE_IDS[:n])


def _plain_choices(raw, problem) -> list[Choice]:
    if not isinstance(raw, list) or not 2 <= len(raw) <= len(CHOICE_IDS):
        problem(f"choices must be a list of 2 to {len(CHOICE_IDS)} choice ids")
        return []
    if raw != _expected_ids(len(raw)):
        problem(f"choice ids must be {_expected_ids(len(raw))} in this order, got {raw}")
    return [Choice(str(c)) for c in raw]


def _scenario_choices(raw, problem) -> list[Choice]:
    if not isinstance(raw, list) or not 2 <= len(raw) <= len(CHOICE_IDS):
        problem(f"choices must be a list of 2 to {len(CHOICE_IDS)} outcomes")
        return []
    choices = []
    for n, item in enumerate(raw):
        if not isinstance(item, dict) or set(item) != {"id", "returns", "row"}:
            problem(f"choice {n + 1} must be an object with exactly id, returns, row")
            continue
        if item["id"] != CHOICE_IDS[n]:
            problem(f"choice {n + 1} must have id {CHOICE_IDS[n]!r}, got {item['id']!r}")
        returns = item["returns"]
        if isinstance(returns, dict) and set(returns) != set(CLAIM_FIELDS):
            problem(f"choice {item['id']}: a Claim needs exactly the fields {list(CLAIM_FIELDS)}")
        elif not (returns is None or isinstance(returns, (bool, dict))):
            problem(f"choice {item['id']}: returns must be null, true, false or a Claim object")
        row = item["row"]
        if not isinstance(row, dict) or not row or set(row) - set(COLUMNS):
            problem(f"choice {item['id']}: row must name some of the columns {list(COLUMNS)}")
            continue
        choices.append(Choice(item["id"], returns, row))
    if len({frozenset(c.row) for c in choices}) > 1:
        problem("every choice must name the same row columns")
    outcomes = [json.dumps([c.returns, c.row], sort_keys=True) for c in choices]
    if len(set(outcomes)) != len(outcomes):
        problem("two choices describe the same outcome")
    return choices


def _check_steps(steps: tuple, row_of, problem) -> None:
    if not steps:
        problem("a scenario needs steps")
        return
    jobs = 0
    names: set[str] = set()
    last_t = 0
    for n, step in enumerate(steps, 1):
        what = step.get("do") if isinstance(step, dict) else None
        if what not in STEP_FIELDS:
            problem(f"step {n}: 'do' must be one of {list(STEP_FIELDS)}")
            continue
        required, optional = STEP_FIELDS[what]
        given = set(step) - {"do"}
        if required - given or given - required - optional:
            problem(f"step {n} ({what}): needs {sorted(required)}, may have {sorted(optional)},"
                    f" got {sorted(given)}")
            continue
        if "t" in step:
            if not isinstance(step["t"], int) or step["t"] < last_t:
                problem(f"step {n}: t must be an integer and never go back in time")
            else:
                last_t = step["t"]
        last = n == len(steps)
        if what == "enqueue":
            jobs += 1
        elif what == "requeue" and not 1 <= step["job"] <= jobs:
            problem(f"step {n}: requeue of job {step['job']}, which is not enqueued")
        elif what == "finish" and step["stamp"] not in names:
            problem(f"step {n}: finish with stamp {step['stamp']!r}, which no claim step named")
        if what == "claim" and "as" in step:
            if step.get("result", {}) is None:
                problem(f"step {n}: a claim that returns None cannot name a stamp")
            names.add(step["as"])
        if what in ("claim", "finish"):
            if last and "result" in step:
                problem(f"step {n}: the asked step (the last) must not give its result")
            if not last and "result" not in step:
                problem(f"step {n}: every claim/finish before the last gives its result")
            result = step.get("result")
            if what == "claim" and isinstance(result, dict) and (
                    not {"token", "lease_until"} <= set(result) or set(result) - set(CLAIM_FIELDS)):
                problem(f"step {n}: a claim result names token, lease_until and maybe other"
                        f" Claim fields")
            if what == "finish" and "result" in step and not isinstance(result, bool):
                problem(f"step {n}: a finish result is true or false")
        elif last:
            problem("the last step must be the claim or finish the question asks about")
    if not isinstance(row_of, int) or not 1 <= row_of <= jobs:
        problem(f"row_of must be the number of an enqueued job (1..{jobs})")


def _texts(qid: str, lang: str, raw, kind: str, choice_ids: list[str], steps: tuple,
           problems: list[str]) -> Texts | None:
    where = f"questions.{lang}.json: {qid}"
    if not isinstance(raw, dict):
        problems.append(f"{where}: missing (every question needs its {lang} text)")
        return None
    before = len(problems)
    unknown = set(raw) - {*TEXT_FIELDS, "choices", "feedback", "notes"}
    if unknown:
        problems.append(f"{where}: unknown fields {sorted(unknown)}")
    for name in TEXT_FIELDS:
        if not _nonempty(raw.get(name)):
            problems.append(f"{where}: needs a non-empty {name}")
    choices = raw.get("choices", {})
    if kind == "choice":
        if not isinstance(choices, dict) or sorted(choices) != sorted(choice_ids) or not all(
                _nonempty(v) for v in choices.values()):
            problems.append(f"{where}: choices needs a text for each of {choice_ids}")
    elif "choices" in raw:
        problems.append(f"{where}: a scenario's choices are outcomes, shown from the data:"
                        " give no choice texts (use feedback)")
    feedback = raw.get("feedback", {})
    if not isinstance(feedback, dict) or set(feedback) - set(choice_ids) or not all(
            _nonempty(v) for v in feedback.values()):
        problems.append(f"{where}: feedback maps choice ids {choice_ids} to texts")
    wanted_notes = {s["note"] for s in steps if isinstance(s, dict) and s.get("do") == "note"}
    notes = raw.get("notes", {})
    if not isinstance(notes, dict) or set(notes) != wanted_notes or not all(
            _nonempty(v) for v in notes.values()):
        problems.append(f"{where}: notes needs a text for each of {sorted(wanted_notes)}")
    if len(problems) > before:
        return None
    return Texts(raw["title"].strip(), raw["prompt"].strip(), raw["explanation"].strip(),
                 dict(choices) if kind == "choice" else {}, dict(feedback), dict(notes))


def _nonempty(value) -> bool:
    return isinstance(value, str) and bool(value.strip())

