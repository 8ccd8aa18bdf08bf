"""`python -m grader export-student DIR`: the student repository, without solutions or mutants,
installs and grades on its own; its GitHub Actions workflow's steps work when run in order.

The fresh-venv test (pip install -e . of the export) takes about half a minute and runs by
default, CI included; set LEASELAB_SKIP_VENV=1 to skip it locally.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import mdlinks
from conftest import ROOT, run_grader
from grader.instructor import distribution, export_student
from grader.checkdef import all_checks as declared_checks

WORKFLOW = ".github/workflows/grade.yml"


@pytest.fixture(scope="module")
def exported(tmp_path_factory) -> Path:
    dest = tmp_path_factory.mktemp("export") / "student-repo"
    proc = run_grader("export-student", str(dest))
    assert proc.returncode == 0, proc.stderr
    return dest


def test_no_solutions_no_mutants_no_instructor_tools(exported):
    files = {p.relative_to(exported).as_posix() for p in exported.rglob("*") if p.is_file()}
    assert not any(f.startswith(("solutions/", "tests/", "bench/")) for f in files)
    assert "docs/DEVELOPING.md" not in files and "docs/instructors.md" not in files
    assert {"docs/contract.md", "docs/lesson.en.md", "docs/lesson.ja.md"} <= files
    assert (exported / "docs/contract.md").read_bytes() == (ROOT / "docs/contract.md").read_bytes()
    assert {"lab/queue.py", "lab/store.py", "lab/__init__.py", "grader/cli.py", "README.md",
            "pyproject.toml", ".gitignore", WORKFLOW} <= files
    assert "grader/instructor/batch.py" not in files and "grader/instructor/export_student.py" not in files
    assert not any("__pycache__" in f for f in files)
    assert distribution.forbidden_imports(exported) == []
    assert distribution.is_stub(exported / "lab" / "queue.py")
    assert "solutions" not in (exported / "pyproject.toml").read_text(encoding="utf-8")


@pytest.mark.filterwarnings("ignore::pytest.PytestUnknownMarkWarning")  # check modules imported
def test_readme_states_the_contract_and_the_check_catalogue(exported):
    readme = (exported / "README.md").read_text(encoding="utf-8")
    for name in ("claim(conn, owner, now, lease_ms) -> Claim | None",
                 "finish(conn, claim, now) -> bool", "BEGIN IMMEDIATE", "pip install -e ."):
        assert name in readme
    for check in declared_checks().values():
        assert re.search(rf"\| `{check.id}` \| {check.points} \| .+ \| .+ \|", readme), check.id
    assert "solutions" not in readme


def copy_links_broken(copy: Path) -> list[str]:
    """The links of the copy's README and docs/*.md that lead to nothing inside the copy."""
    pages = [copy / "README.md", *sorted((copy / "docs").glob("*.md"))]
    return [b for page in pages for b in mdlinks.broken(page, copy)]


def test_every_link_in_the_copy_leads_to_a_file_in_it(exported):
    linked = set(mdlinks.links((exported / "README.md").read_text(encoding="utf-8")))
    assert {"docs/contract.md", "docs/lesson.en.md", "docs/lesson.ja.md"} <= linked
    assert copy_links_broken(exported) == []


def test_refuses_a_non_empty_folder_unless_forced(tmp_path):
    (tmp_path / "notes.txt").write_text("mine")
    assert run_grader("export-student", str(tmp_path)).returncode == 2
    assert not (tmp_path / "lab").exists()
    assert run_grader("export-student", str(tmp_path), "--force").returncode == 0
    assert (tmp_path / "lab" / "queue.py").exists() and (tmp_path / "notes.txt").exists()


def _fake_root(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    for name in ("lab", "grader", "docs"):
        shutil.copytree(ROOT / name, root / name, ignore=shutil.ignore_patterns("__pycache__"))
    for name in ("pyproject.toml", ".gitignore"):
        shutil.copy(ROOT / name, root / name)
    return root


def test_refuses_a_solution_in_place_of_the_stubs(tmp_path):
    root = _fake_root(tmp_path)
    shutil.copy(ROOT / "solutions" / "queue.py", root / "lab" / "queue.py")
    with pytest.raises(distribution.DistributionError, match="not the stubs"):
        export_student.export(tmp_path / "out", root=root)
    assert not (tmp_path / "out").exists()


def test_refuses_a_source_without_the_contract_page(tmp_path):
    root = _fake_root(tmp_path)
    (root / "docs" / "contract.md").unlink()
    with pytest.raises(distribution.DistributionError, match="docs/contract.md is missing"):
        export_student.export(tmp_path / "out", root=root)
    assert not (tmp_path / "out").exists()


def test_refuses_a_grader_that_imports_solutions(tmp_path):
    root = _fake_root(tmp_path)
    (root / "grader" / "peek.py").write_text("import importlib\n"
                                              "importlib.import_module('solutions.queue')\n")
    with pytest.raises(distribution.DistributionError, match="grader/peek.py: solutions.queue"):
        export_student.export(tmp_path / "out", root=root)


def workflow_run_steps(workflow: str) -> list[str]:
    """The `run:` commands of the workflow, in order (the template keeps each on one line)."""
    return [m.group(1).strip() for m in re.finditer(r"^\s+run:\s*(\S.*)$", workflow, re.M)]


def test_workflow_installs_grades_and_keeps_results(exported):
    workflow = (exported / WORKFLOW).read_text(encoding="utf-8")
    assert workflow_run_steps(workflow) == [
        "python -m pip install -e .", "python -m grader --json results.json --markdown summary.md",
        'cat summary.md >> "$GITHUB_STEP_SUMMARY"']
    assert "actions/upload-artifact" in workflow and "if: always()" in workflow
    import yaml  # the test extra: the workflow must parse as GitHub reads it
    steps = yaml.safe_load(workflow)["jobs"]["grade"]["steps"]
    upload = next(s for s in steps if s.get("uses", "").startswith("actions/upload-artifact"))
    assert upload["with"]["path"] == "results.json" and upload["if"] == "always()"
    assert not any("continue-on-error" in s for s in steps)  # a failing grade fails the job


def test_workflow_shows_the_summary_and_offers_grading_only_submit_tags(exported):
    import yaml

    workflow = (exported / WORKFLOW).read_text(encoding="utf-8")
    parsed = yaml.safe_load(workflow)
    steps = parsed["jobs"]["grade"]["steps"]
    summary = next(s for s in steps if "GITHUB_STEP_SUMMARY" in s.get("run", ""))
    grade = next(s for s in steps if s.get("run", "").startswith("python -m grader"))
    assert steps.index(grade) < steps.index(summary)
    assert "always()" in summary["if"] and "hashFiles('summary.md')" in summary["if"]
    # the tag trigger is offered, commented: it does not change when the workflow runs
    assert set(parsed[True]) == {"push", "pull_request", "workflow_dispatch"}  # YAML 1.1: on
    commented = yaml.safe_load("\n".join(line.replace("# ", "", 1) for line in
                                          workflow.splitlines() if line.startswith("  #   ")
                                          or line == "  # push:"))
    assert commented == {"push": {"tags": ["submit/*"]}}
    assert "Actions minutes" in workflow
    assert "Classroom" not in workflow + (exported / "README.md").read_text(encoding="utf-8")


@pytest.fixture(scope="module")
def workflow_in_venv(exported, tmp_path_factory):
    """The exported repo in a fresh venv, installed by the workflow's own first step."""
    if os.environ.get("LEASELAB_SKIP_VENV"):
        pytest.skip("LEASELAB_SKIP_VENV is set")
    repo = tmp_path_factory.mktemp("ci") / "repo"
    shutil.copytree(exported, repo)
    venv = repo.parent / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=300)
    python = str(venv / "bin" / "python")
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    env.update(NO_COLOR="1", LANG="C.UTF-8", PIP_DISABLE_PIP_VERSION_CHECK="1")
    install, grade, summary = workflow_run_steps((repo / WORKFLOW).read_text(encoding="utf-8"))
    env["GITHUB_STEP_SUMMARY"] = str(repo.parent / "step-summary.md")

    def run(step: str) -> subprocess.CompletedProcess:
        cmd = [python, *step.split()[1:]] if step.startswith("python ") else ["bash", "-c", step]
        return subprocess.run(cmd, cwd=repo, env=env, capture_output=True, text=True,
                              timeout=600)

    installed = run(install)
    assert installed.returncode == 0, installed.stdout[-3000:] + installed.stderr[-3000:]
    return {"repo": repo, "run": run, "grade": grade, "summary": summary,
            "step_summary": Path(env["GITHUB_STEP_SUMMARY"])}


def test_exported_repo_grades_the_stubs_zero_in_a_fresh_venv(workflow_in_venv):
    proc = workflow_in_venv["run"](workflow_in_venv["grade"])
    results = json.loads((workflow_in_venv["repo"] / "results.json").read_text("utf-8"))
    assert proc.returncode == 1, proc.stderr
    assert results["score"] == 0 and results["max_score"] > 0
    assert {t["extra_data"]["outcome"] for t in results["tests"]} == {"not_implemented"}
    assert workflow_in_venv["run"](workflow_in_venv["summary"]).returncode == 0
    shown = workflow_in_venv["step_summary"].read_text(encoding="utf-8")
    assert f"**Score: 0 / {results['max_score']}**" in shown
    assert shown.count("\n- `") == len(results["tests"])  # every check is listed as failing


def test_exported_repo_gives_the_reference_full_marks_in_a_fresh_venv(workflow_in_venv):
    repo = workflow_in_venv["repo"]
    shutil.copy(ROOT / "solutions" / "queue.py", repo / "lab" / "queue.py")
    proc = workflow_in_venv["run"](workflow_in_venv["grade"])
    results = json.loads((repo / "results.json").read_text("utf-8"))
    assert proc.returncode == 0, proc.stdout[-3000:]
    assert results["score"] == results["max_score"] > 0
    assert workflow_in_venv["run"]("python -m grader batch .").returncode == 2  # not in this copy


def test_without_the_model_the_copy_says_what_runs_only_where_grades_are_recorded(tmp_path):
    dest = tmp_path / "student-repo"
    proc = run_grader("export-student", str(dest), "--without-model")
    assert proc.returncode == 0, proc.stderr
    files = {p.relative_to(dest).as_posix() for p in dest.rglob("*") if p.is_file()}
    assert not set(distribution.MODEL_FILES) & files
    assert "docs/contract.md" in files and copy_links_broken(dest) == []
    points = declared_checks()["random-timelines"].points
    assert json.loads((dest / "grader/checks/withheld.json").read_text()) == [
        {"id": "random-timelines", "points": points}]
    shutil.copyfile(ROOT / "solutions" / "queue.py", dest / "lab" / "queue.py")
    graded = subprocess.run(  # the copy's own grader: its folder first on the path
        [sys.executable, "-m", "grader", "-k", "finish-before-expiry", "--json", "r.json"],
        cwd=dest, env={**os.environ, "PYTHONPATH": str(dest), "NO_COLOR": "1"},
        capture_output=True, text=True, timeout=120)
    assert graded.returncode == 0, graded.stdout + graded.stderr
    assert f"Not in this copy: random-timelines ({points} pt)" in graded.stdout
    results = json.loads((dest / "r.json").read_text())
    assert results["extra_data"]["withheld"] == [{"id": "random-timelines", "points": points}]
    assert all(t["extra_data"]["check_id"] != "random-timelines" for t in results["tests"])
    # nor does the copy carry the model elsewhere: its Lab holds calls to the connection and
    # clock rules only (grader.harness.judge.invariants writes no model of the rows)
    modelless = subprocess.run(
        [sys.executable, "-c", "import grader.checks;"
         " print(grader.checks.contract_model(), grader.checks.__file__)"],
        cwd=dest, env={**os.environ, "PYTHONPATH": str(dest)}, capture_output=True, text=True,
        timeout=60)
    assert modelless.stdout.split() == ["None", str(dest / "grader/checks/__init__.py")], \
        modelless.stdout + modelless.stderr


def test_the_full_copy_carries_the_model_and_withholds_nothing(exported):
    assert all((exported / rel).is_file() for rel in distribution.MODEL_FILES)
    assert not (exported / "grader/checks/withheld.json").exists()


def test_the_student_copy_ignores_every_file_its_workflow_writes(exported):
    """The workflow's reports (results.json, summary.md) are not committed by a student's
    `git add .` (issue 29)."""
    import yaml

    dest = exported
    ignored = (dest / ".gitignore").read_text(encoding="utf-8").split()
    steps = yaml.safe_load((dest / WORKFLOW).read_text(encoding="utf-8"))
    runs = " ".join(s.get("run", "") for job in steps["jobs"].values() for s in job["steps"])
    for name in ("results.json", "summary.md"):
        assert f"--{'json' if name.endswith('json') else 'markdown'} {name}" in runs
        assert f"/{name}" in ignored, name


def test_pytest_and_the_editors_test_explorer_run_the_checks_in_the_student_copy(exported,
                                                                                 tmp_path):
    """In the student copy, `python -m pytest` runs the checks on lab/queue.py (its
    pyproject.toml says where they are; the plugin is the package's pytest11 entry point),
    one check by its id, then only the ones that failed (--lf); VS Code's settings turn
    pytest on."""
    copy = tmp_path / "copy"
    shutil.copytree(exported, copy)
    settings = json.loads((copy / ".vscode" / "settings.json").read_text(encoding="utf-8"))
    assert settings["python.testing.pytestEnabled"] is True
    # the editor runs them with the copy's own environment, the one its README makes
    assert settings["python.defaultInterpreterPath"] == "${workspaceFolder}/.venv/bin/python"
    readme = (copy / "README.md").read_text(encoding="utf-8")
    assert "python3 -m venv .venv" in readme
    env = {**os.environ, "PYTHONPATH": str(copy), "NO_COLOR": "1"}
    env.pop("PYTEST_ADDOPTS", None)
    env.pop("PYTEST_XDIST_WORKER", None)

    def pytest_in_copy(*args):
        return subprocess.run([sys.executable, "-m", "pytest", *args], cwd=copy, env=env,
                              capture_output=True, text=True, timeout=300)

    one = pytest_in_copy("-q", "-k", "finish-at-expiry or finish-before-expiry")
    assert one.returncode == 1, one.stdout[-2000:] + one.stderr
    assert "FAILED grader/checks/test_boundaries.py::finish-at-expiry" in one.stdout
    assert "2 failed" in one.stdout and "not implemented" in one.stdout
    again = pytest_in_copy("-q", "--lf", "--collect-only")
    assert "grader/checks/test_boundaries.py::finish-at-expiry" in again.stdout
    collected = f"2/{len(declared_checks())} tests collected"
    assert collected in again.stdout or "2 tests collected" in again.stdout, \
        again.stdout
