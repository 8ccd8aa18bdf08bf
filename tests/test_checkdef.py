"""The rules of declaring a check that are not visible in one check module: every check module
has its place in MODULE_ORDER (a module outside it is an error, not a silent last place). The
points adding up to 100 and docs/contract.md's table are held by tests/test_readme.py."""

from __future__ import annotations

from pathlib import Path

import pytest

from grader import checkdef

CHECKS = Path(checkdef.__file__).with_name("checks")


def test_every_check_module_has_its_place_and_every_place_a_module():
    modules = sorted(p.stem.removeprefix("test_") for p in CHECKS.glob("test_*.py"))
    assert modules == sorted(checkdef.MODULE_ORDER)


def test_checks_are_ordered_as_the_lesson_tells_its_rules():
    modules = [info.module.rsplit(".", 1)[-1] for info in checkdef.all_checks().values()]
    ranks = [checkdef.module_rank(m) for m in modules]
    assert ranks == sorted(ranks)


def test_a_module_outside_module_order_is_an_error():
    with pytest.raises(ValueError, match="test_leases.*not in grader.checkdef.MODULE_ORDER"):
        checkdef.module_rank("grader.checks.test_leases")


def test_declaring_a_check_in_a_module_outside_module_order_is_an_error():
    def test_body(lab):
        pass

    test_body.__module__ = "grader.checks.test_leases"
    with pytest.raises(ValueError, match="MODULE_ORDER"):
        checkdef.check("lease-somewhere", points=1)(test_body)
    assert "lease-somewhere" not in checkdef.REGISTRY
