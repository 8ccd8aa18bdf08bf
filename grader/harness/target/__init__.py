"""The target's side: what runs in a target process beside the code under grade, or in the zygote
that forks such processes. Nothing here decides anything, and nothing it says is believed: the
judge validates every byte that comes back over the wire.

    server         the target process: loads the code under grade, answers the judge's calls
                   one JSON line at a time, sends nothing but plain data (over two fds, or
                   its stdin and stdout on the portable path: `--stdio`)
    threads        the code's own threads as the server waits for them: which are idle, read
                   from their frames (`blocked`), never from timing; a send held on its thread
    lifeline       the process's ties to its judge: its channel's fds hidden, the portable
                   path's channel on stdin and stdout, its end once its judge has ended
    printed        what the code prints, kept for the reply to its call; breakpoint() refused
    sealing        the sealed packages and what the jail lets the code read
    dbproxy        the `conn` the code is handed: every database operation is a request to the
                   judge, which holds the real connection (no database handle lives here)
    proxycursor    its cursor, and the parameters and errors both share
    functions      the code's own SQL functions, aggregates and collations: kept here, run
                   when the judge's SQLite calls their stand-ins
    filewatch      connections of its own the code opens to the judge's databases, seen by an
                   audit hook and reported in a reply
    loader         load the implementation under grade (a module name or a .py path), and the
                   names a target is shown by (used by the command line too: it imports nothing)
    compiled       the code under grade compiled once per grade, in the zygote
    zygote_server  the zygote: a prepared interpreter that forks target servers

May import: `lab`, the standard library, `grader.harness.wire` and `grader.harness.processes`
(the jail, the fork loop). Never `grader.harness.judge`: what holds the real databases and the
verdicts is not in a process the code under grade can read or write.
"""
