"""Spotting a target that changes how its connection waits for others, in the SQL it ran.

A claim that switches the database to WAL breaks the multi-process checks in ways that depend on
timing (whose connection holds a lock at the moment of the switch): those checks look for the
switch itself in the SQL the target ran, so their verdict is the same on every run (the lab
requires the rollback journal). A claim that lowers the busy timeout makes the second of two
claimers fail with "database is locked" where it should have waited: the race check names that
cause from the PRAGMA it finds.
"""

from __future__ import annotations

from .interleave import words


def _unquoted(token: str) -> str:
    """A name or value token as SQLite reads it: a string literal, a quoted identifier ("x",
    [x], `x`) or a word, its quotes taken off."""
    if len(token) >= 2 and token[0] in "'\"`" and token[-1] == token[0]:
        return token[1:-1].replace(token[0] * 2, token[0])
    if len(token) >= 2 and token[0] == "[" and token[-1] == "]":
        return token[1:-1]
    return token


def pragma(sql: str) -> tuple[str, str | None] | None:
    """(name, value) of a PRAGMA statement, read as SQLite reads it: comments anywhere, the name
    and the value quoted or not, a schema before the name, `= value` or `(value)`, a sign before
    a number; value None for a PRAGMA that only reads. None for any other statement."""
    tokens = words(sql)
    if len(tokens) < 2 or tokens[0].upper() != "PRAGMA":
        return None
    rest = tokens[1:]
    if len(rest) >= 3 and rest[1] == ".":  # schema.name
        rest = rest[2:]
    name = _unquoted(rest[0]).lower()
    if len(rest) < 3 or rest[1] not in ("=", "("):
        return name, None
    value = rest[2]
    if value in ("+", "-") and len(rest) >= 4:
        value = value + rest[3]
    return name, _unquoted(value)


def switched_to(sql: str) -> str | None:
    """The journal mode `sql` sets, when it sets one other than DELETE; else None."""
    found = pragma(sql)
    if found and found[0] == "journal_mode" and found[1] is not None \
            and found[1].lower() != "delete":
        return found[1].lower()
    return None


def busy_timeout_set(sql: str) -> int | None:
    """The busy timeout in ms that `sql` sets (`PRAGMA busy_timeout = N` or `(N)`; a negative N
    is no wait at all: 0), else None."""
    found = pragma(sql)
    if not found or found[0] != "busy_timeout" or found[1] is None:
        return None
    try:
        return max(0, int(found[1]))
    except ValueError:
        return None
