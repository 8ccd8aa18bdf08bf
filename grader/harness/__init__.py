"""The harness: everything that loads or runs the code under grade, or its processes.

The judge (a check's body, run by `sandbox` in a lane of the runner or in a forked child, and
whatever it started swept after it: `hygiene`) never imports the code under grade. That code runs
in a target process of its own (`target_server`; `filewatch`: the connections of its own it opens
to the judge's databases), forked for each check from one prepared interpreter (`zygote`, the
judge's side; `zygote_server`, the zygote itself, on the fork loop it shares with the batch's fork
server, `forkloop`, which compiles the code under grade once for its targets, `compiled`) or
spawned (`launch`: the launchers' protocol, `spawn`, `LAUNCH_ENV`), jailed with Landlock
(`jail`, which jails the judges to their own work folder too), and driven by the judge through a proxy (`target_client`) over a data-only, strictly
validated line protocol (`wire`; what a call returns or raises: `values`, the encoder beside its
decoder). Lives here too: loading the target inside that process (`target`), what a
check body sees (`scenario.Lab`: a fresh database, the target's functions wrapped and recorded,
rows read on the judge's own connection), the judge's databases: the real connections behind the
proxies the code under grade is handed (`dbhost`, in the judge: the trace, the gate, the fault
counts live there) and those proxies (`dbproxy`, in the target process, holding no database
handle), a real connection whose trace callback never replaces the grader's (`watched`), the
statement gates' reading of SQL (`interleave`), every order of two claims' statements that can
matter (`explore`), the race and crash claimers, each a target process on a gated connection
(`children`), the integration workers, judge threads each driving a target process (`workers`), the
HTTP receiver (`receiver`), spotting a journal-mode switch in traced SQL (`journal`), and the world
a check runs in, drawn from one seed: times, lease length, names, quantities, job ids, file names
(`world`; the lesson's seed gives the lesson's values).

May import: `lab`, the standard library and the grader's top-level basics (`grader.results`,
`grader.checkdef`, `grader.config`). Never `grader.report` (words are not decided here),
`grader.checks`, `grader.runner`, `grader.quiz`, `grader.instructor` or `grader.cli`.
"""
