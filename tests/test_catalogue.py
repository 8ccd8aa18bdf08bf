"""The message catalogue is complete: every word exists in English and Japanese, every declared
check has its title, why and hint, and every key the code names exists.

Checks are discovered, not listed: every grader/checks/test_*.py module is imported and
grader.checkdef.REGISTRY read, so a check added in a new module is covered at once. Keys named in
code are found by a static scan (ast for Python, a regex for the templates), so a sentence that
only shows on a rare failure path cannot be missing unnoticed. A key built at run time must come
from a `messages.Family` (or be resolvable by the scan to literal keys): every family's members
are enumerated here, so every key the grader may ask for is known, and a key nobody asks for is
found too.
"""

from __future__ import annotations

import ast
import json
import re
from pathlib import Path

import pytest

from grader import checkdef
from grader.instructor.catalogue import placeholders  # the rule the catalogue tool holds too
from grader.report import messages, outputs

GRADER = Path(checkdef.__file__).parent  # the whole grader package
CHECKS = GRADER / "checks"
CATALOGUE_FILES = sorted(messages.CATALOGUE_DIR.glob("*.json"))
CHECK_TEXTS = ("title", "why", "hint")

declared_checks = checkdef.all_checks  # every grader/checks/test_*.py, imported


def python_sources() -> list[Path]:
    return sorted(p for p in GRADER.rglob("*.py") if "__pycache__" not in p.parts)


def _const(node) -> str | None:
    return node.value if isinstance(node, ast.Constant) and isinstance(node.value, str) else None


def keys_in_python(source: str, in_checks: bool) -> list[tuple[str, int]]:
    """Catalogue keys named by literal strings in `source`: [(key, line), ...].

    Found: `text("key", ...)` anywhere; in check modules also `lab.fail("name", ...)` and
    `detail="name"` (-> detail.name) and `lab.note("key", ...)`. A key built at run time (an
    f-string, a family) is not seen here: `key_expressions` below reads those."""
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
        in_checks = path.is_relative_to(CHECKS) or path.is_relative_to(GRADER / "harness")
        for key, line in keys_in_python(source, in_checks=in_checks):
            used.setdefault(key, set()).add(f"{path.relative_to(GRADER.parent)}:{line}")
    return used


# t("literal.key") in a template; a key built with ~ ("check." ~ id) is read as a pattern by
# template_key_patterns below and must be a declared family.
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
    from grader.report import results_json

    statuses = {results_json.GRADED, results_json.TIMED_OUT, results_json.CRASHED,
                results_json.MISSING, results_json.AMBIGUOUS}
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


# -- keys built at run time ------------------------------------------------------------------------
# Every expression that names a key but is not one literal string is read by `KeyScan`: literal
# alternatives (`"a" if x else "b"`, a loop over a tuple of strings, a module-level dict of
# strings, a local variable, a parameter of a function the same module calls with literals) are
# followed to their literal keys; an f-string or a concatenation with a run-time part becomes a
# pattern ("detail.race-{}") that must be the pattern of a declared family with members; a
# `Family(...)` call is that family. What is left is a relay, which must be listed in RELAYS.

OPAQUE = "\0"  # an alternative the scan cannot follow
#: The modules that declare catalogue families: messages, and a module that declares the members
#: of its own family (messages imports none of the package).
DECLARING = (messages, outputs)
FAMILIES = {name: f for module in DECLARING for name, f in vars(module).items()
            if isinstance(f, messages.Family)}
ENUMERATED = {f.pattern: f for f in FAMILIES.values() if f.members() is not None}

#: Key expressions that pass on a key chosen elsewhere, and where that elsewhere is scanned.
RELAYS = {
    ("grader/report/sentences.py", 'event["key"]'):
        "a timeline note's key: lab.note(key) and {'op': 'note', 'key': ...} are scanned",
    ("grader/report/html.py", "key"): "the templates' t(key): the templates are scanned",
    ("grader/harness/judge/verdicts.py", "detail"):
        "Lab.fail/expect/expect_row(detail=...): every such call of the checks is scanned",
    ("grader/harness/judge/scenario.py", "key"):
        "Lab.note(key) puts the key on the timeline: every lab.note(...) of the checks is scanned",
    ("grader/instructor/class_report.py", "key"):
        "the templates' t(key): the templates are scanned",
    ("grader/checks/steps.py", "detail"):
        "the steps' detail= parameter: every check's detail='...' keyword is scanned",
}


class KeyScan:
    """The key expressions of one Python module and what each may evaluate to."""

    def __init__(self, source: str, in_checks: bool):
        self.tree = ast.parse(source)
        self.in_checks = in_checks
        self.parent = {child: node for node in ast.walk(self.tree)
                       for child in ast.iter_child_nodes(node)}
        self.dicts = {t.id: [_const(v) for v in node.value.values]
                      for node in self.tree.body if isinstance(node, ast.Assign)
                      and isinstance(node.value, ast.Dict) for t in node.targets
                      if isinstance(t, ast.Name)}

    def sites(self):
        """(expression, prefix, line) for every place a key is given, literal or not."""
        for node in ast.walk(self.tree):
            if isinstance(node, ast.Dict):
                fields = {_const(k): v for k, v in zip(node.keys, node.values) if k is not None}
                if "op" in fields and _const(fields["op"]) == "note" and "key" in fields:
                    yield fields["key"], "", node.lineno
                if "outcome" in fields and "detail" in fields:  # a result with a check's sentence
                    yield fields["detail"], "detail.", node.lineno
            if not isinstance(node, ast.Call):
                continue
            func = node.func
            name = getattr(func, "attr", None) or getattr(func, "id", None)
            is_text = isinstance(func, ast.Name) or (
                isinstance(func, ast.Attribute) and getattr(func.value, "id", "") == "messages")
            if name == "text" and is_text and node.args:
                yield node.args[0], "", node.lineno
            on_pytest = getattr(getattr(func, "value", None), "id", "") == "pytest"
            if self.in_checks and name in ("fail", "note") and node.args and not on_pytest:
                yield node.args[0], "detail." if name == "fail" else "", node.lineno
            if self.in_checks:
                for kw in node.keywords:
                    if kw.arg == "detail":
                        yield kw.value, "detail.", node.lineno

    def alternatives(self, expr, depth: int = 0) -> set:
        """What `expr` may be: literal strings, patterns with {}, Family objects, or OPAQUE."""
        if depth > 8:
            return {OPAQUE}
        if _const(expr) is not None:
            return {expr.value}
        if isinstance(expr, ast.Constant) and expr.value is None:
            return set()  # no sentence
        if isinstance(expr, ast.IfExp):
            return (self.alternatives(expr.body, depth + 1)
                    | self.alternatives(expr.orelse, depth + 1))
        if isinstance(expr, ast.JoinedStr):
            parts = [{_const(v)} if _const(v) is not None else {"{}"} for v in expr.values]
            return _joined(parts)
        if isinstance(expr, ast.BinOp) and isinstance(expr.op, ast.Add):
            return _joined([_holes(self.alternatives(side, depth + 1))
                            for side in (expr.left, expr.right)])
        if isinstance(expr, ast.Call):
            name = getattr(expr.func, "attr", None) or getattr(expr.func, "id", None)
            return {FAMILIES[name]} if name in FAMILIES else {OPAQUE}
        if (isinstance(expr, ast.Subscript) and isinstance(expr.value, ast.Name)
                and None not in self.dicts.get(expr.value.id, [None])):
            return set(self.dicts[expr.value.id])
        if isinstance(expr, ast.Name):
            return self._name(expr, depth)
        return {OPAQUE}

    def _name(self, expr: ast.Name, depth: int) -> set:
        scope = self._scope(expr)
        found: set = set()
        for node in ast.walk(scope):
            if isinstance(node, ast.Assign) and any(getattr(t, "id", None) == expr.id
                                                    for t in node.targets):
                found |= self.alternatives(node.value, depth + 1)
            elif (isinstance(node, (ast.comprehension, ast.For))
                  and getattr(node.target, "id", None) == expr.id):
                items = getattr(node.iter, "elts", None)
                found |= ({_const(e) for e in items} if items and None not in
                          {_const(e) for e in items} else {OPAQUE})
        if found:
            return found
        if isinstance(scope, ast.FunctionDef):
            return self._callers(scope, expr.id, depth) or {OPAQUE}
        return {OPAQUE}

    def _scope(self, node):
        while node in self.parent and not isinstance(node, (ast.FunctionDef, ast.Lambda)):
            node = self.parent[node]
        return node

    def _callers(self, function: ast.FunctionDef, param: str, depth: int) -> set:
        """What the module's own calls of `function` pass as `param`."""
        names = [a.arg for a in function.args.args]
        if param not in names:
            return set()
        found: set = set()
        for call in ast.walk(self.tree):
            if isinstance(call, ast.Call) and getattr(call.func, "id", None) == function.name:
                given = [kw.value for kw in call.keywords if kw.arg == param]
                if names.index(param) < len(call.args):
                    given.append(call.args[names.index(param)])
                for value in given:
                    found |= self.alternatives(value, depth + 1)
        return found


def _holes(alternatives: set) -> set:
    """A part of a concatenation the scan cannot follow is a hole of the pattern."""
    return {"{}" if a == OPAQUE else a for a in alternatives}


def _joined(parts: list[set]) -> set:
    out = {""}
    for alternatives in parts:
        if any(not isinstance(a, str) or OPAQUE in a for a in alternatives):
            return {OPAQUE}
        out = {left + right for left in out for right in alternatives}
    return out


def key_expressions():
    """Every key expression in grader/ the scan finds, literal or not:
    [(where, expression source, {alternative, ...}), ...] with the prefix applied."""
    found = []
    for path in python_sources():
        source = path.read_text(encoding="utf-8")
        scan = KeyScan(source, in_checks=path.is_relative_to(CHECKS)
                       or path.is_relative_to(GRADER / "harness"))
        for expr, prefix, line in scan.sites():
            alternatives = {a if isinstance(a, messages.Family) else
                            OPAQUE if OPAQUE in a else prefix + a
                            for a in scan.alternatives(expr)}
            if prefix and any(isinstance(a, messages.Family) for a in alternatives):
                alternatives = {OPAQUE}
            found.append((f"{path.relative_to(GRADER.parent)}:{line}", ast.get_source_segment(
                source, expr), alternatives))
    return found


# t("check." ~ s.id ~ ".title") in a template: literal pieces and run-time pieces joined by ~
_PIECE = r"""(?:"[^"]*"|'[^']*'|[\w.]+)"""
TEMPLATE_BUILT_KEY = re.compile(rf"""\bt\(\s*({_PIECE}(?:\s*~\s*{_PIECE})+)""")


def template_key_patterns() -> dict[str, set[str]]:
    found: dict[str, set[str]] = {}
    for path in sorted(GRADER.glob("*/templates/*")):
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            for expression in TEMPLATE_BUILT_KEY.findall(line):
                pieces = [p.strip() for p in expression.split("~")]
                pattern = "".join(p[1:-1] if p[0] in "\"'" else "{}" for p in pieces)
                found.setdefault(pattern, set()).add(f"{path.name}:{n}")
    return found


def test_every_family_member_has_words_in_both_languages():
    missing = [f"{key} ({lang})" for family in ENUMERATED.values() for key in family.keys()
               for lang in messages.LANGS
               if not messages.catalogue().get(key, {}).get(lang)]
    assert len(ENUMERATED) >= 10 and missing == []


def test_every_key_built_at_run_time_comes_from_a_declared_family():
    undeclared, relays = [], set()
    for where, expression, alternatives in key_expressions():
        for a in alternatives:
            if isinstance(a, messages.Family):
                continue
            if a == OPAQUE:
                relays.add((where.rsplit(":", 1)[0], expression))
            elif "{}" in a and a not in ENUMERATED:
                undeclared.append(f"{where}: {expression} -> {a}")
            elif "{}" not in a and not messages.has(a):
                undeclared.append(f"{where}: {expression} -> {a} (no such key)")
    for pattern, where in template_key_patterns().items():
        if pattern not in ENUMERATED:
            undeclared.append(f"{sorted(where)}: {pattern}")
    assert undeclared == []
    assert relays == set(RELAYS), "a key passed on from elsewhere: list it in RELAYS with why"


def test_every_catalogue_key_is_used():
    used = set(keys_used_in_python()) | set(keys_used_in_templates())
    used |= {a for _, _, alternatives in key_expressions() for a in alternatives
             if isinstance(a, str) and "{}" not in a and OPAQUE not in a}
    used |= {key for family in ENUMERATED.values() for key in family.keys()}
    dead = sorted(set(messages.catalogue()) - used)
    assert dead == []


def test_the_dynamic_scan_follows_literals_and_finds_patterns():
    snippet = ('NAMES = {"a": "tx-a", "b": "tx-b"}\n'
               'def f(lab, o, detail):\n'
               '    key = "race.x" if o else "race.y"\n'
               '    lab.note(key)\n'
               '    lab.fail(NAMES[o])\n'
               '    lab.fail(f"race-{o}")\n'
               '    lab.fail("lock-" + ("both" if o else o.name))\n'
               '    lab.fail(detail)\n'
               '    text(OUTCOME(o))\n'
               'def g(lab):\n'
               '    f(lab, 1, "tx-c")\n'
               '    [text(k) for k in ("ui.a", "ui.b")]\n'
               '    text(lab.key)\n')
    scan = KeyScan(snippet, in_checks=True)
    found = [scan.alternatives(expr) | ({prefix} if prefix else set())
             for expr, prefix, _ in scan.sites()]
    assert {"race.x", "race.y"} in found
    assert {"detail.", "tx-a", "tx-b"} in found
    assert {"detail.", "race-{}"} in found
    assert {"detail.", "lock-both", "lock-{}"} in found
    assert {"detail.", "tx-c"} in found
    assert {messages.OUTCOME} in found
    assert {"ui.a", "ui.b"} in found
    assert {OPAQUE} in found


def test_the_families_of_the_instructor_are_its_own_values():
    from grader.instructor.submission import TOO_LARGE_KINDS
    from grader.report import results_json as r

    assert set(messages.INSTRUCTOR_STATUS.members()) == {
        r.GRADED, r.TIMED_OUT, r.CRASHED, r.MISSING, r.AMBIGUOUS, r.NOT_REGULAR, r.TOO_LARGE}
    assert messages.INSTRUCTOR_TOO_LARGE.members() == TOO_LARGE_KINDS


# -- strict mode -----------------------------------------------------------------------------------
def test_strict_mode_is_on_in_the_tests():
    assert messages.strict(), "tests/conftest.py turns LEASELAB_STRICT_MESSAGES on"


@pytest.mark.parametrize("call, problem", [
    (lambda: messages.text("ui.no-such-key"), "no message 'ui.no-such-key'"),
    (lambda: messages.text("ui.why", "fr"), "unknown language 'fr'"),
    (lambda: messages.text("ui.points", "en", score=1), "cannot be filled"),
    (lambda: messages.OUTCOME("exploded"), "not a member of 'outcome.{}'"),
])
def test_strict_mode_raises(call, problem):
    with pytest.raises(messages.MessageError, match=re.escape(problem)):
        call()


def test_outside_strict_mode_a_word_never_crashes_a_report(lenient_messages):
    assert not messages.strict()
    assert messages.text("ui.no-such-key") == "ui.no-such-key"
    assert messages.text("ui.why", "fr") == messages.text("ui.why", "en")
    assert "{points}" in messages.text("ui.points", "en", score=1)
    assert messages.OUTCOME("exploded") == "outcome.exploded"
