"""The transaction shape of one call into the target, read from the SQL it ran on `conn`.

The grader's trace callback sees every statement the target runs on the connection it was
given (`lab.statements_of(call)`). From that list alone this module tells whether the
statements on `jobs` ran inside exactly one `BEGIN IMMEDIATE` ... `COMMIT`, and if not, which
statement is the first to break the rule, so the failure can list the statements in order with
that one marked.

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
- a statement is "on jobs" when it names the table `jobs` outside its comments and string
  literals (`SELECT sqlite_version() -- jobs ...` and `SELECT count(*) FROM sqlite_master WHERE
  name = 'jobs'` are not); a PRAGMA never is, not even `PRAGMA table_info(jobs)` (it reads the
  schema, takes no row); other statements (PRAGMA, SELECT 1) may run anywhere; one on jobs outside the transaction is told apart as a read or a write (an
  INSERT, UPDATE, DELETE or REPLACE: committed on its own, which no rollback can undo), and a
  read as before the transaction opened ('outside': it holds no lock when it chooses) or after
  it ended ('read-after': the lock is gone, the row may have changed since the COMMIT);
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

from grader.harness.interleave import names, sql_line, verb, words

_WRITES = ("INSERT", "UPDATE", "DELETE", "REPLACE")

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


def distinct(statements: list[str]) -> list[str]:
    """The statements with consecutive repeats dropped."""
    return [sql for i, sql in enumerate(statements) if i == 0 or sql != statements[i - 1]]


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


def on_jobs(sql: str) -> bool:
    """Does the statement name the table jobs, as SQLite reads it (a `jobs` in a comment or in a
    string literal, such as sqlite_master's `name = 'jobs'`, is no name)? A PRAGMA never is: it
    reads the schema (`PRAGMA table_info(jobs)`), never a row, so it may run anywhere."""
    return "jobs" in names(sql) and opening(sql) is None and verb(sql) != "PRAGMA"


def is_write(sql: str) -> bool:
    """Does the statement open with INSERT, UPDATE, DELETE or REPLACE (after its comments)?"""
    return verb(sql) in _WRITES


def problem(statements: list[str], need_sql: bool = True) -> Problem | None:
    """The first break of 'every statement on jobs inside one BEGIN IMMEDIATE ... COMMIT'.

    `need_sql`: running no statement on jobs at all is a problem ('no-sql')."""
    sqls = distinct(statements)
    on_table = sum(on_jobs(sql) for sql in sqls)
    if on_table == 0:
        return Problem("no-sql", None) if need_sql else None
    if on_table == 1:
        return None
    if not any(opening(sql) for sql in sqls):
        return Problem("no-transaction", next(i for i, sql in enumerate(sqls) if on_jobs(sql)))
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
        elif opened_by is None and on_jobs(sql):
            if is_write(sql):
                return Problem("write-outside", i)
            return Problem("read-after" if transactions else "outside", i)
    if opened_by is not None:
        return Problem("left-open", len(sqls) - 1)
    return None


def listing(statements: list[str], at: int | None = None) -> str:
    """The statements, numbered, one a line, the one at index `at` marked with ▶."""
    sqls = distinct(statements)
    if not sqls:
        return "    (no SQL)"
    return "\n".join(f"  {MARK if i == at else ' '} {i + 1:>2}  {sql_line(sql, WIDTH)}"
                     for i, sql in enumerate(sqls))
