"""What the code under grade may import and read, decided in the target process before it is
imported: the sealed packages (`seal`: the reference and the project's tests, under batch and
the platform autograders) and the places the jail lets it read (`readable`, `module_origin`).
Split from grader.harness.target.server (issue 40), which uses them at its start.

May import: the standard library, grader.harness.target.loader.
"""

from __future__ import annotations

import importlib.machinery
import importlib.util
import os
import sys

from . import loader as targets

_HARNESS_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))  # grader/harness


#: Set (to "1") by batch and the platform autograders: the code under grade may not import the
#: reference or the project's tests (mutants, correct alternatives), by any spelling of import.
SEALED_ENV = "LEASELAB_SEALED"
SEALED_PACKAGES = ("solutions", "tests")


class Sealed:
    """A meta path finder, first in line, that refuses the sealed packages."""

    @staticmethod
    def find_spec(name, path=None, target=None):
        if name.split(".", 1)[0] in SEALED_PACKAGES:
            raise ModuleNotFoundError(f"No module named {name!r} (not available to the code "
                                      "under grade)", name=name)
        return None

    @staticmethod
    def invalidate_caches():
        pass


def seal() -> None:
    """Refuse the sealed packages from now on (already imported ones are dropped too)."""
    for name in list(sys.modules):
        if name.split(".", 1)[0] in SEALED_PACKAGES:
            del sys.modules[name]
    sys.meta_path.insert(0, Sealed)


def readable(spec: str, sealed: bool) -> list[str]:
    """What the code under grade may read besides Python and the system: the grader's `grader`
    and `lab` packages, the folder of the target (only its file, when that folder holds the
    grader itself: a checkout's root) and, unless sealed, the reference beside the grader (the
    project's own mutants build on it; sealed, nothing of it is readable). The temporary folder
    is the target's scratch folder, made below the judge's work root (grader.harness.processes.workroot),
    where the checks' databases are: a folder that holds the root holds it too."""
    grader_dir = os.path.dirname(_HARNESS_DIR)
    lab_dir = os.path.dirname(os.path.abspath(sys.modules["lab.store"].__file__))
    places = [grader_dir, lab_dir]
    if not sealed:
        places.append(os.path.join(os.path.dirname(grader_dir), SEALED_PACKAGES[0]))
    try:
        origin = os.path.abspath(spec) if targets.is_path(spec) else module_origin(spec)
    except (ImportError, ValueError, AttributeError):
        origin = None
    if origin and os.path.exists(origin):
        folder = os.path.dirname(origin)
        root = os.path.dirname(grader_dir)
        # only the file where its folder holds the grader or the places the judge's databases
        # live in (a target in /tmp itself would otherwise read every check's database)
        guarded = [root, *_temporary_folders(), *DATABASE_PLACES]
        inside = any(os.path.commonpath([folder, os.path.realpath(place)]) == folder
                     for place in guarded)
        places.append(origin if inside else folder)
    return places


#: Where the judge's databases may live besides the temporary folder (grader.harness.processes.workroot's
#: RAM_FOLDER).
DATABASE_PLACES = ("/dev/shm",)


def _temporary_folders() -> list[str]:
    """Every folder `tempfile.gettempdir()` could pick (the variables it reads, then the
    system's): a superset of its answer, without the file it writes in each to test it."""
    names = [os.environ.get(name) for name in ("TMPDIR", "TEMP", "TMP")]
    return [os.path.abspath(name) for name in names if name] + ["/tmp", "/var/tmp", "/usr/tmp"]


def module_origin(spec: str) -> str | None:
    """The file the module `spec` (a dotted name) would be loaded from, found without importing
    any package on its way: `importlib.util.find_spec("pkg.queue")` imports `pkg`, which would
    run its `__init__` here, before the jail. A top-level name is found as the import system
    finds it (no parent to import); each level below in its parent's search locations (an
    imported parent's `__path__`). None if it is not found so (then only the jail's import tells)."""
    parts = spec.split(".")
    found = importlib.util.find_spec(parts[0])
    for depth in range(1, len(parts)):
        parent = sys.modules.get(".".join(parts[:depth]))
        locations = (getattr(parent, "__path__", None) if parent is not None
                     else found.submodule_search_locations if found is not None else None)
        if locations is None:
            return None
        found = importlib.machinery.PathFinder.find_spec(".".join(parts[:depth + 1]),
                                                         list(locations))
    return found.origin if found is not None else None
