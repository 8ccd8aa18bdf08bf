"""The folders are the architecture (grader/__init__.py): an import only goes down the layers,
`harness` and `report` never import each other, and nothing outside grader/instructor/ imports
from it, so the student copy (which leaves that folder out) works without it.

Every import statement is read from the source, those inside functions included."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
GRADER = ROOT / "grader"

#: Layer of each top-level module or package of the grader; a module may import only from a
#: lower layer or from its own package.
LAYERS = {
    "grader.results": 0, "grader.config": 0, "grader.checkdef": 0, "grader.arguments": 0,
    "grader.commands": 0,
    "grader.harness": 1, "grader.report": 1,
    "grader.checks": 2,
    "grader.runner": 3,
    "grader.quiz": 4, "grader.instructor": 4, "grader.plugin": 4,
    "grader.cli": 5, "grader.__main__": 6, "grader.watch": 6,
}


def module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def unit(module: str) -> str | None:
    """The layered unit a grader module belongs to: grader.report.html -> grader.report."""
    parts = module.split(".")
    return ".".join(parts[:2]) if parts[0] == "grader" and len(parts) > 1 else None


def imports(path: Path) -> list[tuple[int, str]]:
    """(line, absolute module) for every import in the file."""
    module = module_name(path)
    package = module if path.name == "__init__.py" else module.rsplit(".", 1)[0]
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - (node.level - 1)]
                source = ".".join(base + ([node.module] if node.module else []))
            else:
                source = node.module or ""
            found.append((node.lineno, source))
            # `from grader import report` names a unit through its parent package
            found += [(node.lineno, f"{source}.{alias.name}") for alias in node.names
                      if source == "grader"]
    return found


GRADER_FILES = sorted(GRADER.rglob("*.py"))


def test_every_grader_module_belongs_to_a_layer():
    units = {unit(module_name(p)) for p in GRADER_FILES} - {None}
    assert units <= set(LAYERS), f"no layer for: {units - set(LAYERS)} (add it to LAYERS " \
                                 "and to the list in grader/__init__.py)"


@pytest.mark.parametrize("path", GRADER_FILES, ids=lambda p: p.relative_to(ROOT).as_posix())
def test_imports_only_go_down(path):
    own = unit(module_name(path))
    if own is None:
        return
    wrong = []
    for line, target in imports(path):
        other = unit(target)
        if other is None or other == own or other not in LAYERS:
            continue
        if LAYERS[other] >= LAYERS[own]:
            wrong.append(f"{path.relative_to(ROOT)}:{line} imports {target} "
                         f"(layer {LAYERS[other]} from layer {LAYERS[own]})")
    assert not wrong, "\n".join(wrong)


def test_nothing_outside_instructor_imports_it():
    found = [f"{p.relative_to(ROOT)}:{line} imports {target}"
             for p in GRADER_FILES if unit(module_name(p)) != "grader.instructor"
             for line, target in imports(p)
             if target == "grader.instructor" or target.startswith("grader.instructor.")]
    assert found == []


def test_the_rule_catches_a_lower_layer_importing_a_higher_one(tmp_path, monkeypatch):
    # The test above must be able to fail: a report module importing the harness is caught.
    fake = GRADER / "report" / "_layer_probe.py"
    monkeypatch.setattr(Path, "read_text", lambda self, encoding=None: (
        "from grader.harness import scenario\nfrom ..checks import steps\n"
        if self == fake else Path.read_bytes(self).decode(encoding or "utf-8")))
    with pytest.raises(AssertionError, match="imports grader.harness.*\n.*imports grader.checks"):
        test_imports_only_go_down(fake)
