"""`python -m grader`: grade an implementation of the lease lab.

Exit status: 0 when every check passes, 1 when any fails, 2 when the grader cannot run.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

from . import arguments, config as configs
from .checkdef import all_checks
from .harness.target import DEFAULT_TARGET, display_name, is_path
from .report import files, results_json, terminal
from .report.messages import default_lang
from .report.render import Style
from .report.view import report_view
from .runner import GraderError, run_checks


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m grader", description="Grade the lease lab.")
    p.add_argument("--impl", default=DEFAULT_TARGET, metavar="MODULE_OR_FILE",
                   help="module name (lab.queue, solutions.queue) or path to a .py file "
                        "(default: %(default)s)")
    p.add_argument("--json", metavar="PATH", help="write Gradescope results.json here")
    p.add_argument("--html", metavar="PATH", help="write an HTML report here")
    p.add_argument("--lang", choices=("en", "ja"), help="language (default: from the locale)")
    p.add_argument("-k", dest="select", metavar="EXPR",
                   help="run only checks whose id (or test name) matches EXPR, e.g. "
                        "'finish-at-expiry' or 'race or crash'")
    p.add_argument("--timeout-scale", type=arguments.positive_number, default=1.0, metavar="X",
                   help="multiply every check's wall-clock safety timeout (slow machines)")
    p.add_argument("--repeat", type=arguments.positive_int, default=1, metavar="N",
                   help="run every check N times on fresh databases; flag unstable verdicts")
    p.add_argument("--replay", type=arguments.seed, default=1, metavar="SEED", dest="seed",
                   help="draw the random timelines from SEED (a failure prints the seed that "
                        "replays it; default: %(default)s)")
    p.add_argument("--detail", choices=configs.DETAILS,
                   help="what failures show: full (default), actual-only (no expected values), "
                        "none (title and why only)")
    p.add_argument("--config", metavar="PATH",
                   help="instructor config (TOML): detail and Gradescope visibility per check")
    return p


#: `python -m grader NAME ...` runs <module>.main(argv) for these subcommands. Named by path, not
#: imported: the student copy has no grader/instructor/, and its commands say so.
SUBCOMMANDS = {
    "checks": "grader.report.check_list",
    "quiz": "grader.quiz.cli",
    "batch": "grader.instructor.batch",
    "gradescope-bundle": "grader.instructor.gradescope_bundle",
    "classroom50": "grader.instructor.classroom50",
    "export-student": "grader.instructor.export_student",
}


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv and argv[0] in SUBCOMMANDS:
        import importlib

        name = SUBCOMMANDS[argv[0]]
        try:
            module = importlib.import_module(name)
        except ModuleNotFoundError as exc:
            if exc.name and name.startswith(exc.name + ".") or exc.name == name:
                print(f"grader: '{argv[0]}' is not available in this copy of the grader",
                      file=sys.stderr)
            else:  # a dependency is missing, not the command
                print(f"grader: '{argv[0]}' needs the Python package '{exc.name}', which is not "
                      "installed here (pip install -e .)", file=sys.stderr)
            return 2
        return module.main(argv[1:])
    return grade(argv)


def bad_paths(args: argparse.Namespace) -> str | None:
    """The first path argument the grader could not use, as one line; None when all are fine.
    Checked before grading, so a typo costs no time. A module name (`lab.queue`) is not
    checked here: one that does not import is a graded failure, like a file that does not."""
    if is_path(args.impl):
        problem = arguments.unreadable_file(args.impl)
        if problem:
            return f"--impl {args.impl}: {problem}"
    for flag, path in (("--json", args.json), ("--html", args.html)):
        problem = path is not None and arguments.unwritable_destination(path)
        if problem:
            return f"{flag} {path}: {problem}"
    return None


def grade(argv: list[str]) -> int:
    try:
        args = parser().parse_args(argv)
    except SystemExit as exc:  # argparse: bad arguments
        return 0 if exc.code == 0 else 2
    problem = bad_paths(args)
    if problem:
        print(f"grader: {problem}", file=sys.stderr)
        return 2
    lang = args.lang or default_lang()
    if args.json:  # a grade killed from here on must not leave an earlier verdict in place
        files.remove_stale(args.json)
    start = time.monotonic()
    try:
        config = configs.load(args.config, set(all_checks()))
        results = run_checks(args.impl, lang=lang, timeout_scale=args.timeout_scale,
                             select=args.select, repeat=args.repeat, seed=args.seed)
    except (configs.ConfigError, GraderError) as exc:
        print(f"grader: {exc}", file=sys.stderr)
        return 2
    detail = args.detail or config.detail
    duration = time.monotonic() - start
    report = report_view(results, lang, target=display_name(args.impl), detail=detail,
                         duration=duration)
    print(terminal.from_view(report, Style.for_stream(sys.stdout)))
    if args.json:
        results_json.write(args.json, results_json.from_view(report, config))
    if args.html:
        from .report import html

        Path(args.html).write_text(html.from_view(report), encoding="utf-8")
    ok = results and all(r.passed and not r.unstable for r in results)
    return 0 if ok else 1
