"""`python -m grader.instructor.classroom50_autograder --checkout DIR`: the Classroom 50 grading
step, called by the autograder.py that `python -m grader classroom50` writes.

Grades the queue.py of the student's checkout DIR (grader.instructor.submission's rule: there,
lab/queue.py) in isolation, like one row of `batch`, with this copy of the grader (never the
checkout's own grader/, which the student could have edited), and writes DIR/result.json in
Classroom 50's shape (grader.report.classroom50). A submission that cannot be graded (no
queue.py, a timeout, the grader failing on it) still gets a result.json, with score 0 and the
reason: exit 0, it ran. Exit 2 without a result.json when the runner's variables are missing
(the result could not be attributed); any other failure here also exits non-zero, which
Classroom 50 reports as an infrastructure error.
"""

from __future__ import annotations

import argparse
import datetime as dt
import os
import subprocess
import sys
from pathlib import Path

from grader import arguments
from . import autograder, isolated
from grader.arguments import positive_number
from grader.report import classroom50
from grader.report.files import remove_stale
from grader.report.messages import text


def parser() -> argparse.ArgumentParser:
    p = arguments.Parser(prog="python -m grader.instructor.classroom50_autograder",
                         description="Grade a student's checkout for Classroom 50.")
    p.add_argument("--checkout", default=".", metavar="DIR",
                   help="the student's checkout (default: the current folder)")
    p.add_argument("--timeout", type=positive_number, default=isolated.DEFAULT_LIMIT)
    p.add_argument("--lang", choices=("en", "ja"), default="en")
    p.add_argument("-k", dest="select", metavar="EXPR")
    p.add_argument("--config", metavar="PATH", help="the instructor's config file")
    return p


def main(argv: list[str] | None = None) -> int:
    args = parser().parse_args(argv)
    checkout = Path(args.checkout).resolve()
    result_path = checkout / classroom50.RESULT_NAME
    remove_stale(result_path)  # stopped from here on: no result.json, not an earlier one
    missing = classroom50.missing_context(os.environ)
    if missing:
        print(text("instructor.classroom50-no-context", args.lang, names=", ".join(missing)),
              file=sys.stderr)
        return 2
    graded_at = dt.datetime.now(dt.timezone.utc)
    results = autograder.grade(checkout, args.timeout, args.lang, select=args.select,
                               config=args.config)
    payload = classroom50.from_results(results, os.environ,
                                       submitted=commit_time(checkout) or graded_at,
                                       graded=graded_at)
    classroom50.write(result_path, payload)
    print(text("instructor.classroom50-graded", args.lang, score=payload["score"],
               max_score=payload["max-score"], path=result_path))
    return 0


def commit_time(checkout: Path) -> dt.datetime | None:
    """The committer date of the checkout's HEAD (the submission instant Classroom 50 wants in
    `datetime`, the same on every regrade); None when git cannot tell (not a repository, no git,
    a repository git refuses to read)."""
    try:
        proc = subprocess.run(["git", "-C", str(checkout), "log", "-1", "--format=%cI"],
                              capture_output=True, text=True, timeout=30)
        return dt.datetime.fromisoformat(proc.stdout.strip()) if proc.returncode == 0 else None
    except (OSError, ValueError, subprocess.SubprocessError):
        return None


if __name__ == "__main__":
    sys.exit(main())
