"""Not an attack: what the learned-answer attacks learn from. It runs the reference and writes
down every call the grader makes (the arguments, the jobs table before and after, the result)
and whatever could tell one check from another (the environment, argv, the database's file
name), one JSON line a call, to $LEASELAB_ATTACK_DIR/calls.jsonl. Graded at the lesson's seed
it sees exactly what a student reading the grader's reports, run after run, could piece
together: every expected Claim, every expected row."""

import json
import os
import sys

from solutions import queue as reference

LOG = os.path.join(os.environ.get("LEASELAB_ATTACK_DIR", "."), "calls.jsonl")
CALLS = [0]  # calls made in this process so far


def rows(conn):
    return [list(r) for r in conn.execute("SELECT * FROM jobs ORDER BY id").fetchall()]


def signals(conn):
    """What a table keyed on the check's name could key on, and the call's number."""
    path = conn.execute("PRAGMA database_list").fetchone()[2]
    CALLS[0] += 1
    return {"env": os.environ.get("PYTEST_CURRENT_TEST", ""), "argv": " ".join(sys.argv),
            "db": os.path.basename(path or ""), "n": CALLS[0]}


def note(entry):
    with open(LOG, "a", encoding="utf-8") as f:
        f.write(json.dumps(entry) + "\n")


def claim(conn, owner, now, lease_ms):
    before, where = rows(conn), signals(conn)
    got = reference.claim(conn, owner, now, lease_ms)
    note({"fn": "claim", "args": [owner, now, lease_ms], "before": before, "signals": where,
          "result": None if got is None else list(vars(got).values()), "after": rows(conn)})
    return got


def finish(conn, claim, now):
    before, where = rows(conn), signals(conn)
    got = reference.finish(conn, claim, now)
    note({"fn": "finish", "args": [list(vars(claim).values()), now], "before": before,
          "signals": where, "result": got, "after": rows(conn)})
    return got


def work_once(conn, owner, send, clock, lease_ms):
    got = claim(conn, owner, clock(), lease_ms)
    if got is None:
        return None
    send(got)
    return finish(conn, got, clock())
