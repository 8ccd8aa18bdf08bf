"""The lease lab's grader. The folders are the architecture; an import only goes down this list:

    grader/cli.py, __main__.py   `python -m grader`: parse arguments, grade, write the reports
    grader/watch.py              `python -m grader watch`: regrade on every save (cli's options)
    grader/instructor/           batch grading, Gradescope bundle, student export (not shipped
                                 to students)
    grader/quiz/                 the quiz companion
    grader/plugin/               the checks as pytest items; reports from pytest-json-report's file
    grader/runner/               run the checks, on several cores; one result per check
    grader/checks/               the graded checks, one module per rule family
    grader/harness/              load and run the code under grade: sandbox, Lab, processes
    grader/report/               results to words and files, every format; the catalogue
    grader/results.py            the results model every report is written from
    grader/checkdef.py           `@check(id, points)` and the registry of checks
    grader/config.py             the instructor's config file
    grader/arguments.py          checks of command-line arguments the commands share
    grader/commands.py           the commands of `python -m grader NAME`, each declared once

`harness` and `report` never import each other: what runs the code under grade does not word
verdicts, and what words verdicts never touches the code under grade. tests/test_layers.py holds
these rules.
"""

import os as _os
import sys as _sys


def _unshadow_standard_library() -> None:
    """Run from a folder holding a module named like one of the standard library's (`cd lab`:
    the lab's own `queue.py`), `python -m grader` and `python -m pytest` put that folder first on
    sys.path, and the grader's own `import queue` would import the student's file. That folder
    leaves sys.path here, before any module of the grader is imported, and a module of it that
    was imported under a standard library's name is forgotten; the code under grade is still
    found (`--impl queue.py`, or `lab.queue` through the installed package)."""
    standard = getattr(_sys, "stdlib_module_names", frozenset())
    try:
        here = _os.getcwd()
    except OSError:
        return
    for entry in list(_sys.path):
        try:
            if _os.path.abspath(entry or ".") != here:
                continue
            names = _os.listdir(here)
        except OSError:
            continue
        if any(name[:-3] in standard for name in names if name.endswith(".py")) or any(
                name in standard and _os.path.isfile(_os.path.join(here, name, "__init__.py"))
                for name in names):
            _sys.path.remove(entry)
    for name in standard & set(_sys.modules):
        origin = getattr(_sys.modules[name], "__file__", None) or ""
        if origin and _os.path.dirname(_os.path.abspath(origin)) == here:
            del _sys.modules[name]


_unshadow_standard_library()
