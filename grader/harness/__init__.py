"""The harness: everything that loads or runs the code under grade, or its processes.

Its most important line is between its sides, and the folders show it:

    harness/target/     runs in the target process, beside the code under grade (or in the zygote
                        that forks such processes): believed in nothing
    harness/judge/      runs in the judge and decides: the real databases, the Lab a check sees,
                        the world, the explorer of interleavings, the race, crash and integration
                        processes' handles
    harness/processes/  the process machinery both sides stand on: the sandbox that runs a judge,
                        the zygote's launcher, the fork loop, the jail, process hygiene, work
                        folders
    harness/wire/       the data-only line protocol between the sides, and the codec of what a
                        call returns or raises: the only thing `target` and `judge` both import

The judge (a check's body, run by `processes.sandbox` in a lane of the runner or in a forked
child) never imports the code under grade: that runs in a target process of its own
(`target.server`), forked for each check from one prepared interpreter (`processes.zygote`, the
judge's side; `target.zygote_server`, the zygote itself) or spawned (`processes.launch`), jailed
with Landlock (`processes.jail`), and driven by the judge through a proxy
(`judge.target_client`) over the validated line protocol (`wire`). The code's `conn` is a proxy
(`target.dbproxy`) for a real connection in the judge (`judge.dbhost`).

Inside the harness: `target` imports `wire` and `processes` only, never `judge`; `judge` imports
`wire` and `processes`, never `target`; `processes` imports neither side; `wire` imports nothing
of the grader (tests/test_layers.py holds it).

May import: `lab`, the standard library and the grader's top-level basics (`grader.results`,
`grader.checkdef`, `grader.config`). Never `grader.report` (words are not decided here),
`grader.checks`, `grader.runner`, `grader.quiz`, `grader.instructor` or `grader.cli`.
"""
