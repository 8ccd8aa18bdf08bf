"""work_once starts send on a thread of its own and finishes without waiting for it.

"The delivery goes on in the background": but the job is marked done whether or not it was
delivered, and a send that fails is never heard of: work_once returns True. Its finishing
clock is read while send runs, in every run: the helper thread calls send before the reading
goes to the judge, and sending takes time (grader.harness.target.server: a send on a thread of
the code's own returns only once the call's thread has read the clock, waits or returns), so
the clock rule breaks wherever its check's own verdicts hold, and the verdict is the same in
every run (`python -m grader --repeat 20`: no unstable check)."""

import threading

from _kit import reference_claim as claim
from _kit import reference_finish as finish

# issue 38: every call is also held to the contract's rules after it (no transaction or
# statement left open, every row as the model makes it), at the domain's sizes: the checks
# that meet its finish taken while send runs fail in every world and every run (a sweep of 8
# worlds, --repeat 20), so they are expected, not only allowed
EXPECT_FAIL = {"work-once-send-raises", "random-timelines", "late-finish-in-time",
               "late-finish-job-done", "late-finish-lease-taken", "late-finish-past-deadline",
               "late-finish-same-name", "lock-free-during-send", "work-once-empty-queue",
               "work-once-fresh-clock"}
EXPECT_TEXT = {"work-once-send-raises": "but work_once returned True"}


def work_once(conn, owner, send, clock, lease_ms):
    c = claim(conn, owner, clock(), lease_ms)
    if c is None:
        return None
    threading.Thread(target=send, args=(c,), daemon=True).start()  # never joined
    return finish(conn, c, clock())
