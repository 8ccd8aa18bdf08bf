"""The judge's SQLite is locked down as a server's would be (grader/harness/judge/lockdown.py: `lock_down`
and `authorize`): the code's SQL runs in the judge's process, so no statement it sends may open a
file, however SQLite is told the file's name; the bounds and the trust the judge set cannot be set
back; and what the lab's programs do use still works.

Two ways in: every authorizer action code SQLite defines, fed to `authorize` directly with every
kind of argument (a file's name, None as SQLite passes a bound or computed name, '', ':memory:', a
URI); and real statements sent through the proxy connection the code is handed, checked against
the folder they would write into (a new file, and an existing empty one, as lab/__init__.py was).
"""

from __future__ import annotations

import os
import sqlite3
import sys
from types import SimpleNamespace

import pytest

from grader.harness.judge import lockdown
from tests.test_proxy_conformance import proxy_side

#: Every action code of SQLite's authorizer (sqlite3.h, SQLITE_CREATE_INDEX = 1 ...
#: SQLITE_RECURSIVE = 33; 0 is SQLITE_COPY, no longer used).
ACTIONS = range(0, 34)
#: What SQLite hands the authorizer as a file's name, or in its place.
NAMES = (None, "", ":memory:", "/tmp/leaselab-evil.db", "file:/tmp/u.db?mode=rwc",
         "lab/__init__.py", "x.pth")
REFUSED = "not authorized|authorization denied"


def _conn(serving: bool) -> SimpleNamespace:
    return SimpleNamespace(prepared=False, prepared_tables=set(), serving=serving,
                           reshaped=False, judge_triggers=set())


@pytest.mark.parametrize("serving", [True, False], ids=["the code's SQL", "the judge's"])
def test_every_action_code_attach_and_detach_refused_whatever_the_name(serving):
    """ATTACH and DETACH are refused for every argument, the judge's own statements included
    (it attaches nothing); no other action code is one by which a statement names a file."""
    for action in ACTIONS:
        for name in NAMES:
            for args in ((name, None, None, None), (name, name, "main", None),
                         (None, name, None, "trigger_x")):
                answer = lockdown.authorize(_conn(serving), action, *args)
                if action in (sqlite3.SQLITE_ATTACH, sqlite3.SQLITE_DETACH):
                    assert answer == sqlite3.SQLITE_DENY, (action, args)
                else:
                    assert answer in (sqlite3.SQLITE_OK, sqlite3.SQLITE_DENY), (action, args)
    # the PRAGMAs that move files or set the process's heap: refused for anyone
    for pragma in ("temp_store_directory", "data_store_directory", "hard_heap_limit",
                   "soft_heap_limit"):
        for value in ("'/tmp'", "0", "1"):
            assert lockdown.authorize(_conn(serving), sqlite3.SQLITE_PRAGMA, pragma, value,
                                    None, None) == sqlite3.SQLITE_DENY


def _files(folder) -> dict[str, int]:
    return {p.name: p.stat().st_size for p in folder.iterdir()}


@pytest.fixture()
def side(tmp_path):
    work = tmp_path / "work"
    work.mkdir()
    proxy, host = proxy_side(work)
    empty = tmp_path / "__init__.py"  # an empty file, as lab/__init__.py was
    empty.write_bytes(b"")
    yield SimpleNamespace(proxy=proxy, host=host, tmp=tmp_path, work=work, empty=empty)
    host.close_all()


def test_no_way_of_naming_a_file_opens_one(side):
    """Literal, bound (positional and named), expression, subquery, CTE, URI, VACUUM INTO (bound
    and literal), plain VACUUM, ':memory:' and '' (a temporary file of SQLite's), through
    execute, executemany and executescript: each refused, and no file appears or changes, the
    existing empty file included."""
    proxy, tmp, empty = side.proxy, side.tmp, side.empty
    new = str(tmp / "planted.pth")
    before = _files(tmp), _files(side.work)
    attempts = [
        (f"ATTACH '{new}' AS p", ()),
        ("ATTACH ? AS p", (new,)),
        ("ATTACH ? AS p", (str(empty),)),
        ("ATTACH :f AS p", {"f": new}),
        ("ATTACH ? || ? AS p", (str(tmp) + "/", "planted.pth")),
        ("ATTACH (SELECT ?) AS p", (new,)),
        ("ATTACH (WITH f(n) AS (SELECT ?) SELECT n FROM f) AS p", (new,)),
        ("ATTACH printf('%s', ?) AS p", (new,)),
        ("ATTACH ? AS p", (f"file:{new}?mode=rwc",)),
        (f"ATTACH 'file:{empty}?mode=rw' AS p", ()),
        ("ATTACH ? AS p KEY 'x'", (new,)),
        ("ATTACH ':memory:' AS m", ()),
        ("ATTACH '' AS t", ()),
        ("VACUUM INTO ?", (new,)),
        ("VACUUM INTO ?", (str(empty),)),
        (f"VACUUM main INTO '{new}'", ()),
        ("VACUUM INTO (SELECT ?)", (new,)),
        ("VACUUM", ()),
        ("DETACH temp", ()),
        ("DETACH main", ()),
        (f"PRAGMA temp_store_directory = '{tmp}'", ()),
        (f"PRAGMA data_store_directory = '{tmp}'", ()),
    ]
    for sql, params in attempts:
        with pytest.raises(sqlite3.DatabaseError, match=REFUSED):
            proxy.execute(sql, params)
    with pytest.raises(sqlite3.DatabaseError, match=REFUSED):
        proxy.executemany("ATTACH ? AS p", [(new,)])
    with pytest.raises(sqlite3.DatabaseError, match=REFUSED):
        proxy.executescript(f"SELECT 1; ATTACH '{new}' AS p;")
    # (inside a transaction SQLite refuses VACUUM before it attaches its copy)
    with pytest.raises(sqlite3.DatabaseError, match=REFUSED + "|cannot VACUUM from within"):
        proxy.executescript(f"BEGIN; VACUUM INTO '{new}'; COMMIT;")
    proxy.rollback() if proxy.in_transaction else None
    proxy.execute("VACUUM temp")  # a no-op in SQLite (the temporary database is not copied)
    assert (_files(tmp), _files(side.work)) == before
    assert empty.read_bytes() == b""
    assert [row[1] for row in proxy.execute("PRAGMA database_list")] == ["main", "temp"]
    assert proxy.execute("SELECT count(*) FROM jobs").fetchall() == [(3,)]


def test_bounds_and_trust_cannot_be_set_back(side):
    """The code reads every PRAGMA, sets none of the bounds and the trust lock_down set:
    refused, and the value stays."""
    proxy = side.proxy
    expected = {"trusted_schema": 0, "temp_store": 2, "max_page_count": lockdown.MAX_PAGES,
                "writable_schema": 0}
    for pragma, value in expected.items():
        assert proxy.execute(f"PRAGMA {pragma}").fetchone()[0] == value, pragma
    for sql in ("PRAGMA trusted_schema = ON", "PRAGMA writable_schema = ON",
                "PRAGMA writable_schema = RESET", "PRAGMA schema_version = 99",
                "PRAGMA ignore_check_constraints = ON", "PRAGMA temp_store = FILE",
                "PRAGMA temp.temp_store = 1", "PRAGMA max_page_count = 2000000000",
                "PRAGMA temp.max_page_count = 2000000000", "PRAGMA page_size = 65536",
                "PRAGMA mmap_size = 2000000000", "PRAGMA threads = 8",
                "PRAGMA hard_heap_limit = 0", "PRAGMA soft_heap_limit = 1",
                "PRAGMA journal_mode = OFF", "PRAGMA main.journal_mode = 'off'",
                "PRAGMA busy_timeout = 99999999"):
        with pytest.raises(sqlite3.DatabaseError, match=REFUSED):
            proxy.execute(sql)
    for pragma, value in expected.items():
        assert proxy.execute(f"PRAGMA {pragma}").fetchone()[0] == value, pragma
    assert proxy.execute("PRAGMA hard_heap_limit").fetchone()[0] == lockdown.HEAP_BYTES


def test_no_native_code_virtual_table_or_judges_schema(side):
    """load_extension and fts3_tokenizer are refused (native code, a C pointer), so are virtual
    tables (FTS's shadow tables are what defensive mode guards) and dropping or altering the
    judge's table; the code's own tables and temporary tables come and go as on any connection."""
    proxy = side.proxy
    for sql in ("SELECT load_extension('/tmp/evil')", "SELECT fts3_tokenizer('simple')",
                "CREATE VIRTUAL TABLE f USING fts4(x)", "CREATE VIRTUAL TABLE temp.f USING fts4(x)",
                "DROP TABLE jobs", "DROP TABLE main.jobs", "ALTER TABLE jobs RENAME TO old",
                "ALTER TABLE jobs ADD COLUMN extra", "ALTER TABLE jobs DROP COLUMN finished_at",
                "ALTER TABLE jobs RENAME COLUMN qty TO n"):
        with pytest.raises(sqlite3.DatabaseError, match=REFUSED):
            proxy.execute(sql)
    proxy.execute("CREATE TEMP TABLE spent(id INTEGER PRIMARY KEY)")
    proxy.execute("CREATE TEMP TABLE jobs(x)")  # the code's own, shadowing on its connection
    proxy.execute("DROP TABLE temp.jobs")
    proxy.execute("DROP TABLE spent")
    for sql in ("CREATE TRIGGER t AFTER INSERT ON jobs BEGIN UPDATE jobs SET qty = 1; END",
                "CREATE TRIGGER main.t BEFORE UPDATE ON main.jobs BEGIN SELECT 1; END"):
        with pytest.raises(sqlite3.DatabaseError, match=REFUSED):  # it would fire in the
            proxy.execute(sql)                                      # judge's own writes
    proxy.execute("CREATE TEMP TRIGGER mine AFTER UPDATE ON jobs BEGIN SELECT 1; END")
    proxy.execute("DROP TRIGGER mine")
    proxy.execute("CREATE TABLE audit(x)")
    proxy.execute("ALTER TABLE audit ADD COLUMN y")
    proxy.execute("DROP TABLE audit")
    assert [r[0] for r in proxy.execute("SELECT count(*) FROM jobs")] == [3]
    assert proxy.execute("SELECT count(*) FROM json_each('[1,2]')").fetchone() == (2,)
    assert len(proxy.execute("SELECT * FROM pragma_table_info('jobs')").fetchall()) == 10


def test_what_the_lab_uses_still_works(side):
    """Reading PRAGMAs, the busy timeout within its bound, journal modes other than OFF (the
    journal check judges them), foreign keys, a temporary table filled and sorted in memory."""
    proxy = side.proxy
    proxy.execute("PRAGMA busy_timeout = 2000")
    proxy.execute("PRAGMA foreign_keys = ON")
    proxy.execute("PRAGMA cache_size = -4000")
    assert proxy.execute("PRAGMA journal_mode = MEMORY").fetchone() == ("memory",)
    assert proxy.execute("PRAGMA journal_mode = DELETE").fetchone() == ("delete",)
    proxy.execute("CREATE TEMP TABLE big AS WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL "
                  "SELECT i + 1 FROM n WHERE i < 20000) SELECT i, hex(randomblob(16)) AS h FROM n")
    assert proxy.execute("SELECT count(*) FROM (SELECT h FROM big ORDER BY h)").fetchone() == (
        20000,)
    assert sorted(_files(side.work)) == ["proxy.db"]  # the temporary table made no file


def test_growth_is_bounded(side):
    """A temporary table grows to MAX_PAGES at most ("database or disk is full"), a value to the
    length limit or the heap limit, whichever this Python's sqlite3 lets the judge set."""
    proxy = side.proxy
    with pytest.raises(sqlite3.DatabaseError, match="full"):
        proxy.execute("CREATE TEMP TABLE huge AS WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL "
                      "SELECT i + 1 FROM n WHERE i < 1000000) SELECT zeroblob(4000) FROM n")
    # the length limit says "too big" (3.11+); the heap limit, SQLITE_NOMEM, which Python's
    # sqlite3 raises as MemoryError (3.10)
    with pytest.raises((sqlite3.DataError, MemoryError)):
        proxy.execute("SELECT length(randomblob(600000000))").fetchall()
    assert proxy.execute("SELECT count(*) FROM jobs").fetchone() == (3,)


def test_limits_where_this_python_has_setlimit(side):
    real = side.host.real("main")
    if not hasattr(real, "setlimit"):
        pytest.skip(f"Python {sys.version_info[:2]}: sqlite3 has no setlimit (3.11+)")
    for name, value in lockdown.LIMITS.items():
        assert real.getlimit(getattr(sqlite3, name)) == value, name
    if hasattr(real, "getconfig"):
        assert real.getconfig(sqlite3.SQLITE_DBCONFIG_DEFENSIVE) is True
        assert real.getconfig(sqlite3.SQLITE_DBCONFIG_TRUSTED_SCHEMA) is False


def test_judges_temp_triggers_still_call_its_functions(side):
    """trusted_schema is OFF: functions of the judge's still run in the judge's TEMP triggers
    (SQLite trusts the temp schema) and nowhere else."""
    host, proxy = side.host, side.proxy
    host.execute("main", "CREATE TEMP TRIGGER judge_count AFTER UPDATE ON jobs "
                         "BEGIN SELECT harness_count('k'); END")
    proxy.execute("UPDATE jobs SET qty = qty + 1 WHERE id = 1")
    assert host.count("k") == 1
    with pytest.raises(sqlite3.DatabaseError, match=REFUSED):
        proxy.execute("SELECT harness_count('k')")
    assert os.path.exists(side.work / "proxy.db")

