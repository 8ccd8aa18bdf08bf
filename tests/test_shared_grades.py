"""conftest.grade(..., shared=True): a grade the session already made with the same arguments on
the same bytes is not made again (by another test, file or xdist worker), and any difference in
what the grade depends on makes a grade of its own."""

from __future__ import annotations

import os
import subprocess
import sys
import threading

import pytest

import conftest
from conftest import ROOT, grade

ONE_CHECK = ("-k", "finish-at-expiry")


def counting(monkeypatch) -> list[tuple[str, ...]]:
    """The grader starts from now on: their arguments."""
    started: list[tuple[str, ...]] = []
    run = conftest.run_grader

    def counted(*args, **kwargs):
        started.append(args)
        return run(*args, **kwargs)

    monkeypatch.setattr(conftest, "run_grader", counted)
    return started


def target(tmp_path, name: str = "queue.py", tail: str = "") -> str:
    path = tmp_path / "sub" / name
    path.parent.mkdir(exist_ok=True)
    path.write_text((ROOT / "solutions" / "queue.py").read_text(encoding="utf-8") + tail,
                    encoding="utf-8")
    return str(path)


def test_the_same_grade_is_made_once_and_given_to_each_asker(tmp_path, monkeypatch):
    started = counting(monkeypatch)
    impl = target(tmp_path)
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    proc_a, results_a = grade(impl, tmp_path / "a", *ONE_CHECK, shared=True)
    proc_b, results_b = grade(impl, tmp_path / "b", *ONE_CHECK, shared=True)
    assert len(started) == 1
    assert results_a == results_b and results_a["score"] == results_a["max_score"] > 0
    assert proc_a.returncode == proc_b.returncode == 0
    assert proc_a.stdout == proc_b.stdout and "finish-at-expiry" in proc_a.stdout
    assert list((tmp_path / "b").glob("results-*.json"))  # the asker's own results.json


def test_two_askers_at_once_wait_for_one_grade(tmp_path, monkeypatch):
    started = counting(monkeypatch)
    impl = target(tmp_path)
    got = {}

    def ask(name):
        (tmp_path / name).mkdir()
        got[name] = grade(impl, tmp_path / name, *ONE_CHECK, shared=True)[1]

    threads = [threading.Thread(target=ask, args=(name,)) for name in ("a", "b")]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(started) == 1 and got["a"] == got["b"]


def test_other_bytes_arguments_or_environment_make_their_own_grade(tmp_path, monkeypatch):
    started = counting(monkeypatch)
    impl = target(tmp_path)
    grade(impl, tmp_path, *ONE_CHECK, shared=True)
    grade(impl, tmp_path, "-k", "finish-before-expiry", shared=True)  # other arguments
    target(tmp_path, tail="\n# another byte\n")
    grade(impl, tmp_path, *ONE_CHECK, shared=True)  # the target's bytes changed
    target(tmp_path, "helper.py")
    grade(impl, tmp_path, *ONE_CHECK, shared=True)  # a file beside it changed (a helper)
    monkeypatch.setenv("LEASELAB_NO_HISTORY", "")
    grade(impl, tmp_path, *ONE_CHECK, shared=True)  # the environment changed
    assert len(started) == 5


def test_a_grade_not_asked_to_share_is_made_every_time(tmp_path, monkeypatch):
    started = counting(monkeypatch)
    impl = target(tmp_path)
    grade(impl, tmp_path, *ONE_CHECK, shared=True)
    grade(impl, tmp_path, *ONE_CHECK)
    grade(impl, tmp_path, *ONE_CHECK)
    assert len(started) == 3


def test_the_longest_files_run_first_in_their_order(request):
    """conftest.LONGEST_FILES names test files, and the session runs them before the others,
    in that order, each file's tests together (what pytest-xdist hands out in turn)."""
    assert all((ROOT / "tests" / name).is_file() for name in conftest.LONGEST_FILES)
    files = []
    for item in request.session.items:
        file = item.nodeid.split("::", 1)[0].rsplit("/", 1)[-1]
        if not files or files[-1] != file:
            files.append(file)
    assert len(files) == len(set(files)), "a file's tests together"
    longest = [name for name in conftest.LONGEST_FILES if name in files]
    assert files[:len(longest)] == longest


def test_a_module_fixture_grades_only_the_values_the_selected_tests_use():
    """conftest.selected: `pytest tests/test_mutants.py -k NAME` grades that mutant alone; a
    selected test that reads every value (no such parameter) gets them all."""
    from types import SimpleNamespace as Thing

    module, other = object(), object()

    def item(params=None, fixture="graded", where=module):
        return Thing(module=where, fixturenames=[fixture],
                     callspec=None if params is None else Thing(params=params))

    def request(*items):
        return Thing(module=module, fixturename="graded", session=Thing(items=list(items)))

    values = ["a", "b", "c"]
    assert conftest.selected(request(item({"path": "c"}), item({"path": "a"})), "path",
                             values) == ["a", "c"]
    assert conftest.selected(request(item({"path": "b"}, where=other)), "path", values) == []
    assert conftest.selected(request(item({"path": "b"}), item({"x": 1}, fixture="other")),
                             "path", values) == ["b"]
    assert conftest.selected(request(item({"path": "b"}), item()), "path", values) == values
    pairs = [("a", 1), ("a", 2), ("b", 1)]
    assert conftest.selected(request(item({"path": "a", "seed": 2})), ("path", "seed"),
                             pairs) == [("a", 2)]


# -- the lock, where there is no fcntl (Windows: issue 42) --------------------------------------
#: One holder of conftest.held's lock at a time, from several processes: each writes "in PID"
#: and "out PID" to the log while it holds the lock, with a pause between.
HOLDERS = """
import os, sys, time
sys.path.insert(0, sys.argv[1])
from pathlib import Path
import conftest
for _ in range(5):
    with conftest.held(Path(sys.argv[2])):
        with open(sys.argv[3], "a") as log:
            log.write(f"in {os.getpid()}\\n")
        time.sleep(0.02)
        with open(sys.argv[3], "a") as log:
            log.write(f"out {os.getpid()}\\n")
print("fcntl" in sys.modules, "msvcrt" in sys.modules)
"""


def windowsish() -> dict[str, str]:
    """This environment (pytest's own variables aside: an inner session is one of its own),
    the simulated Windows on top."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST_")}
    return {**env, **conftest.windowsish_env()}


@pytest.mark.parametrize("simulated", [False, True], ids=["fcntl", "no-fcntl"])
def test_the_lock_lets_one_holder_in_at_a_time(tmp_path, simulated):
    """With fcntl, and without (the simulated Windows: a lock file created with O_EXCL)."""
    log = tmp_path / "log"
    env = windowsish() if simulated else None
    holders = [subprocess.Popen([sys.executable, "-c", HOLDERS, str(ROOT / "tests"),
                                 str(tmp_path / "k.lock"), str(log)], env=env, cwd=ROOT,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
               for _ in range(3)]
    outs = [h.communicate(timeout=120) for h in holders]
    assert all(h.returncode == 0 for h in holders), [err for _, err in outs]
    assert {out.split()[0] for out, _ in outs} == {"False" if simulated else "True"}
    lines = log.read_text().splitlines()
    assert len(lines) == 3 * 5 * 2
    for enter, leave in zip(lines[::2], lines[1::2]):  # never two inside at once
        assert enter.split()[0] == "in" and leave == "out " + enter.split()[1]
    assert not list(tmp_path.glob("k.lock.*"))  # the lock files are gone with their holders


def test_a_lock_file_whose_holder_ended_is_taken_over(tmp_path):
    """Without fcntl: a worker killed while it held the lock leaves its file; the next asker
    takes the next generation, and a later one waits for that holder as for any other."""
    ended = subprocess.Popen([sys.executable, "-c", "pass"])
    ended.wait()
    (tmp_path / "k.lock.0").write_text(str(ended.pid), encoding="ascii")
    order = []

    def later():
        with conftest._created(tmp_path / "k.lock"):
            order.append("later")

    with conftest._created(tmp_path / "k.lock"):
        assert (tmp_path / "k.lock.1").read_text(encoding="ascii") == str(os.getpid())
        thread = threading.Thread(target=later)
        thread.start()
        thread.join(timeout=0.5)  # it waits, however long this is
        order.append("first")
    thread.join(timeout=60)
    assert order == ["first", "later"]
    assert sorted(p.name for p in tmp_path.glob("k.lock.*")) == ["k.lock.0"]


def test_the_suite_is_collected_and_shares_grades_without_fcntl(tmp_path):
    """tests/conftest.py on the simulated Windows: the suite is collected, and two askers of
    one grade at once get it from one grade (the O_EXCL lock)."""
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:xdist",
         "--basetemp", str(tmp_path / "inner"), "tests/test_shared_grades.py",
         "-k", "two_askers_at_once"],
        cwd=ROOT, env=windowsish(), capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    assert "1 passed" in proc.stdout
