"""The transaction shape of one call into the target, read from the SQL it ran on `conn`.

The grader's trace callback sees every statement the target runs on the connection it was
given, and SQLite's authorizer which tables each one reads or writes (`lab.traced_of(call)`:
(sql, tables) pairs, TargetProcess.statements). From that list alone this module tells whether
the statements on `jobs` ran inside exactly one `BEGIN IMMEDIATE` ... `COMMIT`, and if not,
which statement is the first to break the rule, so the failure can list the statements in order
with that one marked.

How the statements are read (what the contract leaves open, decided here):
- as SQLite's tokenizer reads them (interleave.words): a comment is whitespace wherever it
  stands (`BEGIN -- note` + newline + `IMMEDIATE` is BEGIN IMMEDIATE), a string literal is one
  token;
- a transaction opens with `BEGIN [DEFERRED|IMMEDIATE|EXCLUSIVE] [TRANSACTION]`, or with a
  `SAVEPOINT` outside a transaction (which SQLite opens as a deferred transaction); it ends with
  `COMMIT`, `END` or `ROLLBACK` (not `ROLLBACK TO`), or with the `RELEASE` of the savepoint that
  opened it;
- only `IMMEDIATE` counts: a deferred one (plain `BEGIN`, `BEGIN DEFERRED`, `SAVEPOINT`) takes
  the write lock only at its first write, and `EXCLUSIVE` also locks out every reader;
- a statement is "on jobs" when SQLite's authorizer, as the judge's connection prepared it,
  says it reads or writes the table `jobs` of the main database (dbhost.DbHost.tables_read):
  however the code names it (`jobs`, `"jobs"`, `[jobs]`, `main.jobs`, or `'jobs'`, a string
  literal SQLite takes as the table's name), and through a view or a trigger of the code's.
  A TEMP table named jobs is not (`temp.jobs`: the connection's own table, not the queue; only
  a read of no column of it named without its schema, `SELECT count(*) FROM jobs`, which SQLite
  reports with no schema, counts as on jobs), nor a CTE named jobs, nor sqlite_master (`SELECT
  count(*) FROM sqlite_master WHERE name = 'jobs'`); a PRAGMA never is, not even
  `PRAGMA table_info(jobs)` (it reads the schema, takes no row). Where the tables are not known
  (None: a statement given as text alone, as the tests write them), the text is read instead:
  it names `jobs` outside its comments and string literals (`SELECT sqlite_version() -- jobs`
  is not);
- other statements (PRAGMA, SELECT 1) may run anywhere; one on jobs outside the transaction is
  told apart as a read or a write (an INSERT, UPDATE, DELETE or REPLACE: committed on its own,
  which no rollback can undo), and a read as before the transaction opened ('outside': it holds
  no lock when it chooses) or after it ended ('read-after': the lock is gone, the row may have
  changed since the COMMIT);
- a lone statement on jobs is atomic by itself however it is wrapped (SQLite takes the write
  lock at the start of a writing statement, before it reads), so only several statements on
  jobs need the one BEGIN IMMEDIATE; an open transaction left behind is told by
  `conn.in_transaction`, not here;
- consecutive identical statements count once (SQLite reports a statement again when a trigger
  program starts inside it).
Pure functions: no database, no Lab.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable, Optional, Union

from grader.harness.judge.interleave import names, sql_line, verb, words

_WRITES = ("INSERT", "UPDATE", "DELETE", "REPLACE")
#: The queue's table, as the authorizer's tables name it (dbhost: lower case, main's unqualified).
JOBS = "jobs"

#: A statement as the shape is read from: its text with the tables it reads or writes, as SQLite's
#: authorizer told (None: not known), or its text alone (tables not known).
Traced = Union[str, tuple[str, Optional[frozenset]]]

MARK = "▶"
WIDTH = 160  # characters of one statement shown in a listing


@dataclass(frozen=True)
class Problem:
    """What is wrong with the shape: `code` names the rule, `at` the statement (index) to mark."""

    # no-sql | no-transaction | outside (a read before the transaction) | read-after (a read
    # after it ended) | write-outside | not-immediate | exclusive | several | left-open
    code: str
    at: int | None
    begin: str = ""  # the opening statement, for not-immediate / exclusive


def traced(statements: Iterable[Traced]) -> list[tuple[str, frozenset | None]]:
    """The statements as (sql, tables), consecutive repeats of a text counted once (the tables
    of all of them: a repeat may be the one the authorizer told of)."""
    found: list[tuple[str, frozenset | None]] = []
    for item in statements:
        sql, tables = (item, None) if isinstance(item, str) else item
        if found and found[-1][0] == sql:
            before = found[-1][1]
            found[-1] = (sql, tables if before is None else
                         before if tables is None else before | tables)
        else:
            found.append((sql, tables))
    return found


def distinct(statements: Iterable[Traced]) -> list[str]:
    """The statements' texts with consecutive repeats dropped."""
    return [sql for sql, _ in traced(statements)]


def _keywords(sql: str, n: int = 3) -> list[str]:
    """The first `n` words of `sql` as SQLite reads them (comments anywhere are whitespace),
    upper-case."""
    return [w.upper() for w in words(sql)[:n]]


def opening(sql: str) -> str | None:
    """How `sql` opens a transaction: 'IMMEDIATE', 'DEFERRED', 'EXCLUSIVE', 'SAVEPOINT' or None.

    (A SAVEPOINT opens one only when no transaction is open: the caller knows that.)"""
    first = _keywords(sql, 2)
    if first[:1] == ["BEGIN"]:
        mode = first[1] if len(first) > 1 else ""
        return mode if mode in ("DEFERRED", "IMMEDIATE", "EXCLUSIVE") else "DEFERRED"
    return "SAVEPOINT" if first[:1] == ["SAVEPOINT"] else None


def _ends(sql: str, savepoint: bool) -> bool:
    """Does `sql` end the open transaction (COMMIT, END, ROLLBACK but not ROLLBACK TO, or the
    RELEASE of the savepoint that opened it: `savepoint`)?"""
    first = _keywords(sql)
    if not first:
        return False
    if first[0] in ("COMMIT", "END"):
        return True
    if first[0] == "ROLLBACK":
        rest = first[1:]
        return not (rest[:1] == ["TO"] or rest[:2] == ["TRANSACTION", "TO"])
    return savepoint and first[0] == "RELEASE"


def on_jobs(sql: str, tables: frozenset | None = None) -> bool:
    """Does the statement read or write the table jobs? `tables`: those SQLite's authorizer said
    it reads or writes (dbhost.DbHost.tables_read: the main database's by name, a TEMP table's
    as `temp.name`); None where not known: then, does its text name the table, as SQLite reads
    it (a `jobs` in a comment or in a string literal, such as sqlite_master's `name = 'jobs'`,
    is no name)? A PRAGMA never is: it reads the schema (`PRAGMA table_info(jobs)`), never a
    row, so it may run anywhere; nor is a transaction's BEGIN or SAVEPOINT."""
    if opening(sql) is not None or verb(sql) == "PRAGMA":
        return False
    return JOBS in tables if tables is not None else JOBS in names(sql)


def is_write(sql: str) -> bool:
    """Does the statement open with INSERT, UPDATE, DELETE or REPLACE (after its comments)?"""
    return verb(sql) in _WRITES


def problem(statements: Iterable[Traced], need_sql: bool = True) -> Problem | None:
    """The first break of 'every statement on jobs inside one BEGIN IMMEDIATE ... COMMIT'.

    `statements`: (sql, tables) pairs (`Traced`; a text alone: its tables not known).
    `need_sql`: running no statement on jobs at all is a problem ('no-sql')."""
    read = traced(statements)
    sqls = [sql for sql, _ in read]
    on = [on_jobs(sql, tables) for sql, tables in read]
    on_table = sum(on)
    if on_table == 0:
        return Problem("no-sql", None) if need_sql else None
    if on_table == 1:
        return None
    if not any(opening(sql) for sql in sqls):
        return Problem("no-transaction", on.index(True))
    opened_by: str | None = None  # the mode of the open transaction, None outside one
    transactions = 0
    for i, sql in enumerate(sqls):
        mode = opening(sql)
        if opened_by is None and mode is not None:
            transactions += 1
            if transactions > 1:
                return Problem("several", i)
            if mode == "EXCLUSIVE":
                return Problem("exclusive", i, begin=sql_line(sql, WIDTH))
            if mode != "IMMEDIATE":
                return Problem("not-immediate", i, begin=sql_line(sql, WIDTH))
            opened_by = mode
        elif opened_by is not None and _ends(sql, opened_by == "SAVEPOINT"):
            opened_by = None
        elif opened_by is None and on[i]:
            if is_write(sql):
                return Problem("write-outside", i)
            return Problem("read-after" if transactions else "outside", i)
    if opened_by is not None:
        return Problem("left-open", len(sqls) - 1)
    return None


def listing(statements: Iterable[Traced], at: int | None = None) -> str:
    """The statements, numbered, one a line, the one at index `at` marked with ▶."""
    sqls = distinct(statements)
    if not sqls:
        return "    (no SQL)"
    return "\n".join(f"  {MARK if i == at else ' '} {i + 1:>2}  {sql_line(sql, WIDTH)}"
                     for i, sql in enumerate(sqls))
