"""Correct implementations written differently from the reference all score full marks: the
checks grade behaviour (what ends up in the rows, what runs inside which transaction), not the
reference's SQL text."""

from __future__ import annotations

from pathlib import Path

import pytest

from conftest import ROOT, by_check, grade

ALTERNATIVES = sorted((ROOT / "tests" / "alternatives").glob("*.py"))


def test_there_are_alternatives():
    assert ALTERNATIVES


@pytest.mark.parametrize("path", ALTERNATIVES, ids=[p.stem for p in ALTERNATIVES])
def test_alternative_scores_full_marks(path: Path, tmp_path):
    proc, results = grade(str(path), tmp_path)
    failed = {cid: t["output"] for cid, t in by_check(results).items() if t["status"] != "passed"}
    assert failed == {}
    assert results["score"] == results["max_score"] > 0
    assert proc.returncode == 0
