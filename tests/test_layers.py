"""The folders are the architecture (grader/__init__.py): an import only goes down the layers,
`harness` and `report` never import each other, and nothing outside grader/instructor/ imports
from it, so the student copy (which leaves that folder out) works without it. Each package
imports only what its docstring's "May import" says (PACKAGE_IMPORTS, which the docstrings are
checked against), and inside packages: the target process's modules import no module of the
judge's, and only the pytest plugin imports pytest. No module uses another module's underscore
names: what is shared has a public name. No two grader modules import each other, directly or
through others: an import goes one way. A name is imported from the module that defines it,
never through another that only imports it (no module is a second door to another's names), and
no module is over MAX_LINES lines (a larger one is split along a seam).

Every import statement is read from the source, those inside functions included."""

from __future__ import annotations

import ast
import re
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
            # `from grader import report`, `from . import wire` name modules through their
            # package
            found += [(node.lineno, f"{source}.{alias.name}") for alias in node.names
                      if source == "grader" or is_module(f"{source}.{alias.name}")]
    return found


def is_module(name: str) -> bool:
    """Whether `name` is a module or package of this repository (grader.harness.wire)."""
    base = ROOT.joinpath(*name.split("."))
    return base.with_suffix(".py").is_file() or (base / "__init__.py").is_file()


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


# -- what each package may import, as its docstring says -------------------------------------------
#: The top-level basics every package may import (layer 0).
BASICS = frozenset(unit for unit, layer in LAYERS.items() if layer == 0)
#: The grader units each package may import besides its own modules and BASICS, as its
#: `__init__` docstring's "May import" says (the layers allow more: a lower layer is not always a
#: dependency); `lab` and the standard library are not the grader's. grader.instructor may import
#: anything in the grader.
PACKAGE_IMPORTS = {
    "grader.harness": set(),
    "grader.report": set(),
    "grader.checks": {"grader.harness"},
    "grader.runner": {"grader.checks", "grader.harness"},
    "grader.quiz": {"grader.harness", "grader.report"},
    "grader.plugin": {"grader.runner", "grader.report", "grader.harness"},
}


def package_docstring(unit_name: str) -> str:
    path = ROOT.joinpath(*unit_name.split(".")) / "__init__.py"
    return ast.get_docstring(ast.parse(path.read_text(encoding="utf-8"))) or ""


@pytest.mark.parametrize("package", sorted(PACKAGE_IMPORTS))
def test_a_package_imports_only_what_its_docstring_says(package):
    allowed = PACKAGE_IMPORTS[package] | BASICS | {package}
    wrong = [f"{p.relative_to(ROOT)}:{line} imports {target}"
             for p in GRADER_FILES if unit(module_name(p)) == package
             for line, target in imports(p)
             if unit(target) in LAYERS and unit(target) not in allowed]
    assert not wrong, "\n".join(wrong)


@pytest.mark.parametrize("package", sorted(PACKAGE_IMPORTS))
def test_the_docstring_says_what_the_package_may_import(package):
    """Its "May import:" names every grader package it may import; what follows "Never" names
    none of them."""
    doc = " ".join(package_docstring(package).split())
    assert "May import:" in doc, f"{package}: no 'May import:' in its docstring"
    may = doc.split("May import:", 1)[1]
    may, never = may.split("Never", 1) if "Never" in may else (may, "")
    for other in PACKAGE_IMPORTS[package]:
        assert other in may or f"`{other}`" in may, f"{package}'s docstring: may import {other}?"
    named = {u for u in LAYERS if re.search(rf"\b{re.escape(u)}\b", never)}
    assert not named & PACKAGE_IMPORTS[package], f"{package}: never and may {named}"


# -- inside packages ----------------------------------------------------------------------------------
#: The harness's sides (grader/harness/__init__.py): each may import, inside the harness, only
#: these sides besides its own. `target` runs beside the code under grade and is believed in
#: nothing; `judge` decides; they meet only on `wire`, and both stand on `processes`.
SIDES = {
    "grader.harness.target": {"grader.harness.wire", "grader.harness.processes"},
    "grader.harness.judge": {"grader.harness.wire", "grader.harness.processes"},
    "grader.harness.processes": set(),
    "grader.harness.wire": set(),
}


def side(module: str) -> str | None:
    """The side of the harness a module is on: grader.harness.judge.dbhost -> grader.harness.judge."""
    parts = module.split(".")
    return ".".join(parts[:3]) if parts[:2] == ["grader", "harness"] and len(parts) > 2 else None


def test_every_harness_module_is_on_a_side():
    loose = [module_name(p) for p in GRADER_FILES
             if module_name(p).startswith("grader.harness.") and side(module_name(p)) not in SIDES]
    assert not loose, f"on no side of the harness: {loose} (grader/harness/__init__.py)"


@pytest.mark.parametrize("package", sorted(SIDES))
def test_a_side_of_the_harness_imports_only_what_it_may(package):
    allowed = SIDES[package] | {package}
    wrong = [f"{module_name(p)}:{line} imports {target}"
             for p in GRADER_FILES if side(module_name(p)) == package
             for line, target in imports(p)
             if side(target) is not None and side(target) not in allowed]
    assert not wrong, "\n".join(wrong)


@pytest.mark.parametrize("package", sorted(SIDES))
def test_a_side_says_what_it_may_import(package):
    doc = " ".join(package_docstring(package).split())
    assert "May import:" in doc, f"{package}: no 'May import:' in its docstring"
    may = doc.split("May import:", 1)[1]
    may, never = may.split("Never", 1) if "Never" in may else (may, "")
    for other in SIDES[package]:
        assert f"`{other}`" in may, f"{package}'s docstring: may import {other}?"
    for other in set(SIDES) - SIDES[package] - {package, "grader.harness.wire"}:
        assert f"`{other}`" in never, f"{package}'s docstring: never {other}?"


def test_the_target_side_imports_nothing_of_the_judge():
    """The target process's modules, and the zygote's (which forks target servers from its own
    state), import the wire, the process machinery and the grader's basics only."""
    wrong = [f"{module_name(p)}:{line} imports {target}"
             for p in GRADER_FILES if side(module_name(p)) == "grader.harness.target"
             for line, target in imports(p)
             if target.startswith("grader.") and target != "grader.harness"
             and unit(target) not in BASICS
             and side(target) not in {"grader.harness.target", "grader.harness.wire",
                                      "grader.harness.processes"}]
    assert not wrong, "\n".join(wrong)


def test_only_the_pytest_plugin_imports_pytest_and_only_pytest_imports_it():
    """A grade, and `python -m grader report`, never import pytest (grader/plugin/__init__.py)."""
    plugin = "grader.plugin.pytest_plugin"
    wrong = [f"{p.relative_to(ROOT)}:{line} imports {target}"
             for p in GRADER_FILES if module_name(p) != plugin
             for line, target in imports(p)
             if target.split(".")[0] in ("pytest", "_pytest") or target == plugin]
    assert not wrong, "\n".join(wrong)


# -- no import cycles ---------------------------------------------------------------------------------
def import_graph(files) -> dict[str, set[str]]:
    """Each grader module -> the grader modules it imports (a package's `__init__` counts as a
    module; a module's own packages, which importing it imports anyway, are left out)."""
    graph = {}
    for path in files:
        module = module_name(path)
        graph[module] = {target for _, target in imports(path)
                         if target.split(".")[0] == "grader" and is_module(target)
                         and target != module and not module.startswith(target + ".")}
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return sorted(found)


def test_no_import_cycle_between_grader_modules():
    """An import goes one way: no two grader modules import each other, directly or through
    others, not even from inside a function (a deferred import hides a circle, it does not
    remove it)."""
    graph = import_graph(GRADER_FILES)
    found = cycles(graph)
    assert not found, "\n".join(
        " <-> ".join(c) + ": " + "; ".join(f"{a} imports {b}" for a in c
                                            for b in sorted(graph[a] & set(c)))
        for c in found)


def test_the_cycle_rule_finds_a_circle_through_a_third_module():
    graph = {"grader.a": {"grader.b"}, "grader.b": {"grader.c"}, "grader.c": {"grader.a"},
             "grader.d": {"grader.a"}, "grader.e": {"grader.e"}}
    assert cycles(graph) == [["grader.a", "grader.b", "grader.c"]]


# -- no module uses another module's underscore names --------------------------------------------------
def grader_names(path: Path) -> tuple[list[tuple[int, str, str]], list[tuple[int, str, str]]]:
    """What `path` takes from grader modules: (line, module, name) for each name a
    `from grader.x import name` takes that is not a module itself, and for each `x.name` read on
    a name an import bound to a grader module (`import grader.x as x`, `from grader import x`)."""
    module = module_name(path)
    package = module if path.name == "__init__.py" else module.rsplit(".", 1)[0]
    tree = ast.parse(path.read_text(encoding="utf-8"))
    bound: dict[str, str] = {}  # a local name -> the grader module it is
    imported, used = [], []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.startswith("grader"):
                    bound[alias.asname or alias.name.split(".")[0]] = (
                        alias.name if alias.asname else alias.name.split(".")[0])
        elif isinstance(node, ast.ImportFrom):
            source = node.module or ""
            if node.level:
                base = package.split(".")[: len(package.split(".")) - (node.level - 1)]
                source = ".".join(base + ([node.module] if node.module else []))
            if not source.startswith("grader"):
                continue
            for alias in node.names:
                if is_module(f"{source}.{alias.name}"):
                    bound[alias.asname or alias.name] = f"{source}.{alias.name}"
                else:
                    imported.append((node.lineno, source, alias.name))
    for node in ast.walk(tree):
        if (isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name)
                and node.value.id in bound):
            used.append((node.lineno, bound[node.value.id], node.attr))
    return imported, used


def private_uses(path: Path) -> list[str]:
    """Where `path` takes an underscore name (not a dunder) from another grader module:
    `from grader.x import _y`, or `x._y` on a name an import bound to a grader module."""
    module = module_name(path)
    imported, used = grader_names(path)

    def private(name: str) -> bool:
        return name.startswith("_") and not name.startswith("__")

    where = path.relative_to(ROOT)
    return ([f"{where}:{line} imports {name} from {source}"
             for line, source, name in imported if private(name) and source != module]
            + [f"{where}:{line} uses {source}.{name}"
               for line, source, name in used if private(name) and source != module])


@pytest.mark.parametrize("path", GRADER_FILES, ids=lambda p: p.relative_to(ROOT).as_posix())
def test_no_module_uses_another_modules_underscore_names(path):
    found = private_uses(path)
    assert not found, "\n".join(found) + "\n(give it a public name, or move it where it belongs)"


def test_the_rules_catch_an_underscore_name_and_the_judge_in_the_target_process(monkeypatch):
    # The tests above must be able to fail.
    fake = GRADER / "harness" / "target" / "dbproxy.py"
    source = ("from grader.harness.processes.zygote import _answer\n"
              "from grader.harness.judge import dbhost\n"
              "dbhost._forked = True\nimport pytest\n")
    monkeypatch.setattr(Path, "read_text", lambda self, encoding=None: (
        source if self == fake else Path.read_bytes(self).decode(encoding or "utf-8")))
    assert private_uses(fake) == ["grader/harness/target/dbproxy.py:1 imports _answer from "
                                  "grader.harness.processes.zygote",
                                  "grader/harness/target/dbproxy.py:3 uses "
                                  "grader.harness.judge.dbhost._forked"]
    with pytest.raises(AssertionError, match="imports grader.harness.judge.dbhost"):
        test_the_target_side_imports_nothing_of_the_judge()
    with pytest.raises(AssertionError, match="imports grader.harness.judge"):
        test_a_side_of_the_harness_imports_only_what_it_may("grader.harness.target")
    with pytest.raises(AssertionError, match="dbproxy.py:4 imports pytest"):
        test_only_the_pytest_plugin_imports_pytest_and_only_pytest_imports_it()


# -- a name comes from the module that defines it; no module over MAX_LINES ---------------------------
#: The most lines a grader module may have: a larger one is split along a seam, not by count.
MAX_LINES = 600


def defined_names(path: Path) -> set[str]:
    """The names a module defines at its top level (def, class, assignment; inside a top-level
    if or try too), not those it imports."""
    names: set[str] = set()

    def walk(body) -> None:
        for node in body:
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                names.add(node.name)
            elif isinstance(node, (ast.Assign, ast.AnnAssign)):
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                names.update(n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name))
            elif isinstance(node, (ast.If, ast.Try)):
                walk(node.body)
                walk(node.orelse)
                walk(getattr(node, "finalbody", []))
                for handler in getattr(node, "handlers", []):
                    walk(handler.body)

    walk(ast.parse(path.read_text(encoding="utf-8")).body)
    return names


def module_path(name: str) -> Path:
    base = ROOT.joinpath(*name.split("."))
    return base.with_suffix(".py") if base.with_suffix(".py").is_file() else base / "__init__.py"


def borrowed_names(path: Path) -> list[str]:
    """Where `path` takes a name from a grader module that does not define it (that module only
    imports it): `from grader.x import Name`, or `x.Name` on a name an import bound to a grader
    module."""
    imported, used = grader_names(path)

    def borrowed(source: str, name: str) -> bool:
        return (is_module(source) and not name.startswith("__")
                and not is_module(f"{source}.{name}")
                and name not in defined_names(module_path(source)))

    where = path.relative_to(ROOT)
    return ([f"{where}:{line} imports {name} from {source}, which does not define it"
             for line, source, name in imported if borrowed(source, name)]
            + [f"{where}:{line} uses {source}.{name}, which it does not define"
               for line, source, name in used if borrowed(source, name)])


@pytest.mark.parametrize("path", GRADER_FILES, ids=lambda p: p.relative_to(ROOT).as_posix())
def test_a_name_is_imported_from_the_module_that_defines_it(path):
    found = borrowed_names(path)
    assert not found, "\n".join(found) + "\n(import it from where it is defined)"


def test_no_grader_module_is_over_the_most_lines():
    large = {p.relative_to(ROOT).as_posix(): n for p in GRADER_FILES
             if (n := len(p.read_text(encoding="utf-8").splitlines())) > MAX_LINES}
    assert not large, f"over {MAX_LINES} lines (split along a seam): {large}"


def test_the_rules_catch_a_borrowed_name_and_a_module_too_large(monkeypatch):
    # The tests above must be able to fail: a check that takes the outcomes' WriteLocked
    # through scenario, or the target process's SendFailed through target_client, is caught;
    # so is a module one line over the most.
    fake = GRADER / "checks" / "test_stamps.py"
    source = ("from grader.harness.judge.scenario import Lab, WriteLocked\n"
              "from grader.harness.judge import target_client\n"
              "target_client.SendFailed\ntarget_client.TargetProcess\n")
    long = GRADER / "results.py"
    monkeypatch.setattr(Path, "read_text", lambda self, encoding=None: (
        source if self == fake else "x = 1\n" * (MAX_LINES + 1) if self == long
        else Path.read_bytes(self).decode(encoding or "utf-8")))
    assert borrowed_names(fake) == [
        "grader/checks/test_stamps.py:1 imports WriteLocked from grader.harness.judge.scenario, "
        "which does not define it",
        "grader/checks/test_stamps.py:3 uses grader.harness.judge.target_client.SendFailed, "
        "which it does not define"]
    with pytest.raises(AssertionError, match=r"grader/results.py': 601"):
        test_no_grader_module_is_over_the_most_lines()
