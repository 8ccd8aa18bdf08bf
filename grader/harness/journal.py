"""Spotting a target that changes the journal mode (the lab requires the rollback journal).

A claim that switches the database to WAL breaks the multi-process checks in ways that depend on
timing (whose connection holds a lock at the moment of the switch): those checks look for the
switch itself in the SQL the target ran, so their verdict is the same on every run.
"""

from __future__ import annotations

import re

from .interleave import bare

_SET_JOURNAL = re.compile(r"^PRAGMA\s+(?:\w+\.)?journal_mode\s*=\s*['\"]?(\w+)", re.I)


def switched_to(sql: str) -> str | None:
    """The journal mode `sql` sets, when it sets one other than DELETE; else None."""
    found = _SET_JOURNAL.match(bare(sql))
    if found and found.group(1).lower() != "delete":
        return found.group(1).lower()
    return None
