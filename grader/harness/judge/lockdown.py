"""The judge's lockdown of the real connections that run the code's SQL (dbhost): the bounds set
on each (`lock_down`: SQLite's limits, defensive mode, an untrusted schema, memory for
temporary tables, page counts, the heap) and the authorizer that keeps the code's statements
inside them (`authorize`: no file opened, no bound or process-wide PRAGMA set, no extension
loaded, the judge's tables, triggers and functions untouched). docs/protocol.md, "The judge's
databases".
"""

from __future__ import annotations

import sqlite3

from grader.harness import wire

#: The SQL function that counts a fault trigger's firings (only a trigger may call it).
COUNTER = "harness_count"
#: The SQL function that fails (its Python body raises, so sqlite3 raises OperationalError "user-
#: defined function raised exception": a database error that is not a lock); only a trigger the
#: judge created may call it, as COUNTER.
FAILER = "harness_fail"
#: What sqlite3 raises for a statement in which FAILER ran (OperationalError).
FAILER_MESSAGE = "user-defined function raised exception"
#: The judge's own SQL functions: the code's SQL may not call them.
JUDGE_FUNCTIONS = (COUNTER, FAILER)
#: The authorizer's actions by which a statement reads or writes a table's rows (arg1: the table).
TABLE_ACTIONS = frozenset((sqlite3.SQLITE_READ, sqlite3.SQLITE_INSERT, sqlite3.SQLITE_UPDATE,
                            sqlite3.SQLITE_DELETE))


def table_key(name, database) -> str:
    """How a table the authorizer names is recorded: its name, lower case, for a table of the
    main database (or of no schema named: SQLite names none for a read of no column of a table
    named without one, `SELECT count(*) FROM jobs`); `schema.name` for another (`temp.jobs`: a
    TEMP table of the connection's own, not the database's jobs)."""
    table = str(name).lower()
    schema = "main" if database is None else str(database).lower()
    return table if schema == "main" else f"{schema}.{table}"


#: PRAGMAs that set something for the whole judge's process (where SQLite puts its temporary
#: files, how much memory it may take): refused when they set a value, whoever runs them.
_PROCESS_PRAGMAS = ("temp_store_directory", "data_store_directory", "hard_heap_limit",
                    "soft_heap_limit")
#: PRAGMAs the code may read but not set: the bounds the judge puts on its connections (sizes,
#: memory, threads, where temporary tables live) and what the connection trusts (the schema's
#: functions, writing sqlite_master, the schema cookie, CHECK constraints: what SQLite's
#: defensive mode guards, refused here on every Python, whether or not its sqlite3 has setconfig).
_BOUND_PRAGMAS = ("max_page_count", "page_size", "temp_store", "mmap_size", "threads",
                  "trusted_schema", "writable_schema", "schema_version",
                  "ignore_check_constraints")
#: journal_mode values the code may not set: OFF lets ordinary SQL corrupt the file (what
#: defensive mode turns into a no-op; refused here, the same on every Python).
_DENIED_JOURNAL_MODES = ("off",)
#: SQL functions the code may not call: they load native code or install a C pointer
#: (SQLite refuses them by default too; refused here whatever the build says).
_DENIED_FUNCTIONS = ("load_extension", "fts3_tokenizer")
#: The judge's tables: the code may not drop, rename or alter them (their schema is the lab's).
_JUDGE_TABLES = ("jobs",)
#: The longest busy timeout the code may set (PRAGMA busy_timeout): a statement waiting on a
#: lock waits in the judge's process, where no signal ends it.
MAX_BUSY_TIMEOUT_MS = 60_000
#: How often (in SQLite's virtual machine steps) a statement looks at the request's deadline.
PROGRESS_STEPS = 20_000
#: The largest string or blob a statement may make (SQLITE_LIMIT_LENGTH): what fits one message.
MAX_VALUE_BYTES = wire.MAX_LINE
#: The largest database (and temporary database) a connection may grow, in pages (64 MiB at
#: SQLite's default 4 KiB page; its page_size cannot be set from the code).
MAX_PAGES = 16_384


#: Actions no statement may take, whatever their arguments: ATTACH (a file, a URI, a bound or
#: computed name, which SQLite hands the authorizer as None; and VACUUM, which attaches its copy:
#: '' or the INTO file) and DETACH. The connections also allow 0 attached databases
#: (SQLITE_LIMIT_ATTACHED, where this Python's sqlite3 has setlimit).
_NEVER = frozenset((sqlite3.SQLITE_ATTACH, sqlite3.SQLITE_DETACH))
#: Virtual tables the code may not create or drop (FTS and the like: their shadow tables are what
#: defensive mode guards, and the lab needs none; json_each and pragma_* functions still read).
_VTABLE_ACTIONS = frozenset((sqlite3.SQLITE_CREATE_VTABLE, sqlite3.SQLITE_DROP_VTABLE))
_CREATE_TRIGGER = (sqlite3.SQLITE_CREATE_TRIGGER, sqlite3.SQLITE_CREATE_TEMP_TRIGGER)
_DROP_TRIGGER = (sqlite3.SQLITE_DROP_TRIGGER, sqlite3.SQLITE_DROP_TEMP_TRIGGER)


#: What a statement that changes the database only row by row is made of (each change counted
#: by total_changes): anything else the code prepares marks its connection `reshaped`.
_ROW_ACTIONS = frozenset(getattr(sqlite3, name) for name in (
    "SQLITE_READ", "SQLITE_SELECT", "SQLITE_TRANSACTION", "SQLITE_FUNCTION", "SQLITE_SAVEPOINT",
    "SQLITE_INSERT", "SQLITE_UPDATE", "SQLITE_DELETE", "SQLITE_RECURSIVE")
    if hasattr(sqlite3, name))


def authorize(conn, action, arg1, arg2, database, source):
    """The authorizer of connection `conn` (a dbhost connection: what it records of each
    statement prepared, and the triggers the judge created).

    harness_count and harness_fail may be called only by a trigger the judge created (`source`, the innermost
    trigger or view, is the trigger's name): not by the code's SQL, nor by a trigger or view
    of the code's, so a firing cannot be faked; and the code cannot drop the judge's triggers
    (nor create one of the same name), so a fault cannot be switched off. No statement opens a
    file: the code's SQL runs here, in the judge's process, so every ATTACH and DETACH is
    refused whatever names the file (a literal, a bound parameter or an expression, which SQLite
    hands over as None, a URI; VACUUM and VACUUM INTO attach their copy the same way), and so
    are the PRAGMAs that move the process's temporary files or set its heap. The code may read
    every PRAGMA but not set the bounds and trust `lock_down` set (`_BOUND_PRAGMAS`,
    journal_mode OFF), call load_extension or fts3_tokenizer, create or drop a virtual table,
    or drop or alter the judge's tables. Refused is SQLite's "not authorized", as a server's
    authorizer says it."""
    conn.prepared = True
    if action in TABLE_ACTIONS and arg1 is not None:
        conn.prepared_tables.add(table_key(arg1, database))
        if action != sqlite3.SQLITE_READ:
            conn.prepared_writes = True
    if conn.serving and action not in _ROW_ACTIONS and (action != sqlite3.SQLITE_PRAGMA
                                                         or arg2 is not None):
        conn.reshaped = True
        if action == sqlite3.SQLITE_PRAGMA:
            conn.settings_changed = True
    if action == sqlite3.SQLITE_FUNCTION:
        function = "" if arg2 is None else arg2.lower()
        if function in _DENIED_FUNCTIONS or (function in JUDGE_FUNCTIONS and (
                source is None or source.lower() not in conn.judge_triggers)):
            return sqlite3.SQLITE_DENY
        return sqlite3.SQLITE_OK
    if action in _CREATE_TRIGGER or action in _DROP_TRIGGER:
        name = str(arg1).lower()
        if conn.serving:
            if name in conn.judge_triggers:
                return sqlite3.SQLITE_DENY
            if action == sqlite3.SQLITE_CREATE_TRIGGER and str(arg2).lower() in _JUDGE_TABLES \
                    and str(database or "main").lower() == "main":
                # a trigger on the judge's table in the database file fires in every
                # connection's writes, the judge's own among them (its enqueue, its operator):
                # the code may keep TEMP triggers, which fire in its own connection only
                return sqlite3.SQLITE_DENY
        elif action in _CREATE_TRIGGER:
            conn.judge_triggers.add(name)
        else:
            conn.judge_triggers.discard(name)
        return sqlite3.SQLITE_OK
    if action in _NEVER:
        return sqlite3.SQLITE_DENY
    if action == sqlite3.SQLITE_PRAGMA and arg2 is not None and arg1 is not None:
        pragma = arg1.lower()
        if pragma in _PROCESS_PRAGMAS:
            return sqlite3.SQLITE_DENY
        if conn.serving and (pragma in _BOUND_PRAGMAS or (
                pragma == "journal_mode" and _word(arg2) in _DENIED_JOURNAL_MODES)):
            return sqlite3.SQLITE_DENY
        if conn.serving and pragma == "busy_timeout" and _over(arg2, MAX_BUSY_TIMEOUT_MS):
            return sqlite3.SQLITE_DENY
    if conn.serving and (action in _VTABLE_ACTIONS or _changes_judge_table(action, arg1, arg2,
                                                                           database)):
        return sqlite3.SQLITE_DENY
    return sqlite3.SQLITE_OK


def _changes_judge_table(action, arg1, arg2, database) -> bool:
    """Does the action drop or alter one of the judge's tables (in main)? SQLITE_DROP_TABLE names
    the table in arg1 and its schema in `database`; SQLITE_ALTER_TABLE the schema in arg1 and
    the table in arg2."""
    if action == sqlite3.SQLITE_DROP_TABLE:
        table, schema = arg1, database
    elif action == sqlite3.SQLITE_ALTER_TABLE:
        table, schema = arg2, arg1
    else:
        return False
    return (str(table).lower() in _JUDGE_TABLES
            and str(schema or "main").lower() == "main")


#: SQLite's limits on what one statement of the code may grow (SQLITE_LIMIT_*: set where this
#: Python's sqlite3 has Connection.setlimit, 3.11+). Where it has not (3.10), ATTACH is refused
#: by the authorizer all the same, a value or a statement too long for one message is refused
#: on its way (wire's bound, `TOO_BIG`), and the heap limit bounds every allocation.
LIMITS = {
    "SQLITE_LIMIT_ATTACHED": 0,
    "SQLITE_LIMIT_LENGTH": MAX_VALUE_BYTES,
    "SQLITE_LIMIT_SQL_LENGTH": wire.MAX_LINE,
    "SQLITE_LIMIT_EXPR_DEPTH": 1000,
    "SQLITE_LIMIT_COMPOUND_SELECT": 500,
    "SQLITE_LIMIT_TRIGGER_DEPTH": 100,
    "SQLITE_LIMIT_WORKER_THREADS": 0,
}
#: The most memory SQLite may allocate in the judge's process (PRAGMA hard_heap_limit, which the
#: code may not set): the code's temporary tables and sorts live in memory (temp_store), bounded
#: by MAX_PAGES each and by this all together; an allocation past it fails with SQLITE_NOMEM
#: ("out of memory") instead of growing the process.
HEAP_BYTES = 512 * 1024 ** 2
#: sqlite3_db_config switches (Connection.setconfig, Python 3.12+): on, off.
_CONFIG = (("SQLITE_DBCONFIG_DEFENSIVE", True), ("SQLITE_DBCONFIG_TRUSTED_SCHEMA", False),
           ("SQLITE_DBCONFIG_ENABLE_LOAD_EXTENSION", False),
           ("SQLITE_DBCONFIG_ENABLE_FTS3_TOKENIZER", False),
           ("SQLITE_DBCONFIG_WRITABLE_SCHEMA", False))


def lock_down(real: sqlite3.Connection) -> None:
    """Lock down a judge's connection as a server locks down one that runs untrusted SQL, using
    only what this Python's sqlite3 has: its limits (`LIMITS`), defensive mode and an untrusted
    schema (setconfig where there is one; PRAGMA trusted_schema = OFF everywhere: a function of
    the judge's runs only in the judge's TEMP triggers, which SQLite trusts), temporary tables
    and sorts in memory (so no file is made outside the database's folder: the judge's process
    may write nothing else, `jail.enter_judge`), the page counts of main and temp, and the
    process's heap. Called before the authorizer is set; the authorizer then keeps the code from
    setting any of these back (`_BOUND_PRAGMAS`, `_PROCESS_PRAGMAS`) or opening a file (`_NEVER`)."""
    if hasattr(real, "setlimit"):
        for name, value in LIMITS.items():
            real.setlimit(getattr(sqlite3, name), value)
    if hasattr(real, "setconfig"):
        for name, on in _CONFIG:
            if hasattr(sqlite3, name):
                real.setconfig(getattr(sqlite3, name), on)
    real.execute("PRAGMA trusted_schema = OFF")
    real.execute("PRAGMA temp_store = MEMORY")
    real.execute(f"PRAGMA hard_heap_limit = {HEAP_BYTES}")
    for schema in ("main", "temp"):
        real.execute(f"PRAGMA {schema}.max_page_count = {MAX_PAGES}")


class InjectedFailure(Exception):
    """What FAILER's body raises (sqlite3 turns it into its OperationalError; it stays here)."""


def fail_injected() -> None:
    """FAILER's body: always raises (a fault trigger of the judge's calls it)."""
    raise InjectedFailure("injected database error")


def _word(value) -> str:
    """A PRAGMA's value as SQLite hands it to the authorizer, unquoted and in lower case."""
    return str(value).strip().strip("'\"").lower()


def _over(value: str, limit: int) -> bool:
    """Whether a PRAGMA's value (as SQLite hands it to the authorizer) is above `limit` (a value
    that is no integer is not: SQLite reads it as 0)."""
    try:
        return int(str(value).strip().strip("'\"")) > limit
    except ValueError:
        return False
