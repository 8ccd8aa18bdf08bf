"""`python -m grader batch DIR [--jobs N] [--out DIR] [--roster CSV]`: grade a whole class.

Every submission in DIR (a folder, graded by the queue.py that grader.instructor.submission finds in it, or
a single .py file) is graded in its own process and work directory, N at a time, each within a
wall-clock limit; on Linux each grade's process is forked by one fork server started with the
batch (grader.instructor.isolated.forking), and each grade runs its checks one at a time. Writes OUT/gradebook.csv, OUT/class-report.html, and per submission
OUT/results/<name>.json (its results.json) and OUT/logs/<name>.log (the grader's output).
With `--roster CSV` (read and checked before grading), also the LMS files of
grader.instructor.lms: canvas.csv, moodle.csv, feedback/<name>.txt and who is not matched.
Exit status 0 when the gradebook was written (whatever the grades), 2 when the batch cannot run.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import shutil
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor, as_completed
from pathlib import Path

from grader import arguments
from . import class_report, distribution, gradebook, isolated, lms
from grader.arguments import positive_int, positive_number, unusable_folder
from grader.arguments import FRESH, seed as seed_type
from grader.harness.processes import workroot
from grader.harness.judge.world import fresh_seed
from grader import config as configs
from grader.checkdef import all_checks as declared_checks, check_families
from grader.report.messages import ROSTER_PROBLEM, default_lang, text
from .progress import Progress
from grader.report import results_json
from grader.report.files import remove_stale
from .submission import NoSubmission, Submission, discover, queue_py_of

DEFAULT_OUT = "grades"
CSV_NAME, HTML_NAME = "gradebook.csv", "class-report.html"


def parser() -> arguments.Parser:
    p = arguments.Parser(prog="python -m grader batch",
                         description="Grade every submission in DIR.")
    p.add_argument("dir", metavar="DIR", help="one folder or one .py file per submission")
    p.add_argument("--jobs", "-j", type=positive_int, default=os.cpu_count() or 1, metavar="N",
                   help="submissions graded at the same time (default: CPU count, %(default)s)")
    p.add_argument("--out", metavar="DIR", default=DEFAULT_OUT,
                   help="where to write the gradebook and report (default: ./%(default)s)")
    p.add_argument("--timeout", type=positive_number, default=isolated.DEFAULT_LIMIT,
                   metavar="SECONDS",
                   help="wall-clock limit per submission (default: %(default)g)")
    p.add_argument("--timeout-scale", type=positive_number, default=1.0, metavar="X",
                   help="passed to the grader: multiply each check's safety timeout")
    p.add_argument("-k", dest="select", metavar="EXPR",
                   help="grade only the checks matching EXPR (pytest -k), e.g. test_boundaries")
    p.add_argument("--replay", "--seed", dest="seed", type=seed_type, metavar="SEED",
                   help="draw every submission's worlds from SEED (default: a fresh seed for "
                        "each submission, written in the gradebook's seed column)")
    p.add_argument("--lang", choices=("en", "ja"), help="language (default: from the locale)")
    p.add_argument("--config", metavar="PATH",
                   help="the instructor's config file: what feedback/ shows of each check "
                        "(show, visibility, detail, hints); the gradebook and class report "
                        "always hold every check")
    p.add_argument("--quiet", "-q", action="store_true", help="no progress output")
    p.add_argument("--roster", metavar="CSV",
                   help="submission -> LMS identity (columns: " + ", ".join(lms.ROSTER_COLUMNS)
                        + "); writes canvas.csv, moodle.csv and feedback/ beside the gradebook")
    p.add_argument("--assignment", metavar="NAME",
                   help="the assignment's name in the LMS files (default: the lab's name)")
    p.add_argument("--assignment-id", type=lms.canvas_id, metavar="ID",
                   help="the Canvas assignment to update (default: Canvas creates one)")
    return p


class Refused(Exception):
    """The batch cannot run: the one line to print (exit 2)."""


def inputs(args: argparse.Namespace, lang: str) -> tuple[list[Submission], lms.Roster | None]:
    """The submissions and the roster, every input checked before anything is graded."""
    folder = Path(args.dir)
    if not folder.is_dir():
        raise Refused(text("instructor.no-dir", lang, dir=folder))
    submissions = unique_names(discover(folder))
    if not submissions:
        raise Refused(text("instructor.no-submissions", lang, dir=folder))
    problem = unusable_folder(args.out)
    if problem:
        raise Refused(text("instructor.bad-out", lang, dir=Path(args.out), problem=problem))
    if args.config is not None:  # refused now, not in every grade
        try:
            configs.load(args.config, set(declared_checks()), check_families())
        except configs.ConfigError as bad:
            raise Refused(f"grader: {bad}") from None
    try:
        return submissions, lms.read_roster(args.roster) if args.roster else None
    except lms.RosterError as bad:
        raise Refused(text(ROSTER_PROBLEM(bad.kind), lang, **bad.params)) from None


def main(argv: list[str]) -> int:
    args = parser().parse_command(argv)
    if isinstance(args, int):  # --help, or a bad argument
        return args
    lang = args.lang or default_lang()
    try:
        submissions, roster = inputs(args, lang)
    except Refused as refused:
        print(refused, file=sys.stderr)
        return 2
    note = isolated.class_note(lang)  # once for the class (each grade's log says more)
    if note:
        print(f"grader: {note}", file=sys.stderr)
    out = Path(args.out)
    start = time.monotonic()
    try:
        rows = grade_all(submissions, out, jobs=args.jobs, limit=args.timeout,
                         timeout_scale=args.timeout_scale, lang=lang, quiet=args.quiet,
                         seed=fresh_seed() if args.seed == FRESH else args.seed,
                         select=args.select, config=args.config)
    except KeyboardInterrupt:
        isolated.kill_all()
        print("\n" + text("instructor.interrupted", lang), file=sys.stderr)
        return 130
    declared = declared_checks()
    check_ids = gradebook.columns(rows, declared, selected=bool(args.select))
    csv_path, html_path = out / CSV_NAME, out / HTML_NAME
    gradebook.write_csv(csv_path, rows, check_ids)
    class_report.write(html_path, rows, check_ids, declared, lang)
    if roster is not None:
        write_lms(out, rows, roster, lms.Assignment(
            args.assignment or text("instructor.lms.assignment", lang), args.assignment_id),
            lang, quiet=args.quiet)
    if not args.quiet:
        print(text("instructor.batch-done", lang, count=len(rows),
                   seconds=f"{time.monotonic() - start:.1f}", jobs=args.jobs, csv=csv_path,
                   html=html_path), file=sys.stderr)
    return 0


def write_lms(out: Path, rows: list[gradebook.Row], roster: lms.Roster,
              assignment: lms.Assignment, lang: str, quiet: bool = False) -> None:
    """The LMS files (grader.instructor.lms); who is not matched is printed even when quiet."""
    mismatch = lms.write_all(out, rows, roster, assignment, lang)
    if mismatch.not_in_roster:
        print(text("instructor.lms.not-in-roster", lang,
                   names=", ".join(mismatch.not_in_roster)), file=sys.stderr)
    if mismatch.no_submission:
        print(text("instructor.lms.no-submission", lang,
                   names=", ".join(mismatch.no_submission)), file=sys.stderr)
    if not quiet:
        print(text("instructor.lms.written", lang, canvas=out / lms.CANVAS_NAME,
                   moodle=out / lms.MOODLE_NAME, feedback=out / lms.FEEDBACK_DIR),
              file=sys.stderr)


def grade_all(submissions: list[Submission], out: Path, *, jobs: int, limit: float,
              timeout_scale: float, lang: str, quiet: bool = False,
              select: str | None = None, seed: int | None = None,
              config: str | None = None) -> list[gradebook.Row]:
    """Grade `submissions` `jobs` at a time; rows in the order of `submissions`. `seed`: the
    one every grade's worlds are drawn from (default: a fresh one for each submission);
    `config`: the instructor's config file each grade uses (what students see)."""
    remove_earlier_outputs(out)
    progress = Progress(len(submissions), lang, quiet=quiet)
    rows: dict[str, gradebook.Row] = {}
    # Under the batch's work root (grader.harness.processes.workroot): each grade's TMPDIR is in `work`,
    # removed after it whatever ended it; a batch killed leaves its root to the next grader.
    # (what a grade left that cannot be removed, whatever it is, costs no gradebook: the
    # clean-up's errors are ignored, and the work root is swept by the next grader)
    with tempfile.TemporaryDirectory(prefix="batch-", dir=workroot.root(),
                                     ignore_cleanup_errors=True) as work, \
            isolated.forking(), ThreadPoolExecutor(max_workers=jobs) as pool:
        futures = {pool.submit(grade_one, sub, Path(work) / str(i), out, limit=limit,
                               timeout_scale=timeout_scale, lang=lang, select=select,
                               seed=seed, config=config): sub
                   for i, sub in enumerate(submissions)}
        try:
            for future in as_completed(futures):
                r = future.result()
                rows[r.submission] = r
                progress.finished(r.submission, r.status, r.score, r.max_score)
        except BaseException:
            for future in futures:
                future.cancel()
            isolated.kill_all()
            raise
        finally:
            progress.close()
    return gradebook.same_max_score([rows[sub.name] for sub in submissions])


def grade_one(sub: Submission, workdir: Path, out: Path, *, limit: float, timeout_scale: float,
              lang: str, select: str | None = None, seed: int | None = None,
              config: str | None = None) -> gradebook.Row:
    """Grade one submission in `workdir` (removed afterwards); keep its results.json and log."""
    workdir.mkdir()
    try:
        try:
            queue_py = queue_py_of(sub)
        except NoSubmission as missing:
            files = ", ".join(str(p.relative_to(sub.path)) for p in missing.candidates)
            message = text(f"instructor.{missing.kind}", lang, files=files)
            outcome = isolated.Outcome(missing.kind,
                                       results_json.not_graded(missing.kind, message, lang), 0.0)
        else:
            own = (queue_py.relative_to(sub.path).as_posix() if sub.path.is_dir()
                   else sub.path.name)  # the file as the student knows it
            outcome = isolated.grade(queue_py, workdir, limit=limit, lang=lang,
                                     timeout_scale=timeout_scale, with_folder=sub.path.is_dir(),
                                     select=select, seed=seed, check_jobs=1, config=config,
                                     shown_as=own)
        peeks = distribution.forbidden_imports(workdir / "submission", strict=False) \
            if (workdir / "submission").is_dir() else []
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    results_json.write(out / "results" / f"{sub.name}.json", outcome.results)
    if outcome.log:
        (out / "logs" / f"{sub.name}.log").write_text(outcome.log, encoding="utf-8")
    row = gradebook.row(sub.name, outcome.status, outcome.results, seed=outcome.seed)
    if peeks:  # graded from an instructor checkout, where the reference is importable
        row.message = text("instructor.imports-solutions", lang, found="; ".join(peeks))
    return row


def remove_earlier_outputs(out: Path) -> None:
    """Before grading: an interrupted batch must not leave an earlier run's gradebook, report or
    results beside its own. Only our own files (and temporary ones a killed write left)."""
    for name in (CSV_NAME, HTML_NAME, *lms.OUTPUT_FILES):
        remove_stale(out / name)
    for sub in ("results", "logs"):
        (out / sub).mkdir(parents=True, exist_ok=True)
    for sub in ("results", "logs", lms.FEEDBACK_DIR):
        for stale in (out / sub).iterdir() if (out / sub).is_dir() else ():
            if stale.suffix in (".json", ".log", ".txt", ".tmp"):
                stale.unlink()


#: The longest row name, in bytes of UTF-8: its results and log files (`<name>.json`, and the
#: hidden temporary one a write makes beside it) must fit a file name (255 bytes on most file
#: systems).
MAX_NAME_BYTES = 180


def unique_names(submissions: list[Submission]) -> list[Submission]:
    """Each submission's row name, one per submission, each a file name the results can take:
    `alice/` and `alice.py` side by side, the file keeps its full name (`alice.py`); a name
    that is not UTF-8 (undecodable bytes: U+FFFD in their place) or too long for a file name
    (cut to MAX_NAME_BYTES) is made one, and a name that is still some other submission's
    (`x.py` beside `x.py.py`, two names that read alike once made so) gets `~` and a hash of
    the entry's own name (and `~2`, `~3`... should an entry already be named so): no two rows
    share a name, and no row's results are another's."""
    folders = {s.name for s in submissions if s.path.is_dir()}
    taken: set[str] = set()
    named = []
    for sub in submissions:
        name = sub.path.name if sub.path.is_file() and sub.name in folders else sub.name
        name = unique = _cut(name.encode("utf-8", "surrogateescape").decode("utf-8", "replace"))
        digest = hashlib.sha256(os.fsencode(sub.path.name)).hexdigest()[:10]
        number = 1
        while unique in taken:
            suffix = f"~{digest}" + (f"~{number}" if number > 1 else "")
            unique = _cut(name, MAX_NAME_BYTES - len(suffix)) + suffix
            number += 1
        taken.add(unique)
        named.append(Submission(unique, sub.path))
    return named


def _cut(name: str, limit: int = MAX_NAME_BYTES) -> str:
    """`name` within `limit` bytes of UTF-8 (cut between characters)."""
    data = name.encode("utf-8")
    return name if len(data) <= limit else data[:limit].decode("utf-8", "ignore")

