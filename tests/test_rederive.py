"""`python -m bench.rederive` (step 6 of "Adding a check"): it finds the mutants that fail a
check without declaring it, and those that declare it in EXPECT_FAIL but pass, on copies of a
real mutant whose declarations were edited."""

from __future__ import annotations

import shutil

from conftest import MUTANTS
from bench import rederive

MUTANT = "tokens_claim_steals_valid_lease"  # fails valid-lease-never-handed-over (EXPECT_FAIL)
CAUGHT, PASSED = "valid-lease-never-handed-over", "finish-before-expiry"


def copy_of_the_mutants(tmp_path, **edits):
    """tmp_path/mutants: the shared parts, and MUTANT under each name in `edits` with its
    EXPECT_FAIL set replaced as the edit says ((old, new) pairs of text)."""
    folder = tmp_path / "mutants"
    folder.mkdir()
    for part in MUTANTS.glob("_*.py"):
        shutil.copy(part, folder)
    source = (MUTANTS / f"{MUTANT}.py").read_text(encoding="utf-8")
    for name, (old, new) in edits.items():
        assert old in source
        (folder / f"{name}.py").write_text(source.replace(old, new, 1), encoding="utf-8")
    return folder


def test_an_undeclared_failure_and_a_stale_declaration_are_named(tmp_path, capsys):
    folder = copy_of_the_mutants(
        tmp_path,
        as_declared=("EXPECT_FAIL = {", "EXPECT_FAIL = {"),
        forgets_the_check=(f'"{CAUGHT}"', '"no-such-check"'),
        claims_too_much=("EXPECT_FAIL = {", f'EXPECT_FAIL = {{"{PASSED}", '))
    assert rederive.declarations(folder / "claims_too_much.py")["EXPECT_FAIL"] >= {PASSED, CAUGHT}
    code = rederive.main([CAUGHT, PASSED, "--jobs", "1", "--mutants", str(folder)])
    lines = capsys.readouterr().out.splitlines()
    rows = {tuple(line.split()[:2]): line.split(None, 3)[3] for line in lines[:-2]}
    assert rows == {("as_declared", CAUGHT): "EXPECT_FAIL",
                    ("claims_too_much", CAUGHT): "EXPECT_FAIL",
                    ("claims_too_much", PASSED): "STALE (in EXPECT_FAIL)",
                    ("forgets_the_check", CAUGHT): "UNDECLARED"}, lines
    assert lines[-1] == f"3 mutants graded on {CAUGHT}, {PASSED}: 2 undeclared or stale"
    assert code == 1


def test_the_real_mutant_as_it_is_declares_what_it_fails(tmp_path, capsys):
    folder = copy_of_the_mutants(tmp_path, **{MUTANT: ("EXPECT_FAIL = {", "EXPECT_FAIL = {")})
    assert rederive.main([CAUGHT, "--jobs", "1", "--mutants", str(folder)]) == 0
    assert capsys.readouterr().out.split()[:4] == [MUTANT, CAUGHT, "failed", "EXPECT_FAIL"]
