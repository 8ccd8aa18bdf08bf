"""`python -m bench.rederive ID [ID ...]`: which mutants fail these checks, and what they declare.

Step 6 of "Adding a check" (docs/DEVELOPING.md): grades every mutant in tests/mutants on the
given checks only (`-k`, the lesson's world, as tests/test_mutants.py grades them) and lists,
per check, each mutant that does not pass it with where its declarations put the id:
`EXPECT_FAIL`, `MAY_FAIL`, or nowhere (UNDECLARED: the same bug goes into EXPECT_FAIL, a
collateral failure into MAY_FAIL; that judgement is the developer's), and each mutant that
declares the id in EXPECT_FAIL but passes (STALE). It writes nothing. Exit status 0 when nothing
is undeclared or stale, 1 otherwise, 2 when a mutant could not be graded.

    python -m bench.rederive held-job-skipped [--jobs 2] [--mutants DIR]
"""

from __future__ import annotations

import argparse
import ast
import json
import os
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
MUTANTS = ROOT / "tests" / "mutants"


def mutants(folder: Path) -> list[Path]:
    """The mutants of `folder`: its .py files but the shared parts (`_*.py`)."""
    return [p for p in sorted(folder.glob("*.py")) if not p.name.startswith("_")]


def declarations(path: Path) -> dict[str, set[str]]:
    """A mutant's EXPECT_FAIL and MAY_FAIL, read without importing it."""
    found = {"EXPECT_FAIL": set(), "MAY_FAIL": set()}
    for node in ast.parse(path.read_text(encoding="utf-8")).body:
        if isinstance(node, ast.Assign) and len(node.targets) == 1:
            name = getattr(node.targets[0], "id", None)
            if name in found:
                found[name] = set(ast.literal_eval(node.value))
        elif (isinstance(node, ast.AugAssign) and isinstance(node.op, ast.BitOr)
              and getattr(node.target, "id", None) == "MAY_FAIL"):  # MAY_FAIL |= {...}
            found["MAY_FAIL"] |= set(ast.literal_eval(node.value))
    return found


def outcomes(path: Path, ids: list[str]) -> dict[str, str] | None:
    """check id -> outcome of one grade of the mutant on `ids` alone; None if it did not grade."""
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "results.json"
        subprocess.run([sys.executable, "-m", "grader", "--impl", str(path), "-k",
                        " or ".join(ids), "--no-history", "--json", str(out)],
                       cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            results = json.loads(out.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return None
    return {t["extra_data"]["check_id"]: t["extra_data"]["outcome"] for t in results["tests"]}


def verdicts(path: Path, ids: list[str], got: dict[str, str]) -> list[tuple[str, str, str]]:
    """(check id, outcome, what it means) for each check the mutant does not pass, or declares
    in EXPECT_FAIL and passes."""
    declared = declarations(path)
    rows = []
    for check_id in ids:
        outcome = got.get(check_id, "not graded")
        where = next((name for name in ("EXPECT_FAIL", "MAY_FAIL") if check_id in declared[name]),
                     None)
        if outcome != "passed":
            rows.append((check_id, outcome, where or "UNDECLARED"))
        elif where == "EXPECT_FAIL":
            rows.append((check_id, outcome, "STALE (in EXPECT_FAIL)"))
    return rows


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m bench.rederive",
                                description=__doc__.split("\n")[0])
    p.add_argument("ids", nargs="+", metavar="ID")
    p.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    p.add_argument("--mutants", type=Path, default=MUTANTS, metavar="DIR")
    args = p.parse_args(argv)
    todo = mutants(args.mutants)
    bad = broken = 0
    with ThreadPoolExecutor(max_workers=args.jobs) as pool:
        for path, got in zip(todo, pool.map(lambda m: outcomes(m, args.ids), todo)):
            if got is None:
                print(f"{path.stem:<48} could not be graded")
                broken += 1
                continue
            for check_id, outcome, where in verdicts(path, args.ids, got):
                print(f"{path.stem:<48} {check_id:<28} {outcome:<16} {where}")
                bad += where == "UNDECLARED" or where.startswith("STALE")
    print(f"\n{len(todo)} mutants graded on {', '.join(args.ids)}: {bad} undeclared or stale"
          + (f", {broken} not graded" if broken else ""))
    return 2 if broken else 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
