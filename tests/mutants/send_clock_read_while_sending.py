"""work_once runs send on a helper thread and reads the finishing clock while send is still
running, then waits for send and finishes with that reading.

The finish uses a time from before send ended: a lease that ran out during send still looks
valid. The contract: the finishing clock() is read after send has returned, on whatever thread
send ran. The reading is taken while send runs in every run, whichever thread the machine runs
first: the helper's send returns only once work_once's thread has read the clock or waits."""

import threading

from _kit import reference_claim as claim
from _kit import reference_finish as finish

# the class of work_clock_read_before_send; the checks that also meet its clock reading taken
# during send are the same in every grade (the target orders a helper thread's send and the
# clock: grader.harness.target.threads, `Threads.hold`)
LIGHT = True
# every check that meets its clock reading taken during send fails in every world and every
# run (a sweep of 8 worlds, --repeat 20): expected, not only allowed
EXPECT_FAIL = {"work-once-fresh-clock", "late-finish-in-time", "late-finish-job-done",
               "late-finish-lease-taken", "late-finish-past-deadline", "late-finish-same-name",
               "lock-free-during-send", "work-once-empty-queue", "random-timelines"}
EXPECT_TEXT = {"work-once-fresh-clock": "read no clock after send had returned"}


def work_once(conn, owner, send, clock, lease_ms):
    c = claim(conn, owner, clock(), lease_ms)
    if c is None:
        return None
    outcome = {}

    def run():
        try:
            send(c)
        except BaseException as exc:  # handed to work_once's caller below
            outcome["error"] = exc

    helper = threading.Thread(target=run)
    helper.start()
    now = clock()  # read while send may still run
    helper.join()
    if "error" in outcome:
        raise outcome["error"]
    return finish(conn, c, now)
