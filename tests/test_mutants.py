"""The catalogue of buggy implementations: each must fail the checks it should, for the right
reason, and pass every other check.

A mutant is `tests/mutants/<name>.py` (names starting with `_` are helpers) with:
- a docstring whose first line names the one bug;
- `EXPECT_FAIL`: the check ids it must fail;
- optionally `MAY_FAIL`: check ids it may also fail (collateral of the same bug);
- optionally `EXPECT_OUTCOME`: {check id: outcome} where the right failure is not plain
  'failed' (e.g. 'timed_out', 'errored'), or `OUTCOME`: the outcome of every check it fails;
- optionally `EXPECT_TEXT`: {check id: text the failure output must contain} (for a check a
  shared cause explains: its one line "See: ..." or the file's output, which leads with the cause);
- optionally `EXPECT_NO_TEXT`: {check id: text it must not contain} (a wrong diagnosis the
  right one replaced);
- optionally `EXPECT_CAUSE`: {check id: the kind of root cause the report groups it under}
  (results.json's extra_data.causes[cause - 1].kind: "raised", "send-in-transaction", ...);
- optionally `LIGHT = True`: a variant of a bug the catalogue already carries through every suite
  (a comparison the other way, a neighbouring boundary, the same slip in another function),
  graded here and in drawn worlds (tests/test_mutant_worlds.py) but not by the pytest parity and
  the seed sweep (`EVERY_SUITE`), each about 5 s of CI wall a mutant.

Both texts are templates of the check's world (`in_world`): `{B}` is the name the world gives
worker B, `{id:2}` the id of the second job enqueued, `{qty:5}` the quantity of the lesson's 5,
`{file:queue}` a database file's name, `{t0 + lease_ms}` an instant (t0, lease_ms and far, whole
numbers, + - *); `{{` and `}}` are braces. In the lesson's world (this file's grades) each is the
lesson's value ("B", 2, 5, "queue.db", 1000); tests/test_mutant_worlds.py grades the mutants in
drawn worlds, where the same declaration must hold.
"""

from __future__ import annotations

import ast
import operator
import string
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from conftest import MUTANTS, by_check, grade, selected
from grader.harness.judge.world import LESSON_SEED, ROLES, World

MUTANT_FILES = sorted(p for p in MUTANTS.glob("*.py") if not p.name.startswith("_"))


def declared(path: Path, seed: int = LESSON_SEED) -> dict:
    """The mutant's docstring and declarations, read without importing it; its EXPECT_TEXT and
    EXPECT_NO_TEXT filled in with the values of the world each check runs in under `seed`."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found = {"doc": ast.get_docstring(tree) or ""}
    for node in tree.body:
        if isinstance(node, ast.Assign) and len(node.targets) == 1:
            name = getattr(node.targets[0], "id", None)
            if name in ("EXPECT_FAIL", "MAY_FAIL", "EXPECT_OUTCOME", "OUTCOME", "EXPECT_TEXT",
                        "EXPECT_NO_TEXT", "EXPECT_CAUSE", "LIGHT"):
                found[name] = ast.literal_eval(node.value)
        elif (isinstance(node, ast.AugAssign) and isinstance(node.op, ast.BitOr)
              and getattr(node.target, "id", None) == "MAY_FAIL"):  # MAY_FAIL |= {...}
            found["MAY_FAIL"] = set(found.get("MAY_FAIL", ())) | ast.literal_eval(node.value)
    for name in ("EXPECT_TEXT", "EXPECT_NO_TEXT"):
        if name in found:
            found[name] = {cid: in_world(text, seed, cid) for cid, text in found[name].items()}
    return found


_TIME_OPS = {ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul}


def in_world(template: str, seed: int, check: str) -> str:
    """`template` (an EXPECT_TEXT) with the values of check `check`'s world under `seed` (the
    world the grader drew for it: grader.harness.judge.world): `{A}`, `{B}`... a worker's name,
    `{id:N}` the N-th enqueued job's id, `{qty:Q}` the lesson's quantity Q, `{file:KIND}` a
    database file's name, `{t0 + lease_ms}` an instant (t0, lease_ms, far; + - *)."""
    world = World(seed, check)
    out = []
    for literal, field, spec, conversion in string.Formatter().parse(template):
        out.append(literal)
        if field is None:
            continue
        assert conversion is None, f"no conversion in a template: {template!r}"
        field = field.strip()
        if field in ROLES and not spec:
            out.append(world.roles[field])
        elif field == "id":
            out.append(str(world.job_id(int(spec))))
        elif field == "qty":
            out.append(str(world.qty(int(spec))))
        elif field == "file":
            out.append(world.file(spec))
        else:
            assert not spec, f"{{{field}:{spec}}}: not a template field"
            out.append(str(_instant(ast.parse(field, mode="eval").body, world)))
    return "".join(out)


def _instant(node: ast.AST, world: World) -> int:
    """An instant written in the world's terms: whole numbers, t0, lease_ms and far, + - *."""
    if isinstance(node, ast.Constant) and type(node.value) is int:
        return node.value
    if isinstance(node, ast.Name) and node.id in ("t0", "lease_ms", "far"):
        return getattr(world, node.id)
    if isinstance(node, ast.BinOp) and type(node.op) in _TIME_OPS:
        return _TIME_OPS[type(node.op)](_instant(node.left, world), _instant(node.right, world))
    raise AssertionError(f"not a template field: {ast.unparse(node)!r}")


#: The mutants every suite grades (the pytest parity and the seed sweep too): all but LIGHT ones.
EVERY_SUITE = [p for p in MUTANT_FILES if declared(p).get("LIGHT") is not True]

@pytest.fixture(scope="module")
def graded_mutants(request, tmp_path_factory):
    tmp = tmp_path_factory.mktemp("mutants")
    with ThreadPoolExecutor(max_workers=2) as pool:
        # --hints: the whole diagnosis a student can ask for, so EXPECT_TEXT can hold the
        # hint that fits the bug (and EXPECT_NO_TEXT one that would not fit it); shared: the
        # parity of tests/test_pytest_plugin.py compares the same grade with pytest's. Only
        # the mutants whose tests are selected (-k NAME grades that one)
        done = pool.map(lambda p: (p.stem, grade(str(p), tmp, "--hints", shared=True)),
                        selected(request, "path", MUTANT_FILES))
        return dict(done)


@pytest.mark.parametrize("path", MUTANT_FILES, ids=[p.stem for p in MUTANT_FILES])
def test_mutant_is_caught_for_the_right_reason(path, graded_mutants):
    proc, results = graded_mutants[path.stem]
    spec = declared(path, results["extra_data"]["seed"])
    assert spec["doc"].strip(), "a mutant's docstring names its bug"
    expect_fail = set(spec.get("EXPECT_FAIL", ()))
    assert expect_fail, "a mutant declares the checks that must catch it"
    may_fail = set(spec.get("MAY_FAIL", ()))
    checks = by_check(results)
    unknown = (expect_fail | may_fail) - set(checks)
    assert not unknown, f"no such checks: {unknown}"
    failed = {cid for cid, t in checks.items() if t["status"] == "failed"}
    assert expect_fail - failed == set(), "checks that should have caught this bug passed"
    assert failed - expect_fail - may_fail == set(), "checks that should pass failed"
    assert proc.returncode == 1
    # what the code under grade caused is its verdict: only a defect of the grader is its own
    bugs = [cid for cid, t in checks.items() if "The grader itself failed" in t["output"]]
    assert bugs == [], f"the grader blamed itself for the mutant's doing: {bugs}"
    outcomes = spec.get("EXPECT_OUTCOME", {})
    for cid in expect_fail:
        want = outcomes.get(cid, spec.get("OUTCOME", "failed"))
        assert checks[cid]["extra_data"]["outcome"] == want, (cid, checks[cid]["output"])
    for cid, snippet in spec.get("EXPECT_TEXT", {}).items():
        assert snippet in said(checks[cid], results), (cid, checks[cid]["output"])
    for cid, snippet in spec.get("EXPECT_NO_TEXT", {}).items():
        assert snippet not in said(checks[cid], results), (cid, checks[cid]["output"])
    for cid, kind in spec.get("EXPECT_CAUSE", {}).items():
        number = checks[cid]["extra_data"].get("cause")  # extra_data.causes[number - 1]
        cause = results["extra_data"]["causes"][number - 1] if number else {}
        assert cause.get("kind") == kind, (cid, cause, checks[cid]["output"])


def said(test: dict, results: dict) -> str:
    """What results.json tells about a check: its output, and for a check a shared cause
    explains ("See: ..." in its output) the file's top-level output, which leads with that
    cause's whole story (its line of code, its hint)."""
    if "cause" in test["extra_data"]:
        return test["output"] + "\n" + results["output"]
    return test["output"]
