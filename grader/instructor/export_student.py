"""`python -m grader export-student DIR [--force]`: write the repository students get.

DIR receives the student copy described in grader.instructor.distribution (stubs, store, grader, lesson,
the contract in docs/contract.md),
a README generated from templates/student_README.md (the contract of the three functions from
the stubs' docstrings, the check catalogue from the registry), and the GitHub Actions workflow
`.github/workflows/grade.yml` (plain GitHub Actions: it grades every push, shows the summary on
the run's page and keeps results.json; no other service is needed). Refuses a non-empty DIR unless --force, a lab/queue.py that is not
the stubs unless --allow-starter-code, and any copy that would import solutions/ or tests/.
Exit status 0 written, 2 refused.
"""

from __future__ import annotations

import ast
import shutil
import sys
import tempfile
from pathlib import Path

from grader import arguments
import jinja2

from . import distribution
from grader.checkdef import all_checks as declared_checks
from grader.report.messages import default_lang, text

TEMPLATES = Path(__file__).with_name("templates")
WORKFLOW = TEMPLATES / "github_workflow.yml"
WORKFLOW_PATH = ".github/workflows/grade.yml"
#: The editor's test explorer runs the checks (pyproject.toml's pytest section says which), with
#: the copy's own environment: the .venv the README's first command makes (VS Code's Python
#: extension takes defaultInterpreterPath until another interpreter is chosen; on Windows it
#: finds .venv\Scripts\python.exe in the workspace by itself).
EDITOR_SETTINGS = {".vscode/settings.json": (
    '{\n  "python.defaultInterpreterPath": "${workspaceFolder}/.venv/bin/python",\n'
    '  "python.terminal.activateEnvironment": true,\n'
    '  "python.testing.pytestEnabled": true,\n'
    '  "python.testing.unittestEnabled": false\n}\n')}


def main(argv: list[str]) -> int:
    p = arguments.Parser(prog="python -m grader export-student", description=__doc__)
    p.add_argument("dir", metavar="DIR")
    p.add_argument("--force", action="store_true", help="write into a non-empty DIR")
    p.add_argument("--allow-starter-code", action="store_true", help=STARTER_HELP)
    p.add_argument("--lang", choices=("en", "ja"), help="language of messages")
    p.add_argument("--without-model", action="store_true",
                   help="leave the contract's model (and the random-timelines check played "
                        "against it) out of the copy: it then runs only where grades are "
                        "recorded (Gradescope, Classroom 50, batch)")
    args = p.parse_command(argv)
    if isinstance(args, int):  # --help, or a bad argument
        return args
    lang = args.lang or default_lang()
    dest = Path(args.dir)
    if refused_not_empty(dest, args.force, lang):
        return 2
    try:
        export(dest, allow_starter_code=args.allow_starter_code,
               with_model=not args.without_model)
    except distribution.DistributionError as exc:
        print(f"grader: {exc}", file=sys.stderr)
        return 2
    print(text("instructor.export-written", lang, dir=dest))
    return 0


def refused_not_empty(dest: Path, force: bool, lang: str) -> bool:
    """True (and one line on stderr) when `dest` holds files and `force` was not given: a
    command that writes a folder never mixes its files into somebody else's."""
    if dest.exists() and any(dest.iterdir()) and not force:
        print(text("instructor.export-not-empty", lang, dir=dest), file=sys.stderr)
        return True
    return False


def export(dest: Path, *, allow_starter_code: bool = False, with_model: bool = True,
           root: Path = distribution.REPO_ROOT) -> None:
    """Build the student repository in a temporary folder, check it, then copy it into dest."""
    with tempfile.TemporaryDirectory(prefix="leaselab-export-") as tmp:
        build(Path(tmp), root, allow_starter_code=allow_starter_code, with_model=with_model)
        shutil.copytree(tmp, dest, dirs_exist_ok=True)


def build(tree: Path, root: Path = distribution.REPO_ROOT, *,
          allow_starter_code: bool = False, with_model: bool = True) -> None:
    """Write the student repository's files under `tree` (an empty folder) and check them:
    also the source inside the Gradescope bundle. Raises DistributionError."""
    if not (root / "pyproject.toml").is_file():
        raise distribution.DistributionError(
            f"{root} is not a source checkout of the lab (no pyproject.toml)")
    if not allow_starter_code and not distribution.is_stub(root / "lab" / "queue.py"):
        raise distribution.DistributionError(
            "lab/queue.py is not the stubs (a function does more than raise "
            "NotImplementedError): is a solution in it? Use --allow-starter-code if intended.")
    distribution.copy_tree(tree, root, with_model)
    (tree / "README.md").write_text(readme(root), encoding="utf-8")
    (tree / WORKFLOW_PATH).parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(WORKFLOW, tree / WORKFLOW_PATH)
    for rel, content in EDITOR_SETTINGS.items():
        (tree / rel).parent.mkdir(parents=True, exist_ok=True)
        (tree / rel).write_text(content, encoding="utf-8")
    leaks = distribution.forbidden_imports(tree)
    if leaks:
        raise distribution.DistributionError(
            text("instructor.export-leak", "en", found="; ".join(leaks)))


STARTER_HELP = "build from a lab/queue.py that is not only stubs (the lab's starter code)"


def build_grading_copy(tree: Path, root: Path = distribution.REPO_ROOT, *,
                       allow_starter_code: bool = False) -> None:
    """The source an autograder grades with (Gradescope's zip, Classroom 50's bundle folder): the
    student copy plus grader/instructor/ (the entry points and the isolation), without the
    student repository's own .github/ and .gitignore. Raises DistributionError."""
    build(tree, root, allow_starter_code=allow_starter_code)
    for rel, src in distribution.instructor_files(root).items():
        (tree / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(src, tree / rel)
    shutil.rmtree(tree / ".github", ignore_errors=True)
    (tree / ".gitignore").unlink(missing_ok=True)


def readme(root: Path = distribution.REPO_ROOT) -> str:
    checks = [{"id": c.id, "points": c.points, "title_en": text(f"check.{c.id}.title", "en"),
               "title_ja": text(f"check.{c.id}.title", "ja")} for c in declared_checks().values()]
    env = jinja2.Environment(loader=jinja2.FileSystemLoader(TEMPLATES), trim_blocks=True,
                             lstrip_blocks=True, keep_trailing_newline=True)
    return env.get_template("student_README.md").render(
        functions=stub_contracts(root / "lab" / "queue.py"),
        store=public_names(root / "lab" / "store.py"),
        checks=checks,
        total=sum(c["points"] for c in checks),
        lessons=[f"docs/{p.name}" for p in sorted((root / "docs").glob("lesson*.md"))],
    )


def public_names(module: Path) -> list[str]:
    """The public functions and classes a module defines (read, not imported)."""
    return [node.name for node in ast.parse(module.read_text(encoding="utf-8")).body
            if isinstance(node, (ast.FunctionDef, ast.ClassDef)) and not node.name.startswith("_")]


def stub_contracts(queue_py: Path) -> list[dict]:
    """Signature and docstring of each function in the stubs (read, not imported)."""
    source = queue_py.read_text(encoding="utf-8")
    contracts = []
    for node in ast.parse(source).body:
        if isinstance(node, ast.FunctionDef) and not node.name.startswith("_"):
            args = ", ".join(a.arg for a in node.args.args)
            returns = f" -> {ast.unparse(node.returns)}" if node.returns else ""
            contracts.append({"signature": f"{node.name}({args}){returns}",
                              "doc": ast.get_docstring(node) or ""})
    return contracts
