"""The class's results as data: one row per submission, the CSV gradebook, and the failure rate
of each check (what the class report charts).

CSV columns: `submission, status, score, max_score`, one column per check id (the points that
submission earned on it; blank when it did not grade), then `message` (why it did not grade, or
a warning: it imports the reference solution) and `seed` (what its checks' worlds were drawn
from: `python -m grader --impl FILE --replay SEED` grades it again exactly so), written with
its digits grouped by underscores (`1_234_567_890_123_456_789`, `seed_cell`): a spreadsheet keeps
it as text, exactly, where it rounds a 19-digit number to 15 digits, and `--replay` reads it as
it is (Python's int() takes the underscores).
A text cell that a spreadsheet would take for a formula starts with `'`.
"""

from __future__ import annotations

import csv
import io
import statistics
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from grader.checkdef import CheckInfo
from grader.report.files import write_atomically
from grader.report.results_json import GRADED
from grader.report.causes import BLOCKING

#: What makes a spreadsheet read a cell as a formula (OWASP, CSV injection).
FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")


@dataclass
class Row:
    submission: str
    status: str
    score: int
    max_score: int
    #: check id -> (points earned, outcome); empty when the submission did not grade
    checks: dict[str, tuple[int, str]] = field(default_factory=dict)
    message: str = ""
    seed: int | None = None
    #: a graded submission none of whose code ran (every check failed for a cause that stops
    #: the code before any rule: a function not implemented yet, a file that does not load, an
    #: import that hangs): its words, one per cause; empty when the code ran
    never_ran: list[str] = field(default_factory=list)

    @property
    def graded(self) -> bool:
        return self.status == GRADED

    @property
    def ran(self) -> bool:
        """Graded, and some of its code ran: what the class's failure rates count."""
        return self.graded and not self.never_ran


def row(submission: str, status: str, results: dict, seed: int | None = None) -> Row:
    """A gradebook row from a results.json-shaped dict (the grader's or a not-graded one);
    `seed`: what the grade's worlds were drawn from (default: what the results say)."""
    checks = {}
    if status == GRADED:
        for test in results.get("tests", []):
            extra = test.get("extra_data") or {}
            checks[extra["check_id"]] = (test["score"], extra.get("outcome", test["status"]))
    message = "" if status == GRADED else results.get("output", "")
    if seed is None:
        seed = (results.get("extra_data") or {}).get("seed")
    return Row(submission, status, results.get("score", 0), results.get("max_score", 0), checks,
               message, seed if isinstance(seed, int) and not isinstance(seed, bool) else None,
               never_ran(checks, results))


def never_ran(checks: dict[str, tuple[int, str]], results: dict) -> list[str]:
    """The causes' sentences when every check failed for a cause that stops the code before
    any rule is reached (grader.report.causes.BLOCKING, as results.json's causes name them);
    empty when some check passed or failed on its own."""
    causes = (results.get("extra_data") or {}).get("causes") or []
    blocking = [c for c in causes if isinstance(c, dict) and c.get("kind") in BLOCKING]
    stopped = {cid for c in blocking for cid in c.get("ids") or []}
    if not checks or any(outcome == "passed" for _, outcome in checks.values()) \
            or not set(checks) <= stopped:
        return []
    return [str(c.get("sentence", "")) for c in blocking]


def columns(rows: list[Row], declared: dict[str, CheckInfo], selected: bool = False) -> list[str]:
    """Check ids in the grader's order, then any a row has that is not declared here.
    `selected` (graded with -k): only the checks some submission was graded on."""
    seen = {cid for r in rows for cid in r.checks}
    ids = [cid for cid in declared if cid in seen or not (selected and seen)]
    for r in rows:
        ids += [cid for cid in r.checks if cid not in ids]
    return ids


def write_csv(path: Path, rows: list[Row], check_ids: list[str]) -> None:
    """Write the gradebook atomically (grader.report.files): never half a gradebook. No text
    cell can become a spreadsheet formula (`inert`)."""
    table = [["submission", "status", "score", "max_score", *check_ids, "message", "seed"]]
    for r in rows:
        earned = [r.checks[cid][0] if cid in r.checks else "" for cid in check_ids]
        table.append([r.submission, r.status, r.score, r.max_score, *earned, r.message,
                      seed_cell(r.seed)])
    write_table(path, table)


def seed_cell(seed: int | None) -> str:
    """The seed as the gradebook writes it: digits grouped by underscores, text to every
    spreadsheet (Excel, Sheets and LibreOffice round a 19-digit number to 15 significant
    digits, and the seed is what replays a grade), which `--replay` takes as it is."""
    return "" if seed is None else f"{seed:_}"


def write_table(path: Path, table: list[list]) -> None:
    """Write `table` as CSV atomically, every text cell `inert`: the gradebook and the LMS
    import files (grader.instructor.lms) alike."""
    f = io.StringIO(newline="")
    csv.writer(f).writerows([inert(cell) for cell in line] for line in table)
    write_atomically(path, f.getvalue(), newline="")


def inert(cell):
    """A text cell a spreadsheet would read as a formula (a submission named
    `=HYPERLINK(...)`) gets a leading `'` (OWASP's CSV injection rule); numbers stay numbers."""
    if isinstance(cell, str) and cell.startswith(FORMULA_STARTS):
        return "'" + cell
    return cell


def same_max_score(rows: list[Row]) -> list[Row]:
    """Rows that did not grade get the max_score the graded ones have (they differ under -k)."""
    graded = [r.max_score for r in rows if r.graded]
    if graded:
        for r in rows:
            if not r.graded:
                r.max_score = max(graded)
    return rows


@dataclass
class CheckStat:
    id: str
    points: int
    failed: int
    graded: int
    outcomes: Counter  # outcome -> count, failures only

    @property
    def rate(self) -> float:
        return self.failed / self.graded if self.graded else 0.0


def check_stats(rows: list[Row], check_ids: list[str],
                declared: dict[str, CheckInfo]) -> list[CheckStat]:
    """Failure rate of every check over the graded rows whose code ran (`Row.ran`: a stub, a
    file that does not load, would count against every check), most failed first (ties: grader
    order). A check a graded row lacks (graded with another check list) is not counted for it."""
    stats = []
    for cid in check_ids:
        seen = [r.checks[cid] for r in rows if r.ran and cid in r.checks]
        failures = Counter(outcome for _, outcome in seen if outcome != "passed")
        points = declared[cid].points if cid in declared else max((p for p, _ in seen), default=0)
        stats.append(CheckStat(cid, points, sum(failures.values()), len(seen), failures))
    order = {cid: i for i, cid in enumerate(check_ids)}
    return sorted(stats, key=lambda s: (-s.rate, order[s.id]))


def summary(rows: list[Row]) -> dict:
    graded = [r for r in rows if r.graded]
    scores = [r.score for r in graded]
    return {
        "submissions": len(rows),
        "graded": len(graded),
        "ran": sum(1 for r in graded if r.ran),
        "never_ran": sum(1 for r in graded if not r.ran),
        "full_marks": sum(1 for r in graded if r.score == r.max_score > 0),
        "mean": round(statistics.fmean(scores), 1) if scores else None,
        "median": statistics.median(scores) if scores else None,
        "max_score": max((r.max_score for r in rows), default=0),
    }
