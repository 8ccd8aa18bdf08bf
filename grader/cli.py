"""`python -m grader`: grade an implementation of the lease lab.

Exit status: 0 when every check passes, 1 when any fails, 2 when the grader cannot run.
"""

from __future__ import annotations

import argparse
import difflib
import importlib.util
import os
import sys
import time
from pathlib import Path

from . import arguments, config as configs
from .checkdef import all_checks, check_families
from .commands import SUBCOMMANDS
from grader.harness.judge.world import LESSON_SEED, fresh_seed
from grader.harness.processes import jail
from grader.harness.target.loader import DEFAULT_TARGET, display_name, is_path
from .report import files, outputs, pipeline, terminal
from .report.messages import CLI_COMMAND, LANGS, default_lang, text
from .report.render import Style
from .report.view import ReportView
from .report.live import LiveLine
from .runner import GraderError, iter_checks, prepare, selected, start_preflight


def parser(lang: str = "en") -> arguments.Parser:
    """The grading options; their help, like the commands' lines, is in `lang` (Japanese is
    not wrapped: it has no spaces to break at, the terminal wraps it)."""
    raw = argparse.RawTextHelpFormatter if lang == "ja" else argparse.RawDescriptionHelpFormatter
    p = arguments.Parser(prog="python -m grader", description=description(lang),
                         formatter_class=raw)
    g = p.add_argument_group(text("cli.grading-options", lang))
    g.add_argument("--impl", default=DEFAULT_TARGET, metavar="MODULE_OR_FILE",
                   help=text("cli.option.impl", lang))
    for output in outputs.FORMATS:
        output.add_to(g, help=output.help(lang))
    g.add_argument("--lang", choices=LANGS, help=text("cli.option.lang", lang))
    g.add_argument("-k", dest="select", metavar="EXPR", help=text("cli.option.select", lang))
    g.add_argument("--timeout-scale", type=arguments.positive_number, default=1.0, metavar="X",
                   help=text("cli.option.timeout-scale", lang))
    g.add_argument("--repeat", type=arguments.positive_int, default=1, metavar="N",
                   help=text("cli.option.repeat", lang))
    g.add_argument("--sweep", type=arguments.positive_int, default=1, metavar="N",
                   help=text("cli.option.sweep", lang))
    g.add_argument("--jobs", "-j", type=arguments.positive_int, default=None, metavar="N",
                   help=text("cli.option.jobs", lang))
    g.add_argument("--replay", "--seed", type=arguments.seed, metavar="SEED", dest="seed",
                   help=text("cli.option.replay", lang, lesson=LESSON_SEED))  # see chosen_seed
    g.add_argument("--detail", choices=configs.DETAILS, help=text("cli.option.detail", lang))
    g.add_argument("--all", action="store_true", dest="tell_all",
                   help=text("cli.option.all", lang))
    g.add_argument("--config", metavar="PATH", help=text("cli.option.config", lang))
    g.add_argument("--instructor", action="store_true", help=text("cli.option.instructor", lang))
    g.add_argument("--hints", action="store_true", help=text("cli.option.hints", lang))
    g.add_argument("--no-history", action="store_true", help=text("cli.option.no-history", lang))
    return p


def description(lang: str) -> str:
    """What `--help` says above the options: what the grader does, and one line per command.
    Built from the catalogue and the command names only: no command's module is imported, so
    the help works in the student copy, which has no grader/instructor/."""
    here = [name for name in SUBCOMMANDS if available(name)]
    width = max(len(name) for name in here) + 2
    lines = [text("cli.description", lang), "", text("cli.commands", lang)]
    lines += [f"  {name:<{width}}{text(CLI_COMMAND(name), lang)}" for name in here]
    return "\n".join(lines)


def available(command: str) -> bool:
    """Whether this copy of the grader has the command's module (the student copy has no
    grader/instructor/): looked for as a file, nothing is imported."""
    parts = SUBCOMMANDS[command].split(".")
    base = Path(__file__).resolve().parent.joinpath(*parts[1:])
    return base.with_suffix(".py").is_file() or (base / "__init__.py").is_file()


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv and argv[0] in SUBCOMMANDS:
        return run_command(argv[0], argv[1:])
    meant = misspelt_command(argv)
    if meant:
        print("grader: " + text("cli.unknown-command", chosen_lang(argv), word=argv[0],
                                command=meant), file=sys.stderr)
        return 2
    return grade(argv)


def run_command(command: str, argv: list[str]) -> int:
    """`python -m grader COMMAND ...`: import the command's module only now, and run it."""
    import importlib

    name = SUBCOMMANDS[command]
    try:
        module = importlib.import_module(name)
    except ModuleNotFoundError as exc:
        if exc.name and name.startswith(exc.name + ".") or exc.name == name:
            print(f"grader: '{command}' is not available in this copy of the grader",
                  file=sys.stderr)
        else:  # a dependency is missing, not the command
            print(f"grader: '{command}' needs the Python package '{exc.name}', which is not "
                  "installed here (pip install -e .)", file=sys.stderr)
        return 2
    return module.main(argv)


def misspelt_command(argv: list[str]) -> str | None:
    """The command a first word looks like a typo of (`quizz` -> `quiz`), or None.

    The grader takes no positional argument, so a first word that is not a command is always
    refused; it is read as a mistyped command unless it is an option, or a path or module name
    that exists (`python -m grader lab.queue`, meant for --impl: argparse's refusal names it)."""
    word = argv[0] if argv else ""
    if not word or word.startswith("-") or os.path.exists(word) or is_path(word):
        return None
    try:  # the top-level name only: finding `lab` imports nothing, finding `lab.queue` would
        if importlib.util.find_spec(word.split(".")[0]) is not None:
            return None
    except (ImportError, ValueError):
        pass
    close = difflib.get_close_matches(word, SUBCOMMANDS, n=1)
    return close[0] if close else None


def chosen_lang(argv: list[str]) -> str:
    """The language asked for with --lang (for words shown before argparse has run), else the
    locale's."""
    for flag, value in zip(argv, argv[1:] + [""]):
        if flag.startswith("--lang="):
            flag, value = flag.split("=", 1)
        if flag == "--lang" and value in LANGS:
            return value
    return default_lang()


def bad_paths(args: argparse.Namespace) -> str | None:
    """The first path argument the grader could not use, as one line; None when all are fine.
    Checked before grading, so a typo costs no time and no file is touched. A module name
    (`lab.queue`) is not checked here: one that does not import is a graded failure, like a
    file that does not."""
    if is_path(args.impl):
        problem = arguments.ungradable_file(args.impl)
        meant = impl_suggestion(args.impl)
        if problem and meant:
            problem += f"; {meant}"
        if problem:
            return f"--impl {args.impl}: {problem}"
    elif target_file(args.impl) is None:
        return f"--impl {args.impl}: {missing_module(args.impl)}"
    asked = outputs.asked(args)
    if not asked:
        return None
    return outputs.check_paths(asked, target=target_file(args.impl),
                               protected=arguments.lab_folders())


def impl_suggestion(impl: str) -> str | None:
    """What `--impl` meant when it names no file: `lab.queue.py` -> `lab/queue.py` or
    `lab.queue`, when that file is there."""
    if not impl.endswith(".py") or os.sep in impl or "/" in impl or impl.count(".") < 2:
        return None
    module = impl[:-3]
    path = module.replace(".", "/") + ".py"
    return f"did you mean --impl {path} or --impl {module}?" if os.path.isfile(path) else None


def missing_module(impl: str) -> str:
    """Why the module name `impl` names nothing to grade (found as the target process would find
    it, importing nothing), with the module it looks like a typo of when there is one: a module
    that cannot be found is a bad argument, like a file that is not there (one that is found but
    fails to import is a graded failure)."""
    problem = f"no module named {impl!r} (a module name, or a path to a .py file)"
    parent, _, _ = impl.rpartition(".")
    folder = target_file(parent) if parent else None
    if folder is not None and os.path.basename(folder) == "__init__.py":
        try:
            names = [f"{parent}.{entry[:-3]}" for entry in os.listdir(os.path.dirname(folder))
                     if entry.endswith(".py") and entry != "__init__.py"]
        except OSError:
            names = []
        close = difflib.get_close_matches(impl, names, n=1)
        if close:
            problem += f"; did you mean --impl {close[0]}?"
    return problem


def target_file(impl: str) -> str | None:
    """The file under grade (found without importing anything of it), or None."""
    if is_path(impl):
        return impl
    from grader.harness.target.sealing import module_origin

    try:
        return module_origin(impl)
    except (ImportError, ValueError, AttributeError):
        return None


def report_of_args(args: argparse.Namespace, results: list, lang: str, config: configs.Config,
                   duration: float, use_history: bool | None = None) -> ReportView:
    """The report of a grade run with the grading options `args` (grader.report.pipeline)."""
    return pipeline.report_of(
        results, lang=lang, target=display_name(args.impl), impl=args.impl, config=config,
        seed=args.seed, drawn=args.seed != LESSON_SEED, duration=duration, detail=args.detail,
        tell_all=args.tell_all, asked_hints=args.hints,
        use_history=not args.no_history if use_history is None else use_history)


def write_reports(args: argparse.Namespace, report: ReportView,
                  config: configs.Config) -> str | None:
    """Write every report file asked for; the first that could not be written, as one line."""
    return outputs.write_all(outputs.asked(args), report, config)


#: Environment variables that say a grade runs in CI (GitHub Actions, GitLab CI, Travis and
#: most others set CI=true; GitHub Actions also GITHUB_ACTIONS=true).
CI_VARIABLES = ("CI", "GITHUB_ACTIONS")


def in_ci(environ=os.environ) -> bool:
    """Whether this grade runs in CI: CI or GITHUB_ACTIONS set to anything but empty, 0,
    false or no (CI=false is how a CI job says it is not one)."""
    return any(environ.get(name, "").strip().lower() not in ("", "0", "false", "no")
               for name in CI_VARIABLES)


def chosen_seed(given: int | str | None, recorded: bool = False) -> int:
    """The seed a grade's worlds are drawn from: the one --replay gave; a fresh one for
    `--replay fresh`, or when none was given to a grade that is `recorded` (PrairieLearn's, or
    any grade in CI: `in_ci`); else the lesson's. A grade recorded from CI thus runs in a world
    no report has shown without the instructor asking for it; `--replay` still decides."""
    if given == arguments.FRESH or (given is None and (recorded or in_ci())):
        return fresh_seed()
    return LESSON_SEED if given is None else given


def unjailed_note(lang: str) -> str | None:
    """What a grade says once where the kernel has no Landlock (`jail.available`): neither its
    target processes nor its judges (lanes and forked judges, which run the code's SQL) are
    jailed (docs/instructors.md, threat model); None where they are."""
    return text("ui.unjailed", lang) if jail.available() <= 0 else None


def grade(argv: list[str]) -> int:
    args = parser(chosen_lang(argv)).parse_command(argv)
    if isinstance(args, int):  # --help, or a bad argument
        return args
    problem = bad_paths(args)
    if problem:
        print(f"grader: {problem}", file=sys.stderr)
        return 2
    lang = args.lang or default_lang()
    note = unjailed_note(lang)
    if note:
        print(f"grader: {note}", file=sys.stderr)
    args.seed = chosen_seed(args.seed, recorded=bool(args.prairielearn))
    for path in outputs.asked(args).values():  # a grade killed from here on must not leave
        files.remove_stale(path)              # an earlier verdict in place
    start = time.monotonic()
    prepare()  # the zygote's interpreter starts while the checks are imported
    # and the preflight's judge runs meanwhile (iter_checks waits for it once the lanes run)
    preflight = start_preflight(args.impl, args.timeout_scale)
    try:
        config = configs.load(args.config, set(all_checks()), check_families())
        config.instructor = args.instructor  # the instructor's copy: every check in full
        chosen = [info.id for info in selected(args.select)]
        hidden = frozenset(cid for cid, level in config.levels(chosen).items()
                           if level == "hidden")  # no verdict of theirs on the live line
        live = LiveLine(sys.stdout, len(chosen) - len(hidden), lang, hidden)
        results = []
        try:
            for result in iter_checks(args.impl, timeout_scale=args.timeout_scale,
                                      select=args.select, repeat=args.repeat, seed=args.seed,
                                      sweep=args.sweep, jobs=args.jobs, preflight=preflight):
                results.append(result)
                live.show(result)
        finally:
            live.clear()
    except (configs.ConfigError, GraderError) as exc:
        print(f"grader: {exc}", file=sys.stderr)
        return 2
    finally:
        preflight.abandon()  # (nothing to do once iter_checks had its answer)
    report = report_of_args(args, results, lang, config, time.monotonic() - start)
    print(terminal.from_view(report, Style.for_stream(sys.stdout)))
    problem = write_reports(args, report, config)
    if problem:
        print(f"grader: {problem}", file=sys.stderr)
        return 2
    ok = results and all(r.passed and not r.unstable for r in results
                         if r.id not in report.hidden_ids)
    return 0 if ok else 1
