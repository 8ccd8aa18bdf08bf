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
  (results.json's extra_data.causes[cause - 1].kind: "raised", "send-in-transaction", ...).
"""

from __future__ import annotations

import ast
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from conftest import MUTANTS, by_check, grade

MUTANT_FILES = sorted(p for p in MUTANTS.glob("*.py") if not p.name.startswith("_"))


def declared(path: Path) -> dict:
    """The mutant's docstring and declarations, read without importing it."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found = {"doc": ast.get_docstring(tree) or ""}
    for node in tree.body:
        if isinstance(node, ast.Assign) and len(node.targets) == 1:
            name = getattr(node.targets[0], "id", None)
            if name in ("EXPECT_FAIL", "MAY_FAIL", "EXPECT_OUTCOME", "OUTCOME", "EXPECT_TEXT",
                        "EXPECT_NO_TEXT", "EXPECT_CAUSE"):
                found[name] = ast.literal_eval(node.value)
    return found


@pytest.fixture(scope="module")
def graded_mutants(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("mutants")
    with ThreadPoolExecutor(max_workers=2) as pool:
        # --hints: the whole diagnosis a student can ask for, so EXPECT_TEXT can hold the
        # hint that fits the bug (and EXPECT_NO_TEXT one that would not fit it)
        done = pool.map(lambda p: (p.stem, grade(str(p), tmp, "--hints")), MUTANT_FILES)
        return dict(done)


@pytest.mark.parametrize("path", MUTANT_FILES, ids=[p.stem for p in MUTANT_FILES])
def test_mutant_is_caught_for_the_right_reason(path, graded_mutants):
    spec = declared(path)
    assert spec["doc"].strip(), "a mutant's docstring names its bug"
    expect_fail = set(spec.get("EXPECT_FAIL", ()))
    assert expect_fail, "a mutant declares the checks that must catch it"
    may_fail = set(spec.get("MAY_FAIL", ()))
    proc, results = graded_mutants[path.stem]
    checks = by_check(results)
    unknown = (expect_fail | may_fail) - set(checks)
    assert not unknown, f"no such checks: {unknown}"
    failed = {cid for cid, t in checks.items() if t["status"] == "failed"}
    assert expect_fail - failed == set(), "checks that should have caught this bug passed"
    assert failed - expect_fail - may_fail == set(), "checks that should pass failed"
    assert proc.returncode == 1
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
