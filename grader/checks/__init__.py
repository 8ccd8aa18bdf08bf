"""The graded checks: one `test_<family>.py` module per rule family of the lesson, in
`checkdef.FAMILIES`, each check a small function declared with `@check(id, points)`.

Beside them, the steps the checks share: `situations` (the lesson's starting situations),
`steps` (claim / finish steps that check the call's result and the rows it may touch), `faults`
(fault injection with TEMP triggers), `txshape` (transaction shape from traced SQL), and the
random timelines' generator, model, player (`timelines`; the database it plays on, `timeline_db`)
and shrinker. `grader.runner` runs them (the
`test_` prefix is only the modules' naming; no test framework is involved).

May import: `grader.harness` (the Lab a check body drives), the grader's top-level basics, and
`lab`. Never `grader.runner`, `grader.quiz`,
`grader.instructor` or `grader.cli`.
"""


def contract_model():
    """The contract's one executable model (`model.QueueModel`), which the runner hands to each
    check's Lab: every call of a check that starts no processes is held to it, row by row
    (grader.harness.judge.invariants, which may not import the checks and holds no model of its
    own). None in a copy of the grader without the model (export-student --without-model):
    there the Lab holds its calls to the connection and clock rules only."""
    try:
        from .model import QueueModel
    except ModuleNotFoundError as missing:
        if missing.name != f"{__name__}.model":
            raise
        return None
    return QueueModel
