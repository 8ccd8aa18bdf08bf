"""The lease lab's grader. The folders are the architecture; an import only goes down this list:

    grader/cli.py, __main__.py   `python -m grader`: parse arguments, grade, write the reports
    grader/watch.py              `python -m grader watch`: regrade on every save (cli's options)
    grader/instructor/           batch grading, Gradescope bundle, student export (not shipped
                                 to students)
    grader/quiz/                 the quiz companion
    grader/plugin/               the checks as pytest items; reports from pytest-json-report's file
    grader/runner/               run the checks, on several cores; one result per check
    grader/checks/               the graded checks, one module per rule family
    grader/harness/              load and run the code under grade: sandbox, Lab, processes
    grader/report/               results to words and files, every format; the catalogue
    grader/results.py            the results model every report is written from
    grader/checkdef.py           `@check(id, points)` and the registry of checks
    grader/config.py             the instructor's config file
    grader/arguments.py          checks of command-line arguments the commands share
    grader/commands.py           the commands of `python -m grader NAME`, each declared once

`harness` and `report` never import each other: what runs the code under grade does not word
verdicts, and what words verdicts never touches the code under grade. tests/test_layers.py holds
these rules.
"""
