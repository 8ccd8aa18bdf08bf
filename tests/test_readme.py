"""The README stays true: its check catalogue is the grader's, 100 points in all, and its test
command is the one CI runs."""

from __future__ import annotations

from conftest import ROOT

from grader.report import check_list
from grader.checkdef import ID_PATTERN, all_checks

README = (ROOT / "README.md").read_text(encoding="utf-8")


def test_points_add_up_to_100_over_unique_kebab_case_ids():
    checks = all_checks()
    assert sum(c.points for c in checks.values()) == 100
    assert all(ID_PATTERN.match(check_id) for check_id in checks)
    assert all(c.points > 0 for c in checks.values())


def test_readme_lists_every_check_as_the_grader_does():
    assert check_list.markdown("en") in README, "run: python -m grader checks --markdown"


def test_readme_test_command_is_what_ci_runs():
    command = ("python3 -m venv .venv && .venv/bin/pip install -e '.[test]'"
               " && .venv/bin/python -m pytest")
    assert command in README
    ci = (ROOT / ".ci" / "run").read_text()
    assert "pip install --quiet -e '.[test]'" in ci and ".venv/bin/python -m pytest" in ci


def test_readme_grade_command_is_there():
    assert "python3 -m venv .venv && .venv/bin/pip install -e . && .venv/bin/python -m grader" \
        in README
