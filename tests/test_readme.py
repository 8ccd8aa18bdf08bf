"""The README and the docs stay true: the check catalogue in docs/contract.md is the grader's,
100 points in all; the README's test command is the one CI runs and its grade command is there;
every relative link in README.md and docs/*.md leads to a file; no page cites a file students do
not have; every `python -m grader` command and option the pages show exists."""

from __future__ import annotations

import re

import pytest

import mdlinks
from conftest import ROOT, run_grader

from grader.checkdef import ID_PATTERN, all_checks
from grader.report import check_list, messages
from grader.report.messages import LANGS

README = (ROOT / "README.md").read_text(encoding="utf-8")
#: Where the contract, its decisions and the check catalogue live (students get it too).
CONTRACT = (ROOT / "docs" / "contract.md").read_text(encoding="utf-8")
#: Every page a reader of the repository is sent to: the README and docs/*.md.
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]


def test_points_add_up_to_100_over_unique_kebab_case_ids():
    checks = all_checks()
    assert sum(c.points for c in checks.values()) == 100
    assert all(ID_PATTERN.match(check_id) for check_id in checks)
    assert all(c.points > 0 for c in checks.values())


def test_contract_lists_every_check_as_the_grader_does():
    assert check_list.markdown("en") in CONTRACT and check_list.counted() in CONTRACT, \
        "run: python -m grader checks --markdown --update docs/contract.md"


def test_checks_update_writes_the_table_and_the_count_into_the_contract(tmp_path):
    """A contract whose table lacks a check (and counts one check fewer) is brought up to date:
    the file becomes docs/contract.md as it is; a second run changes nothing."""
    rows = CONTRACT.split("\n")
    last_check = max(i for i, line in enumerate(rows) if line.startswith("| `"))
    stale = "\n".join(rows[:last_check] + rows[last_check + 1:])
    count = len(all_checks())
    assert f"over {count} checks" in stale
    stale = stale.replace(f"over {count} checks", f"over {count - 1} checks", 1)
    path = tmp_path / "contract.md"
    path.write_text(stale, encoding="utf-8")
    proc = run_grader("checks", "--markdown", "--update", str(path), env={"LANG": "ja_JP.UTF-8"})
    assert proc.returncode == 0 and proc.stdout == f"{path}: updated\n", proc.stderr
    assert path.read_text(encoding="utf-8") == CONTRACT
    proc = run_grader("checks", "--markdown", "--update", str(path))
    assert proc.returncode == 0 and proc.stdout == f"{path}: already up to date\n"


def test_checks_update_refuses_a_file_without_the_table(tmp_path):
    path = tmp_path / "notes.md"
    path.write_text("# Notes\n\n| a | b |\n", encoding="utf-8")
    proc = run_grader("checks", "--markdown", "--update", str(path))
    assert proc.returncode == 2 and "no check table" in proc.stderr
    assert path.read_text(encoding="utf-8") == "# Notes\n\n| a | b |\n"
    proc = run_grader("checks", "--update", str(path))
    assert proc.returncode == 2 and "--update needs --markdown" in proc.stderr


def test_readme_test_command_is_what_ci_runs():
    command = ("python3 -m venv .venv && .venv/bin/pip install -e '.[test]'"
               " && .venv/bin/python -m pytest -n auto --dist loadfile")
    assert command in README
    ci = (ROOT / ".ci" / "run").read_text()
    assert "pip install --quiet -e '.[test]'" in ci
    assert ".venv/bin/python -m pytest -n auto --dist loadfile" in ci


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
        said = messages.text(messages.CHECK_WHY(check.id), lang)
        if lang == "ja":  # wrapped between wide characters too: no space where a line breaks
            assert "".join("".join(why).split()) == "".join(said.split())
        else:
            assert " ".join(" ".join(why).split()) == said


def test_checks_markdown_prints_the_contract_table_and_only_it():
    proc = run_grader("checks", "--markdown", "--lang", "en")
    assert proc.returncode == 0 and proc.stdout == check_list.markdown("en") + "\n"


def test_readme_sends_each_reader_to_their_page():
    linked = set(mdlinks.links(README))
    assert {"docs/contract.md", "docs/instructors.md", "docs/DEVELOPING.md",
            "docs/lesson.en.md", "docs/lesson.ja.md"} <= linked


def test_every_relative_link_in_the_readme_and_docs_leads_to_a_file():
    assert len(PAGES) >= 5  # README, contract, instructors, DEVELOPING, the lessons
    relative = [target for page in PAGES for target in mdlinks.links(page.read_text("utf-8"))
                if not mdlinks.EXTERNAL.match(target)]
    assert len(relative) >= 10  # the pages do link to each other: the checker is not idle
    broken = [b for page in PAGES for b in mdlinks.broken(page, ROOT)]
    assert broken == []


def test_the_link_checker_finds_a_missing_file_and_a_missing_heading(tmp_path):
    (tmp_path / "a.md").write_text("# A\n## The receiver\n[ok](#the-receiver) [ok](b.md)\n"
                                   "[gone](c.md) [gone](#the-sender) `[code](d.md)`\n"
                                   "[web](https://example.com/x.md)\n", encoding="utf-8")
    (tmp_path / "b.md").write_text("# B\n", encoding="utf-8")
    assert mdlinks.broken(tmp_path / "a.md", tmp_path) == [
        "a.md: c.md (no such file)", "a.md: #the-sender (no such heading)"]


def test_no_page_cites_the_course_contract_file_students_do_not_have():
    for page in PAGES:
        assert "LAB_SPEC" not in page.read_text(encoding="utf-8"), page.name


#: `python -m grader` and what follows it on one line of a page, up to a comment or a code span's end
#: (not a module of the grader's run as a script: `python -m grader.harness.target.server`).
GRADER_COMMAND = re.compile(r"python -m grader(?![\w.])([^`#\n]*)")
#: A word after `python -m grader` that is not a command: the README's example of a mistyped one.
NOT_COMMANDS = {"quizz"}


def _options(command: str | None) -> set[str]:
    proc = run_grader(*([command] if command else []), "--help")
    assert proc.returncode == 0, proc.stderr
    return set(re.findall(r"--[a-z][a-z0-9-]*", proc.stdout))


def test_every_grader_command_and_option_on_the_pages_exists():
    from grader.commands import SUBCOMMANDS

    options = {None: _options(None), **{c: _options(c) for c in SUBCOMMANDS}}
    shown = 0
    for page in PAGES:
        for rest in GRADER_COMMAND.findall(page.read_text(encoding="utf-8")):
            words = rest.split()
            command = words[0] if words and re.fullmatch(r"[a-z][a-z0-9-]*", words[0]) else None
            if command in NOT_COMMANDS:
                continue
            assert command is None or command in SUBCOMMANDS, f"{page.name}: {rest.strip()}"
            for flag in re.findall(r"(?<![\w-])--[a-z][a-z0-9-]*", rest):
                assert flag in options[command], f"{page.name}: python -m grader{rest}"
            shown += 1
    assert shown > 30


#: A grade's command in a page (not a subcommand's): `python -m grader` and its options.
GRADE_COMMAND = re.compile(r"python -m grader((?: --?[\w-]+(?: [^\s`|-][^\s`|]*)?)+)")
#: The options that write a grade somewhere it is kept.
RECORDING = ("--json", "--junit", "--markdown", "--prairielearn", "--html")


def test_every_command_for_instructors_that_records_a_grade_draws_a_fresh_world():
    """docs/instructors.md: a command that writes a grade's report draws a fresh world: it
    says --replay fresh, or writes --prairielearn (which does so by itself), or it is the
    student workflow's, which runs in CI (grader.cli.in_ci) and says so on its line."""
    page = (ROOT / "docs" / "instructors.md").read_text(encoding="utf-8")
    found = []
    for line in page.splitlines():
        for match in GRADE_COMMAND.finditer(line):
            options = match.group(1).split()
            if not set(options) & set(RECORDING) or "--replay" in options and \
                    options[options.index("--replay") + 1] != "fresh":
                continue
            found.append(match.group(0))
            assert ("--replay fresh" in match.group(0) or "--prairielearn" in options
                    or "CI" in line), line
    assert len(found) >= 5, found
    workflow = (ROOT / "grader" / "instructor" / "templates" / "github_workflow.yml").read_text()
    assert "run: python -m grader --json results.json --markdown summary.md\n" in workflow
