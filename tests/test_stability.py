"""Same code, same verdict: `--repeat 20` finds no unstable check on the reference solution, nor
on the mutants of the checks that run several processes (the only ones where timing could leak
in). `python -m bench.stability --repeat 20` does the same for every mutant and every check
(figures in the closing notes; too slow for every CI run)."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import pytest

from conftest import MUTANTS, grade

MULTI_PROCESS = ("test_two_processes_claim_at_once or test_crash_mid_claim"
                 " or test_lock_free_during_send or test_integration_run")
CONCURRENCY_MUTANTS = sorted(p for p in MUTANTS.glob("*.py")
                             if p.name.startswith(("race_", "crash_", "lock_", "integration_")))


def test_solution_is_stable_over_20_runs(tmp_path):
    proc, results = grade("solutions.queue", tmp_path, "--repeat", "20", forked=True)
    assert results["extra_data"]["unstable"] == []
    assert all(t["extra_data"]["passed_runs"] == 20 for t in results["tests"])
    assert proc.returncode == 0 and results["score"] == 100


#: The lock mutants' runs mostly wait: each of their integration runs waits out a worker's busy
#: timeout (5 s, so about 100 s for 20 runs) on a lock another worker holds, using little CPU.
#: They are graded first and side by side, the others beside them: the fixture takes about the
#: longest of them instead of the sum of pairs (240 s on the loaded 2-core CI machine). Nor do
#: they take one of the session's grade slots (`waits`: conftest.cpu_slot), which would make
#: them wait for each other and every other grade of the session wait for them.
SLEEPERS_FIRST = sorted(CONCURRENCY_MUTANTS, key=lambda p: not p.name.startswith("lock_"))
AT_ONCE = 6


@pytest.fixture(scope="module")
def repeated_mutants(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("stability")
    with ThreadPoolExecutor(max_workers=AT_ONCE) as pool:
        return dict(pool.map(lambda p: (p.stem, grade(str(p), tmp, "--repeat", "20",
                                                      "-k", MULTI_PROCESS, forked=True,
                                                      waits=p.name.startswith("lock_"))),
                             SLEEPERS_FIRST))


@pytest.mark.parametrize("path", CONCURRENCY_MUTANTS, ids=[p.stem for p in CONCURRENCY_MUTANTS])
def test_concurrency_mutant_is_stable_over_20_runs(path, repeated_mutants):
    proc, results = repeated_mutants[path.stem]
    assert results["extra_data"]["unstable"] == []
    failed = [t for t in results["tests"] if t["status"] == "failed"]
    assert failed, "the mutant is caught by at least one multi-process check"
    assert all(t["extra_data"]["passed_runs"] == 0 for t in failed)
