"""The README stays true: its check catalogue is the grader's, 100 points in all, and its test
command is the one CI runs."""

from __future__ import annotations

import pytest

from conftest import ROOT, run_grader

from grader.report import check_list, messages
from grader.report.messages import LANGS
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


@pytest.mark.parametrize("lang", LANGS)
def test_checks_prints_the_why_of_each_check_under_its_title(lang):
    proc = run_grader("checks", "--lang", lang)
    assert proc.returncode == 0
    entries = proc.stdout.rstrip("\n").split("\n\n")
    assert len(entries) == len(all_checks())
    for check, entry in zip(all_checks().values(), entries):
        head, *why = entry.splitlines()
        assert head.split()[:2] == [check.id, str(check.points)]
        assert head.endswith(messages.text(messages.CHECK_TITLE(check.id), lang))
        assert all(line.startswith("    ") for line in why)
        assert " ".join(" ".join(why).split()) == messages.text(messages.CHECK_WHY(check.id), lang)


def test_checks_markdown_prints_the_readme_table_and_only_it():
    proc = run_grader("checks", "--markdown", "--lang", "en")
    assert proc.returncode == 0 and proc.stdout == check_list.markdown("en") + "\n"
