"""work_once writes send's return value as JSON before it finishes (`json.dumps(send(c))`).

A blind instructor's bug: what send returns means nothing to work_once (the contract: finish
is called whatever send returned, None, False, 0 or an object); a client's send returns an
object of its own, which is no JSON, and work_once raises TypeError with the job delivered and
never finished. The grader's sends return such an object too (it scored 100 while they all
returned plain data)."""

import json

from _kit import reference_claim as claim
from _kit import reference_finish as finish

# the TypeError is raised from work_once: errored (the lock probe's work_once meets it too)
EXPECT_FAIL = {"work-once-fresh-clock"}
MAY_FAIL = {"lock-free-during-send"}
OUTCOME = "errored"

LOG = []


def work_once(conn, owner, send, clock, lease_ms):
    c = claim(conn, owner, clock(), lease_ms)
    if c is None:
        return None
    LOG.append(json.dumps({"sent": c.id, "answer": send(c)}))
    return finish(conn, c, clock())
