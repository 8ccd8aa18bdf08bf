"""`python -m grader classroom50 OUT_DIR`: the generated autograder.py, run as Classroom 50 runs
it (in a student's checkout from `export-student`, with the runner's variables), writes a
result.json that holds to the documented contract (wiki "Advanced Autograding": schema, identity,
UTC ISO 8601 datetime, integer scores that are the sums of tests[]), exits 0 whenever it ran
(also for a submission that scores 0), and non-zero, with no result.json, on an infrastructure
error. Only finish-before-expiry is graded (-k), so the test does not grow with the catalogue.
"""

from __future__ import annotations

import ast
import datetime as dt
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import ROOT, run_grader
from grader.checkdef import all_checks

CHECK = "finish-before-expiry"
POINTS = all_checks()[CHECK].points
RUNNER_ENV = {"CLASSROOM": "cs-lab", "ASSIGNMENT": "leases", "SUBMISSION_TAG": "submit/2026-x",
              "COMMIT_URL": "https://github.com/o/r/commit/abc",
              "RELEASE_URL": "https://github.com/o/r/releases/tag/submit%2F2026-x",
              "REVIEW_URL": "https://github.com/o/r/compare/base...abc"}
KEYS = {"schema", "classroom", "assignment", "submission", "commit", "release", "review",
        "datetime", "graded_at", "score", "max-score", "tests"}


@pytest.fixture(scope="module")
def autograder(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("classroom50") / "autograders" / "leases"
    proc = run_grader("classroom50", str(out), "--lang", "en", "-k", CHECK, "--timeout", "120")
    assert proc.returncode == 0, proc.stderr
    return out


@pytest.fixture(scope="module")
def student_repo(tmp_path_factory) -> Path:
    repo = tmp_path_factory.mktemp("export") / "repo"
    proc = run_grader("export-student", str(repo))
    assert proc.returncode == 0, proc.stderr
    return repo


@pytest.fixture
def checkout(student_repo, tmp_path) -> Path:
    """A fresh copy of the student repository, as the runner checks it out (the stubs)."""
    return Path(shutil.copytree(student_repo, tmp_path / "checkout"))


def run(autograder: Path, checkout: Path, **env: str) -> subprocess.CompletedProcess:
    full_env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH",)}
    full_env.update(RUNNER_ENV, NO_COLOR="1", **env)
    return subprocess.run([sys.executable, str(autograder / "autograder.py")], cwd=checkout,
                          env=full_env, capture_output=True, text=True, timeout=300)


def result_of(checkout: Path) -> dict:
    result = json.loads((checkout / "result.json").read_text(encoding="utf-8"))
    assert_contract(result)
    return result


def assert_contract(result: dict) -> None:
    assert set(result) == KEYS
    assert result["schema"] == "classroom50/result/v1"
    for key, variable in (("classroom", "CLASSROOM"), ("assignment", "ASSIGNMENT"),
                          ("submission", "SUBMISSION_TAG"), ("commit", "COMMIT_URL"),
                          ("release", "RELEASE_URL"), ("review", "REVIEW_URL")):
        assert result[key] == RUNNER_ENV[variable]
    for key in ("datetime", "graded_at"):
        dt.datetime.strptime(result[key], "%Y-%m-%dT%H:%M:%SZ")  # UTC, ISO 8601
    for key in ("score", "max-score"):
        assert type(result[key]) is int
    tests = result["tests"]
    assert isinstance(tests, list) and tests
    for test in tests:
        assert {"test-name", "passed", "score", "max-score", "message"} <= set(test)
        assert isinstance(test["test-name"], str) and type(test["passed"]) is bool
        assert type(test["score"]) is int and type(test["max-score"]) is int
        assert isinstance(test["message"], str) and test["message"]
    assert result["score"] == sum(t["score"] for t in tests)
    assert result["max-score"] == sum(t["max-score"] for t in tests)


def test_the_folder_holds_a_stdlib_autograder_and_the_grader(autograder):
    assert {p.name for p in autograder.iterdir()} == {"autograder.py", "requirements.txt",
                                                      "leaselab"}
    source = autograder / "leaselab"
    assert (source / "grader" / "instructor" / "classroom50_autograder.py").is_file()
    assert (source / "grader" / "report" / "classroom50.py").is_file()
    assert not (source / "solutions").exists() and not (source / ".github").exists()
    tree = ast.parse((autograder / "autograder.py").read_text(encoding="utf-8"))
    imported = {alias.name.split(".")[0] for node in ast.walk(tree)
                if isinstance(node, ast.Import) for alias in node.names}
    imported |= {node.module.split(".")[0] for node in ast.walk(tree)
                 if isinstance(node, ast.ImportFrom)}
    assert imported <= set(sys.stdlib_module_names)
    requirements = (autograder / "requirements.txt").read_text()
    assert "jinja2" in requirements and "pytest" not in requirements  # grading runs no pytest


def test_a_correct_submission_gets_full_marks(autograder, checkout):
    shutil.copy(ROOT / "solutions" / "queue.py", checkout / "lab" / "queue.py")
    proc = run(autograder, checkout)
    assert proc.returncode == 0, proc.stderr
    result = result_of(checkout)
    assert result["score"] == result["max-score"] == POINTS
    assert [t["check-id"] for t in result["tests"]] == [CHECK]
    assert result["tests"][0]["passed"] is True


def test_the_stubs_score_zero_and_the_checkouts_own_grader_is_never_run(autograder, checkout):
    (checkout / "grader" / "__init__.py").write_text(
        "raise SystemExit('the student checkout grader ran')\n")
    proc = run(autograder, checkout)
    assert proc.returncode == 0, proc.stderr
    result = result_of(checkout)
    assert result["score"] == 0 and result["max-score"] == POINTS
    assert result["tests"][0]["passed"] is False


def test_no_queue_py_scores_zero_with_the_reason(autograder, checkout):
    (checkout / "lab" / "queue.py").unlink()
    (checkout / "result.json").write_text('{"score": 99}')  # an earlier run's
    proc = run(autograder, checkout)
    assert proc.returncode == 0, proc.stderr
    result = result_of(checkout)
    assert result["score"] == 0 and result["max-score"] > 0
    assert all("No queue.py" in t["message"] for t in result["tests"])


def test_datetime_is_the_commits_time_in_utc(autograder, checkout):
    if not shutil.which("git"):
        pytest.skip("needs git")
    git_env = {"GIT_AUTHOR_NAME": "s", "GIT_AUTHOR_EMAIL": "s@example.org",
               "GIT_COMMITTER_NAME": "s", "GIT_COMMITTER_EMAIL": "s@example.org",
               "GIT_COMMITTER_DATE": "2026-06-01T23:32:01+09:00",
               "GIT_AUTHOR_DATE": "2026-06-01T23:32:01+09:00"}
    for cmd in (["init", "-q"], ["add", "-A"], ["commit", "-q", "-m", "submit"]):
        subprocess.run(["git", *cmd], cwd=checkout, env={**os.environ, **git_env}, check=True)
    proc = run(autograder, checkout)
    assert proc.returncode == 0, proc.stderr
    assert result_of(checkout)["datetime"] == "2026-06-01T14:32:01Z"


def test_missing_runner_variables_are_an_infrastructure_error(autograder, checkout):
    proc = run(autograder, checkout, SUBMISSION_TAG="")
    assert proc.returncode != 0
    assert "SUBMISSION_TAG" in proc.stderr
    assert not (checkout / "result.json").exists()


def test_dependencies_that_cannot_be_installed_are_an_infrastructure_error(autograder, checkout,
                                                                            tmp_path):
    broken = Path(shutil.copytree(autograder, tmp_path / "broken", symlinks=True))
    (broken / "requirements.txt").write_text("leaselab-no-such-package-x==0\n")
    proc = run(broken, checkout, PIP_NO_INDEX="1")
    assert proc.returncode != 0
    assert not (checkout / "result.json").exists()


def test_a_non_empty_folder_is_refused_without_force(autograder):
    proc = run_grader("classroom50", str(autograder), "--lang", "en")
    assert proc.returncode == 2 and "--force" in proc.stderr
