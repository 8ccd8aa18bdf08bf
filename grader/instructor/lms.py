"""A batch's grades in the forms an LMS imports, from a roster: `batch DIR --roster CSV`.

The roster maps a submission (the gradebook's row name) to the student's identity in the LMS:
a CSV file, UTF-8 with or without a BOM, whose first row is the header. Columns (in any order;
only `submission` is required; names are matched without case or surrounding spaces):
`submission, name, id, sis_user_id, sis_login_id, section, username, email`. A roster that cannot
be read, has no header (no `submission` column), has a column not in this list or twice, a row
longer than the header, a row without a submission or the same submission twice is refused
(RosterError) before anything is graded.

Written beside gradebook.csv, every text cell made inert as there (gradebook.write_table):
- `canvas.csv`, Canvas's gradebook import: `Student, ID, SIS User ID, SIS Login ID, Section`
  (from name, id, sis_user_id, sis_login_id, section), then one assignment column, named
  `NAME (ID)` to update an existing assignment or `NAME` to have Canvas create it; the second
  row is `Points Possible` with the maximum score (Canvas's importer reads that row and uses it
  for an assignment it creates).
- `moodle.csv`, for Moodle's "Import grades from CSV": `Username, Email address, ID number`
  (from username, email, sis_user_id: map whichever the course uses to identify users), then
  the assignment column (mapped to the grade item on import).
- `feedback/<submission>.txt`: the grade and each check's outcome and failure text, as the
  terminal report gives them (no colours), or the reason the submission was not graded.
Submissions missing from the roster are graded and in the gradebook but in neither LMS file;
roster entries without a submission are in neither either (no grade is better than a made-up
0). Both are returned (`Mismatch`), printed by `batch` and listed one name a line in
`not-in-roster.txt` and `no-submission.txt`.
"""

from __future__ import annotations

import argparse
import csv
import io
from dataclasses import dataclass
from pathlib import Path

from grader.report.files import write_atomically
from grader.report.messages import OUTCOME, text
from grader.report.results_json import read

from . import gradebook

ROSTER_COLUMNS = ("submission", "name", "id", "sis_user_id", "sis_login_id", "section",
                  "username", "email")
#: Why a roster is refused (RosterError.kind): grader.report.messages.ROSTER_PROBLEM.
ROSTER_PROBLEMS = ("unreadable", "no-header", "unknown-column", "repeated-column", "long-row",
                   "no-submission", "duplicate")
CANVAS_NAME, MOODLE_NAME, FEEDBACK_DIR = "canvas.csv", "moodle.csv", "feedback"
NOT_IN_ROSTER, NO_SUBMISSION = "not-in-roster.txt", "no-submission.txt"
OUTPUT_FILES = (CANVAS_NAME, MOODLE_NAME, NOT_IN_ROSTER, NO_SUBMISSION)
CANVAS_COLUMNS = (("Student", "name"), ("ID", "id"), ("SIS User ID", "sis_user_id"),
                  ("SIS Login ID", "sis_login_id"), ("Section", "section"))
MOODLE_COLUMNS = (("Username", "username"), ("Email address", "email"),
                  ("ID number", "sis_user_id"))

Roster = dict[str, dict[str, str]]  # submission -> column -> value ("" when not given)


class RosterError(Exception):
    """A roster that cannot be used: `kind` (one of ROSTER_PROBLEMS) and the message's params."""

    def __init__(self, kind: str, **params):
        super().__init__(kind, params)
        self.kind = kind
        self.params = params


@dataclass(frozen=True)
class Assignment:
    name: str
    canvas_id: str | None = None

    @property
    def canvas_column(self) -> str:
        return f"{self.name} ({self.canvas_id})" if self.canvas_id else self.name


@dataclass(frozen=True)
class Mismatch:
    not_in_roster: list[str]  # graded submissions the roster does not name
    no_submission: list[str]  # roster entries without a submission


def canvas_id(value: str) -> str:
    """argparse type: a Canvas assignment id (digits, as in its URL .../assignments/ID)."""
    if not value.isdigit():
        raise argparse.ArgumentTypeError(f"must be digits (the id in the assignment's URL), "
                                         f"not {value!r}")
    return value


def read_roster(path: str | Path) -> Roster:
    """The roster at `path`, in file order; RosterError when it cannot be used."""
    try:
        raw = Path(path).read_text(encoding="utf-8-sig")
    except (OSError, UnicodeDecodeError) as exc:
        raise RosterError("unreadable", path=path, error=f"{type(exc).__name__}: {exc}")
    reader = csv.reader(io.StringIO(raw, newline=""))
    rows = [(reader.line_num, row) for row in reader if any(cell.strip() for cell in row)]
    header = [cell.strip().lower() for cell in rows[0][1]] if rows else []
    if "submission" not in header:
        raise RosterError("no-header", path=path, columns=", ".join(ROSTER_COLUMNS))
    for column in header:
        if column not in ROSTER_COLUMNS:
            raise RosterError("unknown-column", path=path, column=column,
                              columns=", ".join(ROSTER_COLUMNS))
        if header.count(column) > 1:
            raise RosterError("repeated-column", path=path, column=column)
    return _entries(rows, header, path)


def _entries(rows: list[tuple[int, list[str]]], header: list[str], path) -> Roster:
    """The entries of the rows after the header (each with its line number in the file)."""
    roster: Roster = {}
    for line, row in rows[1:]:
        if len(row) > len(header):
            raise RosterError("long-row", path=path, line=line)
        entry = {column: "" for column in ROSTER_COLUMNS}
        entry.update((column, cell.strip()) for column, cell in zip(header, row))
        name = entry["submission"]
        if not name:
            raise RosterError("no-submission", path=path, line=line)
        if name in roster:
            raise RosterError("duplicate", path=path, line=line, submission=name)
        roster[name] = entry
    return roster


def write_all(out: Path, rows: list[gradebook.Row], roster: Roster, assignment: Assignment,
              lang: str) -> Mismatch:
    """canvas.csv, moodle.csv, feedback/ and the two mismatch lists, in `out`."""
    graded = {r.submission for r in rows}
    mismatch = Mismatch([r.submission for r in rows if r.submission not in roster],
                        [name for name in roster if name not in graded])
    matched = [r for r in rows if r.submission in roster]
    write_canvas(out / CANVAS_NAME, matched, roster, assignment)
    write_moodle(out / MOODLE_NAME, matched, roster, assignment)
    for path, names in ((NOT_IN_ROSTER, mismatch.not_in_roster),
                        (NO_SUBMISSION, mismatch.no_submission)):
        write_atomically(out / path, "".join(f"{name}\n" for name in names))
    write_feedback(out, rows, lang)
    return mismatch


def write_canvas(path: Path, rows: list[gradebook.Row], roster: Roster,
                 assignment: Assignment) -> None:
    blanks = [""] * (len(CANVAS_COLUMNS) - 1)
    table = [[title for title, _ in CANVAS_COLUMNS] + [assignment.canvas_column],
             ["Points Possible", *blanks, max((r.max_score for r in rows), default=0)]]
    table += [[roster[r.submission][key] for _, key in CANVAS_COLUMNS] + [r.score] for r in rows]
    gradebook.write_table(path, table)


def write_moodle(path: Path, rows: list[gradebook.Row], roster: Roster,
                 assignment: Assignment) -> None:
    table = [[title for title, _ in MOODLE_COLUMNS] + [assignment.name]]
    table += [[roster[r.submission][key] for _, key in MOODLE_COLUMNS] + [r.score] for r in rows]
    gradebook.write_table(path, table)


def write_feedback(out: Path, rows: list[gradebook.Row], lang: str) -> None:
    """feedback/<submission>.txt for every row, from its results/<submission>.json."""
    (out / FEEDBACK_DIR).mkdir(parents=True, exist_ok=True)
    for r in rows:
        results = read(out / "results" / f"{r.submission}.json") or {}
        write_atomically(out / FEEDBACK_DIR / f"{r.submission}.txt", feedback(r, results, lang))


def feedback(row: gradebook.Row, results: dict, lang: str) -> str:
    """The text returned to a student: score, summary (which leads with the shared causes, each
    told once), then each check (graded rows) or the reason there is no verdict. A check the
    instructor's config hides (`extra_data.show`, grader.config) is left out (the summary says
    how many checks are hidden; the score is the recorded grade, as in the LMS files), one shown
    as a verdict has only its one-line message (results.json holds no more of it). A check a
    shared cause explains is one line pointing to it (its cause was told once above, not again
    under each of the checks it makes fail)."""
    lines = [text("instructor.feedback.score", lang, submission=row.submission,
                  score=row.score, max_score=row.max_score), results.get("output", "")]
    caused = False
    for test in results.get("tests", []) if row.graded else []:
        extra = test.get("extra_data") or {}
        if extra.get("show") == "hidden":  # the top-level output says how many, never which
            continue
        line = text("instructor.feedback.check", lang, name=test["name"],
                    outcome=text(OUTCOME(extra.get("outcome", test["status"])), lang),
                    score=test["score"], max_score=test["max_score"])
        if isinstance(extra.get("cause"), int):
            lines += ([] if caused else [""]) + [
                f"{line}  → {text('ui.see-above', lang, number=extra['cause'])}"]
            caused = True
            continue
        caused = False
        lines += ["", line] + [f"    {part}" for part in (test.get("output") or "").splitlines()]
    return "\n".join(lines).rstrip("\n") + "\n"
