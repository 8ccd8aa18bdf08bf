"""`python -m grader.harness.target ARGS`: a target server in a fresh interpreter, as
`python -m grader.harness.target.server ARGS` (same arguments, same life), started so for less:
the portable path's target processes (grader.harness.processes.portable.spawn_target) and
`launch.spawn` start it so.

Run as `-m grader.harness.target.server`, the server's module ran twice (as `__main__`, then
imported under its real name, which its main needs: one SendFailed class for the code under
grade and the server); here it is imported once. The collector is off while it imports (its
passes over what is being imported find no garbage), and what the imports made is then frozen
(`gc.freeze`: never traversed again by the collections the code under grade's objects cause),
as the fork path's zygote freezes its own before it forks a target. Issue 42: every target
process of the portable path is a fresh interpreter, and its start is most of that path's cost.
"""

import gc
import os
import sys

if __name__ == "__main__":
    gc.disable()
    from grader.harness.target import server

    gc.freeze()
    gc.enable()
    sys.stdout.flush()
    os._exit(server.main())
