"""Load the implementation under grade: a module name (`lab.queue`) or a path to a `.py` file."""

from __future__ import annotations

import importlib
import importlib.util
import os
import sys
from pathlib import Path
from types import ModuleType

from grader.harness.wire.values import STANDARD_AT_NEED

FUNCTIONS = ("claim", "finish", "work_once")
DEFAULT_TARGET = "lab.queue"


class TargetError(Exception):
    """The target cannot be graded at all (does not import, lacks a function): one of
    `Kind.LOAD_ERRORS`."""

    def __init__(self, kind: str, **params):
        super().__init__(kind, params)
        self.kind = kind
        self.params = params


def is_path(spec: str) -> bool:
    return spec.endswith(".py") or os.sep in spec or "/" in spec


def display_name(spec: str) -> str:
    """A short human name of the target, as shown in reports."""
    if is_path(spec):
        return str(spec)
    return spec.replace(".", "/") + ".py" if spec in ("lab.queue", "solutions.queue") else spec


def load(spec: str) -> ModuleType:
    """Import the target and check it has the three functions; raise TargetError otherwise."""
    if "" not in sys.path and os.getcwd() not in sys.path:
        first_on_path(os.getcwd())
    try:
        if is_path(spec):
            module = _load_file(Path(spec))
        else:
            module = importlib.import_module(spec)
    except TargetError:
        raise
    except SyntaxError as exc:
        raise TargetError(
            _kind().SYNTAX_ERROR, file=_short(exc.filename), line=exc.lineno or 0,
            msg=exc.msg, **_spot(exc.text, exc.offset, exc.end_offset
                                 if exc.end_lineno == exc.lineno else None)
        ) from None
    except BaseException as exc:  # an import that crashes is the target's fault, not ours
        try:
            at = _raised_at(exc)
        except Exception:  # noqa: BLE001 (where it raised is a courtesy, never a new error)
            at = {}
        raise TargetError(_kind().IMPORT_ERROR, error=f"{type(exc).__name__}: {exc}",
                          **at) from None
    missing = [name for name in FUNCTIONS if not callable(getattr(module, name, None))]
    if missing:
        raise TargetError(_kind().MISSING_FUNCTION, names=", ".join(missing))
    return module


def _kind():
    """grader.results.Kind, imported when a load fails: a target process that loads its code
    never needs grader.results (its dataclasses cost every fresh interpreter of the portable
    path a few milliseconds to make)."""
    from grader.results import Kind

    return Kind


def first_on_path(folder: str) -> None:
    """Put `folder` first on sys.path (a submission may import its own helper modules). The
    graded file is usually named queue.py: the standard library's `queue` (used by threads,
    concurrent.futures, logging) is imported before, so that the student's file cannot shadow
    it, and so are those the target process imports at need once the code is loaded
    (grader.harness.wire.values.STANDARD_AT_NEED). Only here: while no folder of the code's
    goes first, an import of them finds the standard library's whenever it comes."""
    import queue  # noqa: F401

    for name in STANDARD_AT_NEED:
        importlib.import_module(name)
    sys.path.insert(0, folder)


def _load_file(path: Path) -> ModuleType:
    if not path.is_file():
        raise TargetError(_kind().NO_SUCH_FILE, file=str(path))
    folder = str(path.resolve().parent)
    if folder not in sys.path:
        first_on_path(folder)
    name = "graded_target"
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def _spot(source: str | None, column: int | None, end_column: int | None) -> dict:
    """The line of code an error is about (`source`) and where in it (1-based `column` to
    `end_column`, exclusive), as a load error's parameters: what the report's caret shows."""
    if not source:
        return {}
    spot = {"source": source.splitlines()[0] if source.strip() else source}
    if isinstance(column, int) and column > 0:
        spot["column"] = column
        if isinstance(end_column, int) and end_column > column:
            spot["end_column"] = end_column
    return spot


def _raised_at(exc: BaseException) -> dict:
    """Where in the code under grade an import raised: the last frame of its traceback that
    is neither the grader's nor Python's own (the standard library, site-packages, frozen
    importlib), as `file`, `line` and its `_spot`. Empty when no frame is the target's."""
    import sysconfig
    import traceback

    skip = [str(Path(__file__).resolve().parents[2])]  # grader/
    skip += [os.path.realpath(p) for key in ("stdlib", "platstdlib", "purelib", "platlib")
             if (p := sysconfig.get_paths().get(key))]
    mine = [f for f in traceback.extract_tb(exc.__traceback__)
            if f.filename and not f.filename.startswith("<")
            and not any(os.path.realpath(f.filename).startswith(p + os.sep) for p in skip)]
    if not mine:
        return {}
    frame = mine[-1]
    column = frame.colno + 1 if isinstance(frame.colno, int) else None
    end = (frame.end_colno + 1 if isinstance(frame.end_colno, int)
           and frame.end_lineno == frame.lineno else None)
    return {"file": _short(frame.filename), "line": frame.lineno,
            **_spot(frame.line and _source_line(frame.filename, frame.lineno), column, end)}


def _source_line(filename: str, lineno: int) -> str | None:
    """Line `lineno` of `filename` as written (its indentation kept, so columns match)."""
    import linecache

    return linecache.getline(filename, lineno).rstrip("\n") or None


def _short(filename: str | None) -> str:
    if not filename:
        return "?"
    try:
        return os.path.relpath(filename)
    except ValueError:
        return filename
