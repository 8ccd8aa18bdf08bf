"""The code under grade compiled once per grade, in the zygote, instead of once in every target.

A target process cannot write the bytecode cache beside the code under grade (its jail), so each
one compiled the file again on import: about a millisecond a target, some forty a grade, and
again after every save under `watch`. The zygote (`grader.harness.target.zygote_server`) now compiles
the file before it forks a target for it (compiling runs none of it) and keeps the code object
with the exact bytes and path it was compiled from; the import system's `source_to_code` in the
target hands that code object back when it reads the very same bytes from the very same path,
and compiles as before otherwise. So what runs is what a compile in the target would have made.

Imported by the zygote (the target process's side): imports nothing of the judge's.
"""

from __future__ import annotations

import importlib.machinery
import os
from pathlib import PurePath

from . import loader as targets
from .sealing import module_origin

#: Files larger than this are left to the target to compile (the zygote serves every start).
MAX_SOURCE = 256 * 1024
#: Sources kept at once (one a target file; a few when several are graded).
MAX_KEPT = 8

_kept: dict[str, tuple[bytes, object]] = {}  # path -> (the bytes compiled, the code object)
_original = None


def install() -> None:
    """Make the import system's source loader take a kept code object (once a process)."""
    global _original
    if _original is not None:
        return
    loader = importlib.machinery.SourceFileLoader
    _original = loader.source_to_code

    def source_to_code(self, data, path, *, _optimize=-1):
        kept = _kept.get(path) if _optimize == -1 and type(path) is str else None
        if kept is not None and kept[0] == data:
            return kept[1]
        return _original(self, data, path, _optimize=_optimize)

    loader.source_to_code = source_to_code


def prepare(spec: str, cwd: str) -> None:
    """Compile the file `spec` names (a module name found as a target started in `cwd` would
    find it, or a path), if it changed since; never raises (a file it cannot compile is the
    target's to report)."""
    try:
        path = _path(spec, cwd)
        if path is None or not path.endswith(".py"):
            return
        with open(path, "rb") as file:
            data = file.read(MAX_SOURCE + 1)
        if len(data) > MAX_SOURCE:
            return
        kept = _kept.get(path)
        if kept is not None and kept[0] == data:
            return
        _kept.pop(path, None)
        code = compile(data, path, "exec", dont_inherit=True)  # as importlib compiles a source
        while len(_kept) >= MAX_KEPT:
            _kept.pop(next(iter(_kept)))
        _kept[path] = (data, code)
    except (OSError, ValueError, SyntaxError, MemoryError, RecursionError, OverflowError,
            ImportError, AttributeError, UnicodeError):
        return


def _path(spec: str, cwd: str) -> str | None:
    """The path the target's import will read `spec` from (as importlib's spec_from_file_location
    makes a relative one absolute; a module name only where the target's search path is this
    process's: started in the same folder)."""
    if targets.is_path(spec):
        name = str(PurePath(spec))  # as the target's Path(spec) writes it
        return name if os.path.isabs(name) else os.path.join(cwd, name)
    if os.path.realpath(cwd) != os.path.realpath(os.getcwd()):
        return None
    return module_origin(spec)
