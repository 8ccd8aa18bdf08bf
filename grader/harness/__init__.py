"""The harness: everything that loads or runs the code under grade, or its processes.

Lives here: loading the target (`target`), the forked sandbox a check runs in (`sandbox`), what a
check body sees (`scenario.Lab`: a fresh database, the target's functions wrapped and recorded),
the connection handed to the target, whose own trace callback never replaces the grader's
(`watched`), the cross-process statement barrier (`interleave`), claimers for the race and crash
checks, each in a target process of its own driven from a judge thread (`children`), the integration workers (`workers`), the HTTP receiver (`receiver`),
spotting a journal-mode switch in traced SQL (`journal`), and the target process (not used yet):
the code under grade in a process of its own (`target_server`) that the judge drives through a
proxy (`target_client`) over a data-only, strictly validated line protocol (`wire`), forked
from a prepared process rather than started afresh (`zygote`).

May import: `lab`, the standard library and the grader's top-level basics (`grader.results`,
`grader.checkdef`, `grader.config`). Never `grader.report` (words are not decided here),
`grader.checks`, `grader.runner`, `grader.quiz`, `grader.instructor` or `grader.cli`.
"""
