"""`python -m grader gradescope-bundle OUT.zip`: the zip builds, holds no solutions or mutants,
and its run_autograder, run in a simulated /autograder (AUTOGRADER_ROOT), always leaves a
results.json: full marks for the reference, the right failed check for a mutant, score 0 with a
message when there is no queue.py or the grader cannot even start.

setup.sh is only syntax-checked here (it pip-installs into a venv, as the export test does);
run_autograder falls back to the python3 on PATH with the grader from source/.
"""

from __future__ import annotations

import json
import os
import shutil
import stat
import subprocess
import sys
import time
import zipfile
from pathlib import Path

import pytest

from conftest import ROOT, by_check, run_grader
from learning import KEYS, honest_second_claimer, learn, learned_submission, trick_off
from test_attacks import NEVER_SHOWN, forged_score_lines

SOLUTION = (ROOT / "solutions" / "queue.py").read_text(encoding="utf-8")


def a_student_mutant() -> str:
    """The reference with one bug (finish accepts now == lease_until), as a student writes it."""
    mutant = SOLUTION.replace(":now < lease_until", ":now <= lease_until")
    assert mutant.count(":now <= lease_until") == 1
    return mutant


@pytest.fixture(scope="module")
def bundle(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("bundle") / "autograder.zip"
    proc = run_grader("gradescope-bundle", str(out), "--lang", "en")
    assert proc.returncode == 0, proc.stderr
    return out


@pytest.fixture(scope="module")
def autograder(bundle, tmp_path_factory):
    """An /autograder layout with the bundle unzipped into source/; run(files) grades them."""
    return unpacked(bundle, tmp_path_factory.mktemp("autograder"))


def unpacked(bundle: Path, root: Path):
    """The bundle unzipped into root/source as on Gradescope; run(files) grades them."""
    with zipfile.ZipFile(bundle) as zf:
        zf.extractall(root / "source")
    bin_dir = root / "bin"
    bin_dir.mkdir()
    # A wrapper, not a symlink: a symlinked venv python outside the venv loses the venv's
    # site-packages (pyvenv.cfg is looked up beside the link), and would grade only where the
    # machine's own python3 happens to have the dependencies.
    wrapper = bin_dir / "python3"
    wrapper.write_text(f'#!/bin/sh\nexec "{sys.executable}" "$@"\n', encoding="utf-8")
    wrapper.chmod(0o755)
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    env.update(AUTOGRADER_ROOT=str(root), PATH=f"{bin_dir}{os.pathsep}{env['PATH']}",
               LANG="C.UTF-8")

    def run(files: dict[str, str], path_first: Path | None = None):
        shutil.rmtree(root / "submission", ignore_errors=True)
        for name, source in files.items():
            (root / "submission" / name).parent.mkdir(parents=True, exist_ok=True)
            (root / "submission" / name).write_text(source, encoding="utf-8")
        (root / "submission").mkdir(exist_ok=True)
        run_env = dict(env)
        if path_first:
            run_env["PATH"] = f"{path_first}{os.pathsep}{env['PATH']}"
        proc = subprocess.run(["bash", str(root / "source" / "run_autograder")], env=run_env,
                              cwd=root, capture_output=True, text=True, timeout=300)
        results = json.loads((root / "results" / "results.json").read_text(encoding="utf-8"))
        return proc, results

    return run


def test_bundle_holds_the_scripts_and_the_source_without_solutions(bundle):
    with zipfile.ZipFile(bundle) as zf:
        names = zf.namelist()
        modes = {i.filename: i.external_attr >> 16 for i in zf.infolist()}
        pyproject = zf.read("pyproject.toml").decode()
    assert {"setup.sh", "run_autograder", "pyproject.toml", "README.md", "lab/store.py",
            "lab/queue.py", "grader/cli.py", "grader/instructor/autograder.py"} <= set(names)
    assert all(modes[n] & stat.S_IXUSR for n in ("setup.sh", "run_autograder"))
    assert not any(n.startswith(("solutions/", "tests/", ".github/")) for n in names)
    assert "solutions" not in pyproject


def test_scripts_are_valid_bash(bundle, tmp_path):
    with zipfile.ZipFile(bundle) as zf:
        zf.extractall(tmp_path)
    for name in ("setup.sh", "run_autograder"):
        proc = subprocess.run(["bash", "-n", str(tmp_path / name)], capture_output=True,
                              text=True)
        assert proc.returncode == 0, proc.stderr
    setup = (tmp_path / "setup.sh").read_text()
    assert 'pip install "$ROOT/source"' in setup and "apt-get install" in setup
    assert '"$ROOT/venv/bin/python"' in (tmp_path / "run_autograder").read_text()


def test_reference_gets_full_marks(autograder):
    proc, results = autograder({"queue.py": SOLUTION})
    assert proc.returncode == 0, proc.stderr
    assert results["score"] == results["max_score"] > 0, results["output"]


def test_mutant_in_a_repository_upload_fails_the_right_check(autograder):
    proc, results = autograder({"lab/queue.py": a_student_mutant(),
                                "README.md": "my repository\n"})
    assert proc.returncode == 0
    failed = {cid for cid, t in by_check(results).items() if t["status"] == "failed"}
    assert failed == {"finish-at-expiry", "random-timelines"}  # the same bug, met again
    assert 0 < results["score"] < results["max_score"]


def test_a_claim_that_never_returns_is_graded_at_once(autograder):
    # The probe before the checks sees claim hang once; no check waits for it again (issue 29
    # item 2: each check waited its own timeout, over two minutes for a whole grade).
    hanging = SOLUTION.replace('    conn.execute("BEGIN IMMEDIATE")\n    try:',
                               '    while True:\n        pass\n    conn.execute("BEGIN IMMEDIATE")'
                               '\n    try:', 1)
    assert hanging != SOLUTION
    start = time.monotonic()
    proc, results = autograder({"queue.py": hanging})
    assert time.monotonic() - start < 30
    assert proc.returncode == 0 and results["score"] == 0
    tests = by_check(results)
    assert {t["extra_data"]["outcome"] for t in tests.values()} == {"timed_out"}
    assert "claim does not return" in tests["finish-before-expiry"]["output"]
    assert "The grader itself failed" not in json.dumps(results)


def test_no_queue_py_scores_zero_with_a_message(autograder):
    proc, results = autograder({"answer.txt": "I did it on paper\n"})
    assert proc.returncode == 0
    assert results["score"] == 0 and "No queue.py" in results["output"]


def test_results_json_even_when_python_cannot_start(autograder, tmp_path):
    broken = tmp_path / "broken-bin"
    broken.mkdir()
    (broken / "python3").write_text("#!/bin/sh\nexit 127\n")
    (broken / "python3").chmod(0o755)
    proc, results = autograder({"queue.py": SOLUTION}, path_first=broken)
    assert proc.returncode == 0
    assert results["score"] == 0 and "autograder itself failed" in results["output"]


def test_no_attack_scores_more_than_doing_nothing(autograder):
    """The attack catalogue's forgeries and the borrowed reference, uploaded to Gradescope:
    none scores more than a queue that does nothing, check by check."""
    attacks = ROOT / "tests" / "attacks"

    def graded(name: str) -> dict:
        proc, results = autograder({"queue.py": (attacks / f"{name}.py").read_text()})
        assert proc.returncode == 0, proc.stderr
        return {cid: t["score"] for cid, t in by_check(results).items()}

    baseline = graded("do_nothing")
    assert sum(baseline.values()) == 0  # no check passes code with no queue logic
    for name in ("forge_verdicts", "forge_replies", "borrow_reference", "tamper_with_the_grader"):
        scores = graded(name)
        assert set(scores) == set(baseline), name
        assert all(scores[cid] <= baseline[cid] for cid in scores), (name, scores)


def test_text_from_the_code_under_grade_reaches_results_json_on_one_line(autograder):
    """hostile_text.py uploaded to Gradescope: no text of results.json holds one of its control
    characters or a forged score line, and it scores no more than its honest counterpart."""
    attacks = ROOT / "tests" / "attacks"
    proc, results = autograder({"queue.py": (attacks / "hostile_text.py").read_text("utf-8")})
    assert proc.returncode == 0, proc.stderr
    texts = []

    def walk(data):
        if isinstance(data, str):
            texts.append(data)
        elif isinstance(data, dict):
            for k, v in data.items():
                walk(k)
                walk(v)
        elif isinstance(data, list):
            for v in data:
                walk(v)
    walk(results)
    assert any("Score: 100/100" in t for t in texts)  # shown ...
    for t in texts:  # ... on its line, escaped
        assert not NEVER_SHOWN.findall(t) and forged_score_lines(t) == [], t[:300]
    _, honest = autograder({"queue.py": trick_off("hostile_text", "HOSTILE_TEXT")})
    attack, honest = by_check(results), by_check(honest)
    for cid, test in attack.items():
        assert test["score"] <= honest[cid]["score"], cid


def test_a_claim_on_its_own_connection_scores_no_more_than_on_the_given_one(autograder):
    """The attack catalogue's own_connection, uploaded: check by check no more than its honest
    counterpart (the same queue on the connection it is given), each failure naming the cause."""
    source = (ROOT / "tests" / "attacks" / "own_connection.py").read_text()
    honest = trick_off("own_connection", "OWN_CONNECTION")
    graded = {}
    for name, text in (("attack", source), ("honest", honest)):
        proc, results = autograder({"queue.py": text})
        assert proc.returncode == 0, proc.stderr
        graded[name] = by_check(results)
    assert set(graded["attack"]) == set(graded["honest"])
    assert sum(t["score"] for t in graded["honest"].values()) > 0
    for cid, test in graded["attack"].items():
        assert test["score"] <= graded["honest"][cid]["score"], cid
        assert "opened a connection of its own" in test["output"], (cid, test["output"])


def test_no_learned_table_or_role_trick_scores_more_than_its_honest_counterpart(
        autograder, tmp_path):
    """Uploaded to Gradescope (each grade a fresh seed): a table of answers learned from the
    grader's reports, keyed on the calls or on what could name the check, scores no more than a
    naive honest queue; a claim that plays dead as the second claimer no more than the same
    claim without the trick, check by check."""
    calls = learn(tmp_path / "learning")

    def graded(files: dict[str, str]) -> dict[str, int]:
        proc, results = autograder(files)
        assert proc.returncode == 0, proc.stderr
        assert results["extra_data"]["seed"] != 1  # a world of its own
        return {cid: t["score"] for cid, t in by_check(results).items()}

    attacks = ROOT / "tests" / "attacks"
    naive = graded({"queue.py": (attacks / "naive_queue.py").read_text()})
    assert sum(naive.values()) > 0
    for key in KEYS:
        learned = graded(learned_submission(calls, key))
        assert sum(learned.values()) <= sum(naive.values()), (key, learned)
    trick = graded({"queue.py": (attacks / "second_claimer.py").read_text()})
    fair = graded({"queue.py": honest_second_claimer()})
    assert set(trick) == set(fair)
    assert all(trick[cid] <= fair[cid] for cid in trick), (trick, fair)


def test_the_bundle_grades_with_the_instructors_config(tmp_path):
    """gradescope-bundle --config: the bundle carries the config file and grades with it
    (detail level, visibilities), as python -m grader --config does; a bad one is refused
    when the bundle is made (exit 2, one line)."""
    config = tmp_path / "grader.toml"
    config.write_text('detail = "none"\n[checks.finish-at-expiry]\nvisibility = "hidden"\n')
    out = tmp_path / "autograder.zip"
    proc = run_grader("gradescope-bundle", str(out), "--lang", "en", "--config", str(config))
    assert proc.returncode == 0, proc.stderr
    with zipfile.ZipFile(out) as zf:
        assert zf.read("grader.toml").decode() == config.read_text()
    run = unpacked(out, tmp_path / "root")
    proc, results = run({"queue.py": a_student_mutant()})
    assert proc.returncode == 0, proc.stderr
    failed = by_check(results)["finish-at-expiry"]
    assert failed["visibility"] == "hidden" and failed["status"] == "failed"
    assert failed["output"].startswith("Why it matters:") and "Came back" not in failed["output"]
    config.write_text('detail = "everything"\n')
    proc = run_grader("gradescope-bundle", str(tmp_path / "bad.zip"), "--config", str(config))
    assert proc.returncode == 2 and len(proc.stderr.strip().splitlines()) == 1, proc.stderr
