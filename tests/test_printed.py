"""What the code under grade prints is shown beside the call that printed it (issue 39: print()
in claim appeared nowhere, a claim that printed a lot was reported as an endless loop, and
breakpoint() ended as "claim raised BdbQuit")."""

from __future__ import annotations

import pytest

from conftest import ROOT, by_check, grade
from grader.harness.judge import target_client
from grader.harness import wire

REFERENCE = (ROOT / "solutions" / "queue.py").read_text(encoding="utf-8")
HEAD = ("def claim(conn: sqlite3.Connection, owner: str, now: int, lease_ms: int) -> "
        "Claim | None:\n")


def queue_with(tmp_path, body: str):
    """The reference, with `body` run first in claim, and claim returning None from 1000 ms on
    (so reclaim-at-expiry fails and shows its timeline)."""
    assert HEAD in REFERENCE
    folder = tmp_path / "q"
    folder.mkdir()
    code = REFERENCE.replace(HEAD, HEAD + "".join(f"    {line}\n" for line in body.splitlines())
                             + "    if now >= 1000:\n        return None\n")
    (folder / "queue.py").write_text(code, encoding="utf-8")
    return str(folder / "queue.py")


def test_what_a_call_printed_is_shown_under_it(tmp_path):
    impl = queue_with(tmp_path, 'import sys\nprint(f"claim by {owner} at {now}")\n'
                                'print("\\x1b[31mred\\x1b[0m\\tok", file=sys.stderr)')
    proc, results = grade(impl, tmp_path, "-k", "reclaim-at-expiry")
    output = by_check(results)["reclaim-at-expiry"]["output"]
    for text in (output, proc.stdout):
        assert "printed │ claim by A at 0" in text
        assert "printed │ claim by B at 1000" in text
        assert "│ \\x1b[31mred\\x1b[0m\\tok" in text  # written visibly, never obeyed
        assert "\x1b" not in text


def test_a_call_that_prints_a_lot_is_graded_not_timed_out(tmp_path):
    impl = queue_with(tmp_path, 'for i in range(20_000):\n    print("line", i, "x" * 40)')
    proc, results = grade(impl, tmp_path, "-k", "reclaim-at-expiry")
    check = by_check(results)["reclaim-at-expiry"]
    assert check["extra_data"]["outcome"] == "failed", check["output"]
    assert "more characters not shown" in check["output"]


def test_breakpoint_says_how_to_debug_instead_of_bdbquit(tmp_path):
    impl = queue_with(tmp_path, "breakpoint()")
    proc, results = grade(impl, tmp_path, "-k", "reclaim-at-expiry")
    said = proc.stdout.replace("\n", " ")
    assert "breakpoint() cannot stop here" in said and "BdbQuit" not in said


@pytest.mark.parametrize("value", [["x" * (wire.MAX_PRINTED + 1), 0], ["x", "1"], ["x"], "x",
                                   [["x"], 0]])
def test_a_forged_printed_breaks_the_channel(value):
    with pytest.raises(wire.WireError):
        target_client._printed(value, "claim")
    with pytest.raises(wire.WireError):
        target_client._printed(["x", 0], "sync")  # only a call's reply carries it


def test_the_html_report_shows_what_a_call_printed_too(tmp_path):
    impl = queue_with(tmp_path, 'print(f"claim by {owner} at {now} <b>")')
    html = tmp_path / "report.html"
    grade(impl, tmp_path, "-k", "reclaim-at-expiry", "--html", str(html))
    page = html.read_text(encoding="utf-8")
    assert '<pre class="printed">printed │ claim by B at 1000 &lt;b&gt;</pre>' in page


def test_a_timeout_after_much_printing_says_printing_takes_time(tmp_path):
    """A claim that printed a lot in earlier calls and then did not return: the timeout says
    how much the check's calls had printed before it, not only "an endless loop?"."""
    code = REFERENCE.replace(HEAD, HEAD + "    print('x' * 150_000)\n"
                             "    if now >= 1000:\n        while True:\n            pass\n")
    impl = tmp_path / "queue.py"
    impl.write_text(code, encoding="utf-8")
    proc, results = grade(str(impl), tmp_path, "-k", "reclaim-at-expiry")
    check = by_check(results)["reclaim-at-expiry"]
    assert check["status"] == "failed", check
    assert "had printed 150,001 characters" in check["output"], check["output"]
    assert "printing that much takes time" in proc.stdout


def test_a_timeout_in_the_random_timelines_after_much_printing_says_printing_takes_time(
        tmp_path):
    """The random timelines call the target directly (not through the Lab's calls, whose steps
    carry what was printed before them): a claim that printed a lot and then did not return
    there was still told "an endless loop?" during "the check" (issue 39). Now the step is the
    timeline's, with what the code had printed before it."""
    code = REFERENCE.replace(HEAD, HEAD + "    print('x' * 150_000)\n    _calls.append(1)\n"
                             "    if len(_calls) >= 3:\n        while True:\n            pass\n")
    code = code.replace(HEAD, "_calls = []\n\n\n" + HEAD, 1)
    impl = tmp_path / "queue.py"
    impl.write_text(code, encoding="utf-8")
    # a quarter of the check's timeout: the claim never returns, however long it is given
    proc, results = grade(str(impl), tmp_path, "-k", "random-timelines", "--timeout-scale",
                          "0.25")
    check = by_check(results)["random-timelines"]
    assert check["extra_data"]["outcome"] == "timed_out", check
    assert "during: random timeline" in check["output"], check["output"]
    assert "had printed 300,002 characters" in check["output"], check["output"]
    assert "printing that much takes time" in proc.stdout
