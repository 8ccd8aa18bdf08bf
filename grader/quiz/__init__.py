"""The quiz companion (`python -m grader quiz`): the question bank, asking it in the terminal,
scoring an answers file, and playing scenario questions against an implementation.

May import: `grader.harness` (scenario questions play on a Lab), `grader.report` (messages,
rendering), the grader's top-level basics, and `lab`. Never `grader.checks`, `grader.runner`,
`grader.instructor` or `grader.cli`.
"""
