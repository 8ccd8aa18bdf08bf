"""A hostile round leaves the install unchanged (issue 37).

The code's SQL runs in the judge's process, which is not jailed, and SQLite writes whatever file
it is told to open: a database beside site-packages as a `.pth` file (every later start of that
Python fails, or runs what the file holds), `lab/__init__.py` turned into a database when it was
empty (every later `import lab` fails: the classmates graded after it got 0). So:

- no file the package ships is empty (SQLite writes a database only into an empty or new file);
- every submission of tests/attacks/ (its files not starting with "_", as batch reads a folder),
  hostile_sql.py once for each of its VECTORS (`hostile_sql_<vector>.py`) and a correct
  classmate (the reference's queue, `zz_classmate.py`: last in name order) are graded one by one,
  each alone (sealed and in the lesson's world, as batch grades it), then all together in one
  `batch --jobs 1 --replay 1`, the classmate after every other. Each scores in the class what it
  scores alone, the classmate 100 both ways, each hostile_sql vector what doing nothing scores (0:
  its queue is honest only where its try got through), and the checkout (every file, .git,
  virtualenvs, bytecode caches and artifacts/ aside), the environment (every file of
  site-packages, every .pth file of every sys.path entry) and the temporary folders (files named
  as the attacks name theirs) are byte for byte what they were.

Two tries must name the real places to prove anything: zz_evil.pth in site-packages and the
empty files of the packages. Whatever any grade planted is removed, and a file of lab/,
solutions/ or grader/ that SQLite made a database written back, right after that grade and
again at the end, whatever happened (a `finally`): a failing run never leaves the machine
poisoned. Any other change is named, never written over (it may be an edit made meanwhile).
"""

from __future__ import annotations

import csv
import hashlib
import importlib.util
import os
import site
import sqlite3
import subprocess
import sys
import sysconfig
import tempfile
from pathlib import Path

import pytest

from conftest import ROOT, grade, points, run_grader
from grader.checkdef import all_checks

ATTACKS = ROOT / "tests" / "attacks"
CLASSMATE = "zz_classmate"
#: The packages a grade imports (the shipped ones): what SQLite writes there is undone.
PACKAGES = ("lab", "solutions", "grader")
#: Folders of the checkout not compared: git's, virtualenvs (also any folder with a pyvenv.cfg),
#: bytecode caches, pytest's cache, and the screenshots tests/test_report_html.py writes while
#: this runs beside it.
NOT_COMPARED = {".git", ".venv", "__pycache__", ".pytest_cache", "artifacts"}
#: How the attacks name the files they try to make (hostile_sql.py: PREFIX, PTH).
STRAY_NAMES = ("leaselab-hostile-*", "zz_evil*")


def _hostile_sql():
    spec = importlib.util.spec_from_file_location("hostile_sql", ATTACKS / "hostile_sql.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


HOSTILE_SQL = _hostile_sql()
VECTORS = tuple(HOSTILE_SQL.VECTORS)
ATTACK_FILES = tuple(sorted(p.stem for p in ATTACKS.glob("*.py") if not p.name.startswith("_")))
SUBMISSIONS = (*ATTACK_FILES, *(f"hostile_sql_{v}" for v in VECTORS), CLASSMATE)


def test_no_shipped_file_is_empty():
    """SQLite turns an empty file into a database when asked to open it: none may ship."""
    listed = subprocess.run(["git", "ls-files", "-z", *PACKAGES], cwd=ROOT, capture_output=True,
                            check=True).stdout.decode().split("\0")
    files = [name for name in listed if name]
    assert len(files) > 100, files  # the packages are listed
    assert [name for name in files if (ROOT / name).stat().st_size == 0] == []


# -- what is compared ----------------------------------------------------------------------------
def _files(folder: Path, skip=frozenset()):
    """Every file below `folder` (symbolic links as links), folders named in `skip` and
    virtualenvs aside."""
    for root, dirs, names in os.walk(folder):
        dirs[:] = [d for d in dirs if d not in skip and not Path(root, d, "pyvenv.cfg").exists()]
        for name in names:
            yield Path(root, name)


def _digest(path: Path) -> str:
    if path.is_symlink():
        return "link:" + os.readlink(path)
    try:
        return hashlib.sha256(path.read_bytes()).hexdigest()
    except OSError as error:  # a file that went while listed, a socket...
        return f"unreadable:{error.errno}"


def site_folders() -> list[Path]:
    """site-packages of this interpreter (the grader's), and the user's."""
    paths = sysconfig.get_paths()
    found = [*site.getsitepackages(), site.getusersitepackages(), paths["purelib"],
             paths["platlib"]]
    return sorted({Path(p).resolve() for p in found if Path(p).is_dir()})


def path_folders() -> list[Path]:
    """Every folder of sys.path (where a .pth file is read from) and site-packages."""
    return sorted({Path(p or ".").resolve() for p in sys.path if Path(p or ".").is_dir()}
                  | set(site_folders()))


def snapshot(root: Path = ROOT) -> dict[str, str]:
    """What a grade must not change: path -> digest. A bytecode cache Python writes (a new
    file in __pycache__ that starts with this Python's magic number) is marked, not compared."""
    state = {}
    for path in _files(root, NOT_COMPARED):
        state[f"checkout:{path.relative_to(root)}"] = _digest(path)
    for folder in site_folders():
        for path in _files(folder):
            state[f"site:{path}"] = _digest(path)
    for folder in path_folders():
        for path in folder.glob("*.pth"):
            state[f"pth:{path}"] = _digest(path)
    return state


def _bytecode(key: str) -> bool:
    path = Path(key.split(":", 1)[1])
    if path.parent.name != "__pycache__" or not key.startswith("site:"):
        return False
    try:
        with open(path, "rb") as f:
            return f.read(4) == importlib.util.MAGIC_NUMBER
    except OSError:
        return False


def changes(before: dict[str, str], after: dict[str, str]) -> list[str]:
    """What differs, one line each: added, removed, changed."""
    found = [f"added {k}" for k in sorted(after.keys() - before.keys()) if not _bytecode(k)]
    found += [f"removed {k}" for k in sorted(before.keys() - after.keys())]
    found += [f"changed {k}" for k in sorted(before.keys() & after.keys()) if before[k] != after[k]]
    return found


#: What a SQLite database starts with.
SQLITE_HEADER = b"SQLite format 3\0"


def made_by_sqlite(path: Path) -> bool:
    """Whether the file is empty or a SQLite database (what ATTACH leaves)."""
    with open(path, "rb") as f:
        return f.read(len(SQLITE_HEADER)) in (b"", SQLITE_HEADER)


class Round:
    """The places a round may not touch, what they held, and the clean-up (of a checkout:
    this one, or a stand-in's)."""

    def __init__(self, folder: Path, root: Path = ROOT):
        self.root = root
        self.attack_dir = folder / "attack"  # $LEASELAB_ATTACK_DIR: where the tries point
        self.tmp = folder / "tmp"  # the grades' TMPDIR
        self.attack_dir.mkdir()
        self.tmp.mkdir()
        self.packages = {p: p.read_bytes() for name in PACKAGES
                         for p in _files(root / name, NOT_COMPARED)}
        self.before = snapshot(root)

    def stray_places(self) -> list[Path]:
        return sorted({self.root, self.attack_dir, self.tmp, Path("/tmp"),
                       Path(tempfile.gettempdir()), *path_folders()})

    def cleaned(self) -> list[str]:
        """Remove what the attacks plant (files named as they name them, SQLite's files in the
        packages) and write back a file of the packages SQLite turned into a database: what was
        found. A file of the packages changed otherwise (an edit made while the round ran,
        or a jail that let the code write) is named, never written over."""
        found = []
        for place in self.stray_places():
            for pattern in STRAY_NAMES:
                for path in place.glob(pattern):
                    found.append(f"planted {path}")
                    path.unlink(missing_ok=True)
        for path in self.attack_dir.iterdir():
            found.append(f"planted {path}")
            path.unlink(missing_ok=True)
        for path, data in self.packages.items():
            if not path.is_file():
                found.append(f"removed {path.relative_to(self.root)}")
            elif path.read_bytes() != data:
                found.append(f"wrote {path.relative_to(self.root)}")
                if made_by_sqlite(path):
                    path.write_bytes(data)
        for path in (p for name in PACKAGES for p in _files(self.root / name, NOT_COMPARED)):
            if path not in self.packages:
                found.append(f"planted {path}")
                if made_by_sqlite(path):
                    path.unlink()
        return found


def class_folder(folder: Path) -> Path:
    """Every submission of SUBMISSIONS as `<name>.py`."""
    folder.mkdir()
    for name in ATTACK_FILES:
        (folder / f"{name}.py").write_bytes((ATTACKS / f"{name}.py").read_bytes())
    source = (ATTACKS / "hostile_sql.py").read_text(encoding="utf-8")
    for vector in VECTORS:
        one = source.replace('\nVECTOR = "all"', f'\nVECTOR = "{vector}"')
        assert one != source
        (folder / f"hostile_sql_{vector}.py").write_text(one, encoding="utf-8")
    (folder / f"{CLASSMATE}.py").write_bytes((ROOT / "solutions" / "queue.py").read_bytes())
    return folder


def test_the_comparison_sees_and_cleans_what_a_hole_leaves(tmp_path):
    """In a stand-in checkout: an empty lab/__init__.py turned into a database (as a hole does),
    a line added to a file of grader/ (as an edit made meanwhile), and an empty zz_evil.pth in
    the real site-packages (harmless) are each seen; the .pth is removed and the database
    written back; the edit is named, never written over."""
    root = tmp_path / "checkout"
    for name in PACKAGES:
        (root / name).mkdir(parents=True)
        (root / name / "__init__.py").write_text(f'"""{name}"""\n', encoding="utf-8")
    init, edited = root / "lab" / "__init__.py", root / "grader" / "__init__.py"
    init.write_bytes(b"")
    state = Round(tmp_path, root)
    pth = site_folders()[0] / "zz_evil.pth"
    try:
        pth.write_bytes(b"")
        with sqlite3.connect(":memory:") as conn:
            conn.execute("ATTACH ? AS zz_evil", (str(init),))
            conn.execute("CREATE TABLE zz_evil.planted(line TEXT)")
        with open(edited, "a", encoding="utf-8") as f:
            f.write("# edited\n")
        assert made_by_sqlite(init) and init.stat().st_size > 0
        assert changes(state.before, snapshot(root)) == [
            f"added pth:{pth}", f"added site:{pth}", "changed checkout:grader/__init__.py",
            "changed checkout:lab/__init__.py"]
    finally:
        found = state.cleaned()
    assert sorted(found) == ["planted " + str(pth), "wrote grader/__init__.py",
                             "wrote lab/__init__.py"]
    assert init.read_bytes() == b"" and edited.read_text(encoding="utf-8").endswith("# edited\n")
    assert changes(state.before, snapshot(root)) == ["changed checkout:grader/__init__.py"]


@pytest.fixture(scope="module")
def hostile_round(tmp_path_factory):
    """The round: {"alone": name -> score (None: no results), "class": name -> gradebook row,
    "left": where -> what was planted or changed}."""
    folder = tmp_path_factory.mktemp("hostile-round")
    subs = class_folder(folder / "class")
    state = Round(folder)
    alone: dict[str, int | None] = {}
    left: dict[str, list[str]] = {}
    with pytest.MonkeyPatch.context() as env:
        env.setenv("LEASELAB_ATTACK_DIR", str(state.attack_dir))
        env.setenv("TMPDIR", str(state.tmp))
        env.setenv("LEASELAB_SEALED", "1")  # as batch grades: no reference, no tests
        try:
            for name in SUBMISSIONS:
                try:
                    _, results = grade(str(subs / f"{name}.py"), folder, "--replay", "1")
                    alone[name] = results["score"]
                except AssertionError as no_results:
                    alone[name] = None
                    left[f"alone {name}: no results.json"] = [str(no_results)[-400:]]
                left[f"alone {name}"] = state.cleaned()
            env.delenv("LEASELAB_SEALED")  # batch seals its own grades
            proc = run_grader("batch", str(subs), "--out", str(folder / "grades"), "--jobs", "1",
                              "--replay", "1", "--quiet", timeout=900)
            assert proc.returncode == 0, proc.stderr
            left["batch"] = state.cleaned()
        finally:
            left["end"] = state.cleaned()
    left["install"] = changes(state.before, snapshot())
    with open(folder / "grades" / "gradebook.csv", newline="", encoding="utf-8") as f:
        rows = {row["submission"]: row for row in csv.DictReader(f)}
    return {"alone": alone, "class": rows, "left": {k: v for k, v in left.items() if v}}


def test_no_hostile_round_changes_the_install(hostile_round):
    """Nothing was planted in site-packages, beside any sys.path entry, in the checkout or the
    temporary folders, no file of the packages was written, and every file of the checkout and
    of site-packages and every .pth file is byte for byte what it was (where -> what)."""
    left = hostile_round["left"]
    assert left == {}, "\n".join(f"{where}: {what}" for where, found in left.items()
                                  for what in found)


@pytest.mark.parametrize("name", SUBMISSIONS)
def test_each_submission_scores_in_class_what_it_scores_alone(hostile_round, name):
    row, alone = hostile_round["class"][name], hostile_round["alone"][name]
    assert row["status"] == "graded", row
    assert alone is not None, hostile_round["left"]
    assert int(row["score"]) == alone, (row, alone)


def test_the_classmate_after_them_scores_full_marks(hostile_round):
    full = points(*all_checks())
    row = hostile_round["class"][CLASSMATE]
    assert int(row["score"]) == int(row["max_score"]) == full, row
    assert hostile_round["alone"][CLASSMATE] == full


@pytest.mark.parametrize("vector", ("all", *VECTORS))
def test_sql_that_reaches_out_of_its_database_scores_what_doing_nothing_does(hostile_round,
                                                                             vector):
    """hostile_sql.py's queue is honest only after a try that got through: more than doing
    nothing (0) is a hole, in the judge's SQLite, of `vector`."""
    name = "hostile_sql" if vector == "all" else f"hostile_sql_{vector}"
    nothing = hostile_round["alone"]["do_nothing"]
    assert nothing == 0
    assert hostile_round["alone"][name] == nothing, f"{vector} got through"
    assert int(hostile_round["class"][name]["score"]) == nothing, f"{vector} got through"
