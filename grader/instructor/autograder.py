"""`python -m grader.instructor.autograder`: the Gradescope run step (called by the bundle's run_autograder).

Finds the student's queue.py under ROOT/submission (grader.instructor.submission's rule), grades it in
isolation like one row of `batch`, and writes ROOT/results/results.json: the grader's results,
or score 0 with the reason (no queue.py, several, timed out, grader failed). ROOT is --root, else
$AUTOGRADER_ROOT, else /autograder. Always exits 0 once results.json is written: Gradescope shows
the results, not an exit status.
"""

from __future__ import annotations

import os
import sys
import tempfile
import traceback
from pathlib import Path

from grader import arguments
from grader.harness.processes import workroot
from . import isolated
from grader.report import results_json
from grader.report.files import remove_stale
from .submission import NoSubmission, find_queue_py


def main(argv: list[str] | None = None) -> int:
    p = arguments.Parser(prog="python -m grader.instructor.autograder", description=__doc__)
    p.add_argument("--root", default=os.environ.get("AUTOGRADER_ROOT", "/autograder"))
    p.add_argument("--timeout", type=float, default=isolated.DEFAULT_LIMIT)
    p.add_argument("--lang", choices=("en", "ja"), default="en")
    p.add_argument("--config", help="the instructor's config file (detail, visibility)")
    args = p.parse_args(argv)
    root = Path(args.root)
    results_path = root / "results" / "results.json"
    results_path.parent.mkdir(parents=True, exist_ok=True)
    remove_stale(results_path)  # killed from here on: no results.json, not an earlier one
    try:
        results = grade(root / "submission", args.timeout, args.lang, config=args.config)
    except Exception:  # a bug here must still leave a results.json that says so
        traceback.print_exc()
        results = results_json.fallback(args.lang)
    results_json.write(results_path, results)
    return 0


def grade(submission: Path, timeout: float, lang: str, select: str | None = None,
          config: str | None = None) -> dict:
    """The results.json of the queue.py in `submission` (found, copied and graded in isolation;
    `select`: only the checks matching this -k expression; `config`: the instructor's config
    file), or a not-graded one."""
    from grader.report.messages import text

    try:
        queue_py = find_queue_py(submission)
    except NoSubmission as missing:
        files = ", ".join(str(p.relative_to(submission)) for p in missing.candidates)
        message = text(f"instructor.{missing.kind}", lang, files=files)
        return results_json.not_graded(missing.kind, message, lang)
    with tempfile.TemporaryDirectory(prefix="autograder-", dir=workroot.root()) as work:
        outcome = isolated.grade(queue_py, Path(work), limit=timeout, lang=lang,
                                 select=select, config=config,
                                 shown_as=queue_py.relative_to(submission).as_posix())
    print(outcome.log, end="")  # shown to the instructor in Gradescope's debugging output
    return outcome.results


if __name__ == "__main__":
    sys.exit(main())
