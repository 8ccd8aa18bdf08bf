"""The message catalogue is complete: every word exists in English and Japanese, every declared
check has its title, why and hint, and every key the code names exists.

Checks are discovered, not listed: every grader/checks/test_*.py module is imported and
grader.checkdef.REGISTRY read, so a check added in a new module is covered at once. Keys named in
code are found by a static scan (ast for Python, a regex for the templates), so a sentence that
only shows on a rare failure path cannot be missing unnoticed.
"""

from __future__ import annotations

import ast
import json
import re
import string
from pathlib import Path

import pytest

from grader import checkdef
from grader.report import messages

GRADER = Path(checkdef.__file__).parent  # the whole grader package
CHECKS = GRADER / "checks"
CATALOGUE_FILES = sorted(messages.CATALOGUE_DIR.glob("*.json"))
CHECK_TEXTS = ("title", "why", "hint")

declared_checks = checkdef.all_checks  # every grader/checks/test_*.py, imported


def placeholders(template: str) -> set[str]:
    return {name.split(".")[0].split("[")[0]
            for _, name, _, _ in string.Formatter().parse(template) if name is not None}


def python_sources() -> list[Path]:
    return sorted(p for p in GRADER.rglob("*.py") if "__pycache__" not in p.parts)


def _const(node) -> str | None:
    return node.value if isinstance(node, ast.Constant) and isinstance(node.value, str) else None


def keys_in_python(source: str, in_checks: bool) -> list[tuple[str, int]]:
    """Catalogue keys named by literal strings in `source`: [(key, line), ...].

    Found: `text("key", ...)` anywhere; in check modules also `lab.fail("name", ...)` and
    `detail="name"` (-> detail.name) and `lab.note("key", ...)`. A key built at run time (an
    f-string) cannot be seen this way: those families (check.*, outcome.*) have tests below."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if not isinstance(node, ast.Call):
            continue
        name = getattr(node.func, "attr", None) or getattr(node.func, "id", None)
        first = _const(node.args[0]) if node.args else None
        if name == "text" and first:
            found.append((first, node.lineno))
        if not in_checks:
            continue
        if name == "fail" and first:
            found.append((f"detail.{first}", node.lineno))
        elif name == "note" and first:
            found.append((first, node.lineno))
        for kw in node.keywords:
            if kw.arg == "detail" and _const(kw.value):
                found.append((f"detail.{kw.value.value}", node.lineno))
    return found


def keys_used_in_python() -> dict[str, set[str]]:
    used: dict[str, set[str]] = {}
    for path in python_sources():
        source = path.read_text(encoding="utf-8")
        for key, line in keys_in_python(source, in_checks=path.is_relative_to(CHECKS)):
            used.setdefault(key, set()).add(f"{path.relative_to(GRADER.parent)}:{line}")
    return used


# t("literal.key") in a template; a key built with ~ ("check." ~ id) is dynamic: not scanned here
# (check texts are covered per declared check, outcome and status words per known value).
TEMPLATE_KEY = re.compile(r"""\bt\(\s*["']([a-z0-9_.-]+)["'](?!\s*~)""")


def keys_used_in_templates() -> dict[str, set[str]]:
    used: dict[str, set[str]] = {}
    templates = sorted(GRADER.glob("*/templates/*"))
    assert templates, "no templates found under grader/*/templates/"
    for path in templates:
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            for key in TEMPLATE_KEY.findall(line):
                used.setdefault(key, set()).add(f"{path.name}:{n}")
    return used


@pytest.mark.parametrize("path", CATALOGUE_FILES, ids=[p.name for p in CATALOGUE_FILES])
def test_every_key_has_english_and_japanese(path):
    entries = json.loads(path.read_text(encoding="utf-8"))
    problems = []
    for key, texts in entries.items():
        if not isinstance(texts, dict):
            problems.append(f"{key}: not an {{en, ja}} object")
            continue
        for lang in messages.LANGS:
            if not isinstance(texts.get(lang), str) or not texts[lang].strip():
                problems.append(f"{key}: no {lang!r} text")
        extra = set(texts) - set(messages.LANGS)
        if extra:
            problems.append(f"{key}: unknown languages {sorted(extra)}")
    assert problems == []


def test_keys_are_unique_across_files():
    messages.catalogue.cache_clear()
    messages.catalogue()  # raises on a key defined in two files


def test_placeholders_are_the_same_in_both_languages():
    different = {key: {lang: sorted(placeholders(texts[lang])) for lang in messages.LANGS}
                 for key, texts in messages.catalogue().items()
                 if len({frozenset(placeholders(texts.get(lang, ""))) for lang in messages.LANGS}) > 1}
    assert different == {}


def test_every_declared_check_has_title_why_and_hint():
    checks = declared_checks()
    assert checks, "no checks found in grader/checks/test_*.py"
    missing = [f"check.{cid}.{part}" for cid in checks for part in CHECK_TEXTS
               if not messages.has(f"check.{cid}.{part}")]
    assert missing == []


def test_no_check_texts_for_checks_that_do_not_exist():
    checks = declared_checks()
    stale = sorted(key for key in messages.catalogue() if key.startswith("check.")
                   and key.split(".")[1] not in checks)
    assert stale == []


def test_every_outcome_and_batch_status_has_words():
    from grader.instructor import isolated

    statuses = {isolated.GRADED, isolated.TIMED_OUT, isolated.CRASHED, isolated.MISSING,
                isolated.AMBIGUOUS}
    outcomes = {"passed", "failed", "errored", "timed_out", "not_implemented"}
    missing = [key for key in [f"outcome.{o}" for o in outcomes]
               + [f"instructor.status.{s}" for s in statuses] if not messages.has(key)]
    assert missing == []


def test_every_key_named_in_code_exists():
    used = {**keys_used_in_python()}
    for key, where in keys_used_in_templates().items():
        used.setdefault(key, set()).update(where)
    assert any(k.startswith("html.") for k in used), "the template scan found nothing"
    missing = {key: sorted(where) for key, where in used.items() if not messages.has(key)}
    assert missing == {}


def test_every_outcome_has_a_word():
    missing = [o for o in ("passed", "failed", "errored", "timed_out", "not_implemented")
               if not messages.has(f"outcome.{o}")]
    assert missing == []


def test_the_scan_sees_detail_and_note_keys():
    """The static scan itself works on the shapes checks use."""
    snippet = ('lab.fail("late-finish", job=1)\n'
               'lab.expect(x, y, job=1, row=r, detail="stale")\n'
               'lab.note("note.a-stalls", ms=5)\n'
               'text("ui.why", lang)\n'
               'lab.fail(name)\n')
    assert sorted(k for k, _ in keys_in_python(snippet, in_checks=True)) == [
        "detail.late-finish", "detail.stale", "note.a-stalls", "ui.why"]
    assert [k for k, _ in keys_in_python(snippet, in_checks=False)] == ["ui.why"]


# -- strict mode -----------------------------------------------------------------------------------
def test_strict_mode_is_on_in_the_tests():
    assert messages.strict(), "tests/conftest.py turns LEASELAB_STRICT_MESSAGES on"


@pytest.mark.parametrize("call, problem", [
    (lambda: messages.text("ui.no-such-key"), "no message 'ui.no-such-key'"),
    (lambda: messages.text("ui.why", "fr"), "unknown language 'fr'"),
    (lambda: messages.text("ui.points", "en", score=1), "cannot be filled"),
])
def test_strict_mode_raises(call, problem):
    with pytest.raises(messages.MessageError, match=re.escape(problem)):
        call()


def test_outside_strict_mode_a_word_never_crashes_a_report(monkeypatch):
    monkeypatch.delenv(messages.STRICT_ENV, raising=False)
    assert not messages.strict()
    assert messages.text("ui.no-such-key") == "ui.no-such-key"
    assert messages.text("ui.why", "fr") == messages.text("ui.why", "en")
    assert "{points}" in messages.text("ui.points", "en", score=1)
