"""`python -m grader classroom50 OUT_DIR [--lang en|ja] [--timeout S] [-k EXPR] [--force]`: the
Classroom 50 autograder, a folder to put into CLASSROOM/autograders/ASSIGNMENT/.

OUT_DIR receives `autograder.py` (standard library only, rendered from
templates/classroom50_autograder.py.j2), `requirements.txt` (the grader's dependencies, from
pyproject.toml) and `leaselab/`, the source the Gradescope bundle also carries (the student copy
plus grader/instructor/). Classroom 50 bundles every file of that folder beside autograder.py,
out of the students' reach, so the grade is made by this copy of the grader and not by the one in
the student's checkout. The grading itself is grader.instructor.classroom50_autograder; the
mapping to Classroom 50's result.json is grader.report.classroom50. Exit 0 written, 2 refused.
"""

from __future__ import annotations

import re
import shutil
import sys
import tempfile
from pathlib import Path

from grader import arguments
import jinja2

from . import distribution, isolated
from grader.arguments import positive_number
from grader import config as configs
from grader.checkdef import all_checks, check_families
from grader.config import toml
from .export_student import STARTER_HELP, TEMPLATES, build_grading_copy, refused_not_empty
from grader.report.messages import default_lang, text

TEMPLATE = "classroom50_autograder.py.j2"
SOURCE_DIR = "leaselab"

#: The instructor's config file, in the bundle's leaselab/ folder (out of students' reach).
CONFIG_NAME = "grader.toml"


def parser() -> arguments.Parser:
    p = arguments.Parser(prog="python -m grader classroom50",
                         description="Write a Classroom 50 autograder folder.")
    p.add_argument("out", metavar="OUT_DIR",
                   help="the folder to write, e.g. CLASSROOM/autograders/ASSIGNMENT")
    p.add_argument("--lang", choices=("en", "ja"),
                   help="language of the results students see (default: from the locale)")
    p.add_argument("--timeout", type=positive_number, default=isolated.DEFAULT_LIMIT,
                   metavar="SECONDS", help="wall-clock limit per grade (default: %(default)g)")
    p.add_argument("-k", dest="select", metavar="EXPR",
                   help="grade only the checks matching EXPR (an assignment on part of the lab)")
    p.add_argument("--force", action="store_true",
                   help="write into a non-empty OUT_DIR (its leaselab/ is replaced)")
    p.add_argument("--allow-starter-code", action="store_true", help=STARTER_HELP)
    p.add_argument("--config", metavar="PATH",
                   help="the instructor's config file (what students see of each check): "
                        "graded with it")
    return p


def main(argv: list[str]) -> int:
    args = parser().parse_command(argv)
    if isinstance(args, int):  # --help, or a bad argument
        return args
    lang = args.lang or default_lang()
    out = Path(args.out)
    if refused_not_empty(out, args.force, lang):
        return 2
    try:
        if args.config is not None:  # refused now, not at grading time
            configs.load(args.config, set(all_checks()), check_families())
        write(out, lang=lang, timeout=args.timeout, select=args.select,
              allow_starter_code=args.allow_starter_code,
              config=Path(args.config) if args.config else None)
    except (distribution.DistributionError, configs.ConfigError) as exc:
        print(f"grader: {exc}", file=sys.stderr)
        return 2
    note = isolated.class_note(lang)
    if note:
        print(f"grader: {note}", file=sys.stderr)
    print(text("instructor.classroom50-written", lang, dir=out))
    return 0


def write(out: Path, *, lang: str = "en", timeout: float = isolated.DEFAULT_LIMIT,
          select: str | None = None, root: Path = distribution.REPO_ROOT,
          allow_starter_code: bool = False, config: Path | None = None) -> None:
    """Build the folder in a temporary one, then copy it into `out` (an earlier leaselab/ is
    replaced whole, so no file of an older grader stays behind)."""
    with tempfile.TemporaryDirectory(prefix="leaselab-classroom50-") as tmp:
        tree = Path(tmp)
        build_grading_copy(tree / SOURCE_DIR, root, allow_starter_code=allow_starter_code)
        (tree / "requirements.txt").write_text(requirements(root), encoding="utf-8")
        (tree / "autograder.py").write_text(autograder_py(lang, timeout, select,
                                                          config is not None),
                                            encoding="utf-8")
        if config is not None:  # graded with it, from the folder students cannot reach
            shutil.copyfile(config, tree / SOURCE_DIR / CONFIG_NAME)
        (tree / "autograder.py").chmod(0o755)
        shutil.rmtree(out / SOURCE_DIR, ignore_errors=True)
        shutil.copytree(tree, out, dirs_exist_ok=True)


#: Dependencies of the pytest path only (grader.plugin): a recorded grade never runs pytest.
PYTEST_ONLY = re.compile(r"^(pytest|pytest-json-report)\s*([<>=!~;\[]|$)")


def requirements(root: Path = distribution.REPO_ROOT) -> str:
    """What a grade needs installed: the grader's run-time dependencies (pyproject's
    [project].dependencies) but those of the pytest path, one a line."""
    project = toml().loads((root / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    return "".join(f"{dependency}\n" for dependency in project["dependencies"]
                   if not PYTEST_ONLY.match(dependency))


def autograder_py(lang: str, timeout: float, select: str | None, config: bool = False) -> str:
    env = jinja2.Environment(loader=jinja2.FileSystemLoader(TEMPLATES),
                             keep_trailing_newline=True)
    return env.get_template(TEMPLATE).render(
        lang=lang, lang_literal=repr(lang), timeout=f"{timeout:g}",
        timeout_literal=repr(f"{timeout:g}"), source_dir=repr(SOURCE_DIR),
        select_args=f", \"-k\", {select!r}" if select else "",
        config_args=(f", \"--config\", str(SOURCE / {CONFIG_NAME!r})" if config else ""))
