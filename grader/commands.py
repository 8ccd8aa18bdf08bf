"""The commands of `python -m grader NAME ...`, each declared once, here: its name and the module
whose `main(argv)` runs it. Named by path, not imported: the student copy has no
grader/instructor/, and its commands say so (`grader.cli.run_command`). Its line in `python -m
grader --help` is `cli.command.<name>` in the catalogue (`grader.report.messages.CLI_COMMAND`).
"""

SUBCOMMANDS = {
    "checks": "grader.report.check_list",
    "hint": "grader.report.hint_command",
    "quiz": "grader.quiz.cli",
    "batch": "grader.instructor.batch",
    "gradescope-bundle": "grader.instructor.gradescope_bundle",
    "classroom50": "grader.instructor.classroom50",
    "export-student": "grader.instructor.export_student",
    "watch": "grader.watch",
    "report": "grader.plugin.report_file",
    "catalogue": "grader.instructor.catalogue",
}
