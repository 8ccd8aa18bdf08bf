"""The judge's side: what decides. It runs in a lane of the runner or a forked judge, never in a
process that imported the code under grade, and believes only what it validated.

    checkrun       one check's run (start the target, run the body on a Lab, every ending
                   a failure) and the grade's probe before any check
    dbhost         the real sqlite3 connections behind the code's proxies: the lockdown, the
                   trace, the statement gate, the fault counts
    hosted         one real connection as dbhost hosts it: its cursors, what the authorizer
                   and the trace told of the code's statements, the statement cache's texts
    dbvalues       how dbhost carries values, rows and errors across the channel
    lockdown       the bounds and the authorizer of the real connections that run the code's SQL
    invariants     the rules true after every call of claim, finish and work_once, checked
                   after each whatever the check is about
    outcomes       how a check's run ends (its exceptions, a lost target's failures) and how
                   values and errors are shown on a timeline
    callbacks      the stand-ins of the code's SQL functions on its real connection: each
                   call asks the target, and only a validated SQLite value comes back
    watched        a real connection whose trace callback stays the grader's
    scenario       what a check body sees: the Lab (a fresh database, the target's functions
                   wrapped, recorded and type-checked)
    verdicts       the Lab's verdicts (expect, fail...), each raising a Failure, and the stop
                   at a function the grade saw hang
    world          the world a check runs in, drawn from one seed
    target_client  the judge's handle on a target process: start it, call into it
    interleave     what the gates read off a statement
    explore        every order of two claims' statements that can matter
    journal        a journal-mode switch in traced SQL
    claimtypes     a Claim's exact field types
    target_pipe    the channel's two pipes read and written with a timeout (select, or a
                   reader thread on the portable path), the launcher, a target's kill
    target_errors  what goes wrong with a target process, as the judge tells it
    target_fields  small pieces of target_client: the target's environment, a reply's fields
    target_gate    the statement gate of a target's gated connections: asked before each
                   statement of a claim on one
    children       the race and crash claimers, each a target process on a gated connection
    workers        the integration run's workers, judge threads each driving a target process
    receiver       the integration run's HTTP receiver and its ledger

May import: `lab`, the standard library, the grader's top-level basics, `grader.harness.wire` and
`grader.harness.processes`. Never `grader.harness.target`: the judge talks to the target process
over the wire only.
"""
