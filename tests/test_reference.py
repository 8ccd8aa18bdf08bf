"""The reference solution scores full marks; the stubs score zero, each saying 'not implemented'."""

from conftest import by_check


def test_solution_scores_full_marks(solution_results):
    proc, results = solution_results
    failed = {cid: t["output"] for cid, t in by_check(results).items() if t["status"] != "passed"}
    assert failed == {}
    assert results["score"] == results["max_score"] > 0
    assert proc.returncode == 0


def test_stubs_score_zero_with_not_implemented(stub_results):
    proc, results = stub_results
    assert proc.returncode == 1
    assert results["score"] == 0
    for check_id, test in by_check(results).items():
        assert test["status"] == "failed", check_id
        assert test["extra_data"]["outcome"] == "not_implemented", check_id
        assert "not implemented" in test["output"], check_id
    assert "Traceback" not in proc.stdout + proc.stderr
