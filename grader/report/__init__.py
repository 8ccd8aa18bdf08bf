"""Reports: check results turned into words and files, and every output format.

Lives here: the message catalogue (`messages` + `catalogue/*.json`, English and Japanese), the
view every writer reads (`view`: each check result in words, cut to the detail level; the
sentences it is made of, `sentences`; the shared causes of failures it leads with, `causes`), its
plain text (`render`), the terminal report (`terminal`), the HTML report and its SVG timeline (`html`,
`timeline_svg`, `templates/`), Gradescope's results.json (`results_json`: its only builder,
reader and writer, graded or not, and the batch statuses), JUnit XML (`junit`), PrairieLearn's
results.json (`prairielearn`), a Markdown job summary (`markdown`), Classroom 50's result.json
made from a results.json (`classroom50`: an autograder only has the isolated grade's
results.json), the check catalogue as text (`check_list`), atomic writes (`files`) and ASCII
stand-ins on a console that cannot write the reports' symbols (`console`). A new
output format is one small module here, reading the view.

May import: `lab.store` (column names), the standard library, jinja2, and the grader's
top-level basics (`grader.results`, `grader.checkdef`, `grader.config`). Never
`grader.harness`: a report only reads results, it never runs or loads the code under grade.
Never `grader.checks`, `grader.runner`, `grader.quiz`, `grader.instructor` or `grader.cli`.
"""
