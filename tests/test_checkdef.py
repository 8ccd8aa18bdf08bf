"""The rules of declaring a check that are not visible in one check module: every check module
has its family in FAMILIES (a module outside it is an error, not a silent last place), and what
is derived from FAMILIES follows it. The
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


def test_a_module_outside_families_is_an_error():
    with pytest.raises(ValueError, match="test_leases.*not in grader.checkdef.FAMILIES"):
        checkdef.module_rank("grader.checks.test_leases")


def test_declaring_a_check_in_a_module_outside_families_is_an_error():
    def test_body(lab):
        pass

    test_body.__module__ = "grader.checks.test_leases"
    with pytest.raises(ValueError, match="FAMILIES"):
        checkdef.check("lease-somewhere", points=1)(test_body)
    assert "lease-somewhere" not in checkdef.REGISTRY


def test_a_family_is_declared_once_and_the_runner_and_watch_read_it(monkeypatch):
    """Whether a family is long and in which watch pass it runs is read from its one
    declaration in FAMILIES: declare `tokens` long and of the second pass, and the schedule
    hands its checks out first, watch runs them after the first screen."""
    from grader import runner, watch

    checks = list(checkdef.all_checks().values())
    units = [runner.Unit(info, runner.Part(i, info.parts) if info.parts > 1 else None)
             for info in checks for i in range(info.parts)]
    tokens = [i for i, u in enumerate(units) if checkdef.family(u.check.module) == "tokens"]
    ids = {units[i].check.id for i in tokens}
    long, short = runner.schedule(units)
    assert set(tokens) <= set(short) and not ids & set(watch.second_pass(None))

    monkeypatch.setattr(checkdef, "FAMILIES", tuple(
        checkdef.Family("tokens", long=9, watch_pass=2) if f.name == "tokens" else f
        for f in checkdef.FAMILIES))
    long, short = runner.schedule(units)
    parts = sum(1 for u in units if u.check.parts > 1)
    assert long[parts:parts + len(tokens)] == tokens and not set(tokens) & set(short)
    assert ids <= set(watch.second_pass(None))


def test_the_declared_names_are_the_families_in_lesson_order():
    assert checkdef.MODULE_ORDER == tuple(f.name for f in checkdef.FAMILIES)
    assert checkdef.PROCESS_FAMILIES == ("race", "crash", "integration")
    assert all(checkdef.BY_NAME[n].long for n in checkdef.PROCESS_FAMILIES)


def test_a_familys_preload_is_imported_once_before_its_judges_run(monkeypatch, tmp_path):
    """`Family.preload`: run_unit imports the modules its judges would import when they run
    before the first judge is forked (a lane's forked judges then inherit them), and no other
    family's unit does."""
    import sys

    from grader import runner

    (tmp_path / "preload_probe_mod.py").write_text("import builtins\n"
                                                   "builtins._preload_probe_count = getattr("
                                                   "builtins, '_preload_probe_count', 0) + 1\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(sys.modules, "preload_probe_mod", raising=False)
    monkeypatch.setattr(checkdef, "FAMILIES", tuple(
        checkdef.Family(f.name, f.starts_processes, f.long, f.watch_pass,
                        preload=("preload_probe_mod",)) if f.name == "integration" else f
        for f in checkdef.FAMILIES))
    seen = []
    monkeypatch.setattr(runner.sandbox, "run",
                        lambda judge, timeout, inline=False: seen.append(
                            "preload_probe_mod" in sys.modules))
    checks = checkdef.all_checks().values()
    other = next(i for i in checks if checkdef.family(i.module) == "tokens")
    integration = next(i for i in checks if checkdef.family(i.module) == "integration")
    settings = runner.settings_for("solutions/queue.py", sweep=3)
    runner.run_unit(runner.Unit(other, None), settings, in_lane=True)
    assert seen == [False] * 3
    runner.run_unit(runner.Unit(integration, None), settings, in_lane=True)
    assert seen[3:] == [True] * 3
    import builtins
    assert builtins._preload_probe_count == 1
    monkeypatch.delattr(builtins, "_preload_probe_count")
