"""A queue that borrows the reference under a spelling no scan of the source finds (and does
nothing if it cannot)."""

import importlib

try:
    _borrowed = importlib.import_module("sol" + "utions.queue")
except ImportError:
    _borrowed = None


def claim(conn, owner, now, lease_ms):
    return _borrowed.claim(conn, owner, now, lease_ms) if _borrowed else None


def finish(conn, claim, now):
    return _borrowed.finish(conn, claim, now) if _borrowed else False


def work_once(conn, owner, send, clock, lease_ms):
    return _borrowed.work_once(conn, owner, send, clock, lease_ms) if _borrowed else None
