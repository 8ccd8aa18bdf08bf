"""`python -m grader report FILE [--lang en|ja] [--json PATH] [--html PATH] ...`: the reports of
a pytest run of the checks, from pytest-json-report's file (`--json-report-file`).

The pipeline the design names: pytest runs the checks (grader.plugin.pytest_plugin), its
plugin pytest-json-report writes FILE with each check's whole result in its metadata, and this
command reads those results back and writes them with every writer: the terminal report, and
any of the report files `python -m grader` writes (HTML through jinja2, results.json, JUnit,
PrairieLearn, Markdown), in the language asked for. A file with no lease lab result in it is a
bad argument (exit 2, one line); exit status 0 when every check in it passed, 1 otherwise.
`--config` applies the course's config (what students see of each check, as `python -m grader
--config` does: a hidden check is in no report and its verdict not in the exit status), and
`--instructor` makes the instructor's copy (every check in full).
"""

from __future__ import annotations

import json
import os
import sys

from grader import arguments, config as configs
from grader.checkdef import all_checks, check_families
from grader.harness.judge.world import LESSON_SEED
from grader.report import outputs, pipeline, terminal
from grader.report.messages import LANGS, default_lang
from grader.report.render import Style
from grader.results import CheckResult, check_result_from_json

#: Where the pytest plugin keeps a check's result in its item's metadata (pytest-json-report's
#: `metadata`); defined here, not in the plugin, so that reading a report never imports pytest.
METADATA_KEY = "leaselab"

MAX_BYTES = 64 * 1024 * 1024  # a larger file is refused, not read


class NotAReport(Exception):
    """The file holds no lease lab results (one line for the user)."""


def parser() -> arguments.Parser:
    p = arguments.Parser(prog="python -m grader report",
                         description="Write the reports of a pytest run of the checks from its "
                                     "pytest-json-report file.")
    p.add_argument("file", metavar="FILE", help="pytest-json-report's file (--json-report-file)")
    p.add_argument("--lang", choices=LANGS, help="language (default: the run's)")
    p.add_argument("--hints", action="store_true", help="show the hint under every failed check")
    p.add_argument("--all", action="store_true", dest="tell_all",
                   help="every failure's story in full on the terminal")
    p.add_argument("--config", metavar="PATH",
                   help="the course's config file: what students see of each check (show)")
    p.add_argument("--instructor", action="store_true",
                   help="the instructor's copy: every check in full, whatever the config shows")
    for output in outputs.FORMATS:
        output.add_to(p, help=f"write {output.noun}")
    return p


def main(argv: list[str]) -> int:
    args = parser().parse_command(argv)
    if isinstance(args, int):  # --help, or a bad argument
        return args
    try:
        results, meta = read(args.file)
    except NotAReport as exc:
        print(f"grader: {args.file}: {exc}", file=sys.stderr)
        return 2
    asked = outputs.asked(args)
    target = meta.get("target") if isinstance(meta.get("target"), str) else "?"
    problem = outputs.check_paths(asked, target=target if target.endswith(".py") else None,
                                  protected=arguments.lab_folders())
    if problem is None and os.path.realpath(args.file) in map(os.path.realpath, asked.values()):
        problem = f"{args.file}: is the file being read"
    if problem:
        print(f"grader: {problem}", file=sys.stderr)
        return 2
    try:
        config = configs.load(args.config, set(all_checks()), check_families())
    except configs.ConfigError as exc:
        print(f"grader: {exc}", file=sys.stderr)
        return 2
    config.instructor = args.instructor
    lang = args.lang or (meta.get("lang") if meta.get("lang") in LANGS else default_lang())
    seed = meta.get("seed") if type(meta.get("seed")) is int else LESSON_SEED
    report = pipeline.report_of(results, lang=lang, target=target, impl=target,
                                config=config, seed=seed, drawn=seed != LESSON_SEED,
                                duration=sum(r.duration for r in results),
                                tell_all=args.tell_all, asked_hints=args.hints,
                                use_history=False)
    print(terminal.from_view(report, Style.for_stream(sys.stdout)))
    problem = outputs.write_all(asked, report, config)
    if problem:
        print(f"grader: {problem}", file=sys.stderr)
        return 2
    # a hidden verdict is not told by the status (--instructor hides nothing)
    return 0 if all(r.passed for r in results if r.id not in report.hidden_ids) else 1


def read(path: str) -> tuple[list[CheckResult], dict]:
    """The check results in pytest-json-report's file at `path`, in lesson order, and what the
    run graded (target, seed, lang: from its first check). NotAReport when there are none."""
    problem = arguments.unreadable_file(path)
    if problem:
        raise NotAReport(problem)
    if os.path.getsize(path) > MAX_BYTES:
        raise NotAReport(f"larger than {MAX_BYTES // 2 ** 20} MiB")
    try:
        with open(path, encoding="utf-8") as f:
            data = json.load(f)
    except (OSError, ValueError, RecursionError) as exc:
        raise NotAReport(f"not JSON ({type(exc).__name__})") from None
    tests = data.get("tests") if isinstance(data, dict) else None
    if not isinstance(tests, list):
        raise NotAReport("not a pytest-json-report file (no 'tests' list)")
    order = list(all_checks())
    found: dict[str, CheckResult] = {}
    meta: dict = {}
    for test in tests:
        ours = (test.get("metadata") or {}).get(METADATA_KEY) if isinstance(test, dict) else None
        if not isinstance(ours, dict):
            continue
        try:
            result = check_result_from_json(ours.get("check"))
        except (KeyError, TypeError, ValueError):
            raise NotAReport(f"a broken result in {test.get('nodeid', '?')!r:.80}") from None
        if result.id in order:
            found[result.id] = result
            meta = meta or ours
    if not found:
        raise NotAReport("no lease lab check result in it (run pytest with the plugin: "
                         "python -m pytest --pyargs grader.checks --json-report ...)")
    return sorted(found.values(), key=lambda r: order.index(r.id)), meta
