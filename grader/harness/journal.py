"""Spotting a target that changes how its connection waits for others, in the SQL it ran.

A claim that switches the database to WAL breaks the multi-process checks in ways that depend on
timing (whose connection holds a lock at the moment of the switch): those checks look for the
switch itself in the SQL the target ran, so their verdict is the same on every run (the lab
requires the rollback journal). A claim that lowers the busy timeout makes the second of two
claimers fail with "database is locked" where it should have waited: the race check names that
cause from the PRAGMA it finds.
"""

from __future__ import annotations

import re

from .interleave import plain

_SET_JOURNAL = re.compile(r"^PRAGMA\s+(?:\w+\.)?journal_mode\s*=\s*['\"]?(\w+)", re.I)
_SET_BUSY_TIMEOUT = re.compile(
    r"^PRAGMA\s+(?:\w+\.)?busy_timeout\s*(?:=\s*|\(\s*)['\"]?([+-]?\d+)", re.I)


def switched_to(sql: str) -> str | None:
    """The journal mode `sql` sets, when it sets one other than DELETE; else None."""
    found = _SET_JOURNAL.match(plain(sql))
    if found and found.group(1).lower() != "delete":
        return found.group(1).lower()
    return None


def busy_timeout_set(sql: str) -> int | None:
    """The busy timeout in ms that `sql` sets (`PRAGMA busy_timeout = N` or `(N)`; a negative N
    is no wait at all: 0), else None."""
    found = _SET_BUSY_TIMEOUT.match(plain(sql))
    return max(0, int(found.group(1))) if found else None
