"""The graded checks: one `test_<family>.py` module per rule family of the lesson, in
`checkdef.FAMILIES`, each check a small function declared with `@check(id, points)`.

Beside them, the steps the checks share: `situations` (the lesson's starting situations),
`steps` (claim / finish steps that check the call's result and the rows it may touch), `faults`
(fault injection with TEMP triggers), `txshape` (transaction shape from traced SQL), and the
random timelines' generator, model, player and shrinker. `grader.runner` runs them (the
`test_` prefix is only the modules' naming; no test framework is involved).

May import: `grader.harness` (the Lab a check body drives), the grader's top-level basics, and
`lab`. Never `grader.runner`, `grader.quiz`,
`grader.instructor` or `grader.cli`.
"""
