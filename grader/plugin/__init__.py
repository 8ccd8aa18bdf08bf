"""pytest as a way to run the checks, and reports made from its results.

Lives here: the pytest plugin (`pytest_plugin`, registered as the `leaselab` entry point of
`pytest11`): every `@check` in grader/checks becomes a pytest item that runs through the same
judge as `python -m grader` (grader.runner.grade_check) and fails with the same text, its whole
result kept in the item's pytest-json-report metadata; and `python -m grader report FILE`
(`report_file`): a pytest-json-report file read back into results and written by every writer.

May import: grader.runner, grader.report, grader.harness (the target's name, the world's seed,
a check's Lab) and the top-level basics; pytest only in `pytest_plugin`, which only pytest
imports (a grade, and `python -m grader report`, never import pytest). Never
grader.instructor, grader.cli or grader.watch.
"""
