"""What a student copy of the lab holds, and the checks that it holds nothing it must not.

The student copy (written by `export-student`) is: lab/ (the stubs and the provided store),
grader/ without the instructor package (grader/instructor/, this folder: batch grading, the
Gradescope bundle, the export itself), pyproject.toml without the solutions package, the lesson
(docs/lesson*.md), the contract and the check catalogue (docs/contract.md, STUDENT_DOCS) and
.gitignore. The Gradescope bundle's source is the student copy plus grader/instructor/ (its
autograder entry grades in isolation). Never: solutions/, tests/ (the mutant catalogue), bench/,
the instructors' and the contributors' pages (docs/instructors.md, docs/DEVELOPING.md,
docs/protocol.md), the repository's README.md (the export writes a README of its own).
"""

from __future__ import annotations

import ast
import json
import fnmatch
import re
import shutil
from pathlib import Path

from grader import config
from grader.checkdef import WITHHELD_FILE, all_checks

REPO_ROOT = Path(__file__).resolve().parents[2]
#: The package only an instructor runs: left out of the student copy as a whole folder.
INSTRUCTOR_PACKAGE = "grader/instructor"

SKIPPED = ("__pycache__", "*.pyc", "*.pyo", ".*")
#: The pages of docs/ that students get besides the lessons: each links only to what they get.
STUDENT_DOCS = ("docs/contract.md",)
#: Top-level modules a student copy must never import.
FORBIDDEN_IMPORTS = ("solutions", "tests", "bench")


class DistributionError(Exception):
    pass


#: What `export-student --without-model` leaves out: the contract's model and the check played
#: against it (random timelines), so that students cannot read the model; that check then runs
#: only where grades are recorded (the Gradescope bundle and Classroom 50 carry it).
MODEL_FILES = ("grader/checks/model.py", "grader/checks/generate.py", "grader/checks/shrink.py",
               "grader/checks/timelines.py", "grader/checks/timeline_db.py",
               "grader/checks/test_differential.py")
MODEL_CHECKS_MODULE = "grader.checks.test_differential"


def student_files(root: Path = REPO_ROOT, with_model: bool = True) -> dict[str, Path]:
    """Relative path in the student copy -> source file, for every file copied as is."""
    files: dict[str, Path] = {}
    for package in ("lab", "grader"):
        for path in sorted((root / package).rglob("*")):
            rel = path.relative_to(root / package).as_posix()
            if not path.is_file() or _skipped(path.relative_to(root)):
                continue
            if f"{package}/{rel}".startswith(INSTRUCTOR_PACKAGE + "/"):
                continue
            if not with_model and f"{package}/{rel}" in MODEL_FILES:
                continue
            files[f"{package}/{rel}"] = path
    for path in sorted((root / "docs").glob("lesson*.md")):
        files[f"docs/{path.name}"] = path
    for rel in STUDENT_DOCS:
        if not (root / rel).is_file():
            raise DistributionError(f"{rel} is missing: the student copy's README links to it")
        files[rel] = root / rel
    files[".gitignore"] = root / ".gitignore"
    return files


def instructor_files(root: Path = REPO_ROOT) -> dict[str, Path]:
    """Relative path -> source file for grader/instructor/ (the bundle's autograder needs it)."""
    folder = root / INSTRUCTOR_PACKAGE
    return {path.relative_to(root).as_posix(): path for path in sorted(folder.rglob("*"))
            if path.is_file() and not _skipped(path.relative_to(root))}


#: The student copy's pytest configuration: `python -m pytest`, and an editor's test explorer
#: (VS Code, PyCharm), run the lab's checks against lab/queue.py (grader.plugin).
STUDENT_PYTEST = """[tool.pytest.ini_options]
# `python -m pytest` (and your editor's test explorer) runs the lab's checks on lab/queue.py,
# with the same verdicts and failure texts as `python -m grader`: -k CHECK-ID runs one check,
# --lf the ones that failed last time, --impl FILE grades another file.
testpaths = ["grader/checks"]
"""


def student_pyproject(text: str) -> str:
    """The project's pyproject.toml with the solutions package left out of the distribution
    and the student's pytest configuration (STUDENT_PYTEST) in place of the project's."""
    new = re.sub(r'"solutions\*"\s*,\s*|,\s*"solutions\*"', "", text)
    new, count = re.subn(r"(?ms)^\[tool\.pytest\.ini_options\]\n.*?(?=^\[|\Z)", "", new)
    if count != 1:
        raise DistributionError("cannot replace [tool.pytest.ini_options] in pyproject.toml")
    new = new.rstrip("\n") + "\n\n" + STUDENT_PYTEST
    found = config.toml().loads(new)["tool"]["setuptools"]["packages"]["find"]["include"]
    if any(p.startswith("solutions") for p in found) or "lab*" not in found:
        raise DistributionError(f"cannot drop solutions from packages.find: {found}")
    return new


def copy_tree(dest: Path, root: Path = REPO_ROOT, with_model: bool = True) -> list[str]:
    """Write the student copy's plain files and pyproject.toml under `dest`; return them.
    Without the model, the checks left out are listed in grader/checks/withheld.json, so the
    copy's reports say what did not run and where it does."""
    files = student_files(root, with_model)
    for rel, src in files.items():
        (dest / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(src, dest / rel)
    (dest / "pyproject.toml").write_text(
        student_pyproject((root / "pyproject.toml").read_text(encoding="utf-8")),
        encoding="utf-8")
    written = [*files, "pyproject.toml"]
    if not with_model:
        withheld = [{"id": c.id, "points": c.points} for c in all_checks().values()
                    if c.module == MODEL_CHECKS_MODULE]
        (dest / WITHHELD_FILE).write_text(json.dumps(withheld) + "\n", encoding="utf-8")
        written.append(WITHHELD_FILE)
    return written


def forbidden_imports(tree: Path, strict: bool = True) -> list[str]:
    """`file: module` for every import of solutions/tests/bench in the .py files under `tree`
    (import statements and importlib.import_module("...") with a literal name). `strict`:
    a file that does not parse is an error, else it is skipped (a student's syntax error)."""
    found = []
    for path in sorted(tree.rglob("*.py")):
        try:
            parsed = ast.parse(path.read_text(encoding="utf-8", errors="replace"))
        except (SyntaxError, ValueError, RecursionError, MemoryError):  # nested too deeply
            if strict:
                raise
            continue
        for name in _imported_names(parsed):
            if name.split(".")[0] in FORBIDDEN_IMPORTS:
                found.append(f"{path.relative_to(tree).as_posix()}: {name}")
    return found


def is_stub(queue_py: Path) -> bool:
    """Every top-level function of `queue_py` only raises NotImplementedError (after its
    docstring): the file is the stubs, not somebody's solution."""
    tree = ast.parse(queue_py.read_text(encoding="utf-8"))
    functions = [n for n in tree.body if isinstance(n, ast.FunctionDef)]
    return bool(functions) and all(_only_raises_not_implemented(f) for f in functions)


def _only_raises_not_implemented(function: ast.FunctionDef) -> bool:
    body = function.body
    if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
        body = body[1:]
    if len(body) != 1 or not isinstance(body[0], ast.Raise) or body[0].exc is None:
        return False
    exc = body[0].exc.func if isinstance(body[0].exc, ast.Call) else body[0].exc
    return isinstance(exc, ast.Name) and exc.id == "NotImplementedError"


def _imported_names(tree: ast.AST):
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            yield from (alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            yield node.module
        elif (isinstance(node, ast.Call) and getattr(node.func, "attr", getattr(node.func, "id", ""))
              == "import_module" and node.args and isinstance(node.args[0], ast.Constant)
              and isinstance(node.args[0].value, str)):
            yield node.args[0].value


def _skipped(rel: Path) -> bool:
    return any(fnmatch.fnmatch(part, p) for part in rel.parts for p in SKIPPED)
