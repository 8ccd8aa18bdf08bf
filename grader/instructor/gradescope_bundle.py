"""`python -m grader gradescope-bundle OUT.zip [--lang en|ja] [--timeout S]`: the Gradescope
autograder zip.

The zip holds, at its root: setup.sh (installs python3 if missing and the grader into a venv),
run_autograder (grades each submission through grader.instructor.autograder) and the lab's source
as the student repository has it (lab/, grader/, pyproject.toml, README.md; no solutions, no
mutants), plus grader/instructor/, where the autograder entry and the isolation live.
Exit status 0 written, 2 refused.
"""

from __future__ import annotations

import shlex
import shutil
import sys
import tempfile
import zipfile
from pathlib import Path

from grader import arguments
import jinja2

from . import distribution, isolated
from grader import config as configs
from grader.arguments import positive_number
from grader.checkdef import all_checks, check_families
from .export_student import STARTER_HELP, TEMPLATES, build_grading_copy
from grader.report import results_json
from grader.report.messages import default_lang, text

CONFIG_NAME = "grader.toml"  # the instructor's config, in the bundle's source/ folder
SCRIPTS = {"setup.sh": "gradescope_setup.sh", "run_autograder": "gradescope_run_autograder"}


def main(argv: list[str]) -> int:
    p = arguments.Parser(prog="python -m grader gradescope-bundle", description=__doc__)
    p.add_argument("out", metavar="OUT.zip")
    p.add_argument("--lang", choices=("en", "ja"),
                   help="language of the results students see (default: from the locale)")
    p.add_argument("--timeout", type=positive_number, default=isolated.DEFAULT_LIMIT,
                   metavar="SECONDS",
                   help="wall-clock limit per submission (default: %(default)g)")
    p.add_argument("--config", metavar="PATH",
                   help="the instructor's config file (detail, visibility): graded with it")
    p.add_argument("--allow-starter-code", action="store_true", help=STARTER_HELP)
    args = p.parse_command(argv)
    if isinstance(args, int):  # --help, or a bad argument
        return args
    lang = args.lang or default_lang()
    try:
        if args.config is not None:
            # refused now, not at grading time
            configs.load(args.config, set(all_checks()), check_families())
        bundle(Path(args.out), lang=lang, timeout=args.timeout,
               config=Path(args.config) if args.config else None,
               allow_starter_code=args.allow_starter_code)
    except configs.ConfigError as exc:
        print(f"grader: {exc}", file=sys.stderr)
        return 2
    except distribution.DistributionError as exc:
        print(f"grader: {exc}", file=sys.stderr)
        return 2
    note = isolated.class_note(lang)
    if note:
        print(f"grader: {note}", file=sys.stderr)
    print(text("instructor.bundle-written", lang, path=args.out))
    return 0


def bundle(out: Path, *, lang: str = "en", timeout: float = isolated.DEFAULT_LIMIT,
           root: Path = distribution.REPO_ROOT, config: Path | None = None,
           allow_starter_code: bool = False) -> None:
    """The zip Gradescope takes; with `config`, it grades with that config file (its detail
    level and visibilities), as `python -m grader --config` does."""
    with tempfile.TemporaryDirectory(prefix="leaselab-bundle-") as tmp:
        tree = Path(tmp)
        build_grading_copy(tree, root, allow_starter_code=allow_starter_code)
        if config is not None:
            shutil.copyfile(config, tree / CONFIG_NAME)
        out.parent.mkdir(parents=True, exist_ok=True)
        with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as zf:
            for name, source in scripts(lang, timeout).items():
                info = zipfile.ZipInfo(name, date_time=(2020, 1, 1, 0, 0, 0))
                info.external_attr = 0o100755 << 16  # executable, for Gradescope and unzip
                info.compress_type = zipfile.ZIP_DEFLATED
                zf.writestr(info, source)
            for path in sorted(tree.rglob("*")):
                if path.is_file():
                    zf.write(path, path.relative_to(tree).as_posix())


def scripts(lang: str, timeout: float) -> dict[str, str]:
    env = jinja2.Environment(loader=jinja2.FileSystemLoader(TEMPLATES),
                             keep_trailing_newline=True)
    fallback = results_json.serialise(results_json.fallback(lang), one_line=True)
    params = {"lang": lang, "timeout": f"{timeout:g}", "fallback": shlex.quote(fallback)}
    return {name: env.get_template(template).render(**params)
            for name, template in SCRIPTS.items()}
