"""Instructor tools: grading a class and shipping the lab. Students never get this package.

Lives here: `batch` (a class of submissions in parallel), `isolated` (one submission graded in
its own process and folder), `fork_server` (batch's one prepared process that forks those
processes), `submission` (which queue.py a submission is graded by),
`gradebook` and `class_report` (the class's results as CSV and HTML), `lms` (a roster, the
Canvas and Moodle import files and per-student feedback), `progress`, the Gradescope bundle and
its autograder entry (`gradescope_bundle`, `autograder`), the Classroom 50 autograder folder and
its entry (`classroom50`, `classroom50_autograder`), the student export (`export_student`) and
what a student copy may hold (`distribution`), with their templates.

`export-student` leaves this whole folder out of the student copy; the Gradescope bundle and the
Classroom 50 folder ship it beside the student copy (their entries need `isolated` and
`submission`).

May import anything in the grader. Nothing outside this package imports it (the CLI names its
subcommands by module path only), so the student copy works without it; a test holds that.
"""
