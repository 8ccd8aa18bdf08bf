"""The transaction-shape reader (grader/checks/txshape.py) on statement lists written by hand."""

from __future__ import annotations

import pytest

from grader.checks import txshape

SELECT = "SELECT id FROM jobs WHERE status = 'pending' ORDER BY id LIMIT 1"
UPDATE = "UPDATE jobs SET status = 'leased' WHERE id = 1 RETURNING id"
QUARANTINE = "UPDATE jobs SET status = 'quarantined' WHERE deadline <= 5"


@pytest.mark.parametrize("statements", [
    ["BEGIN IMMEDIATE", QUARANTINE, SELECT, UPDATE, "COMMIT"],
    ["begin immediate transaction", QUARANTINE, UPDATE, "commit transaction"],
    ["  BEGIN\n IMMEDIATE ;", UPDATE, "END"],
    ["PRAGMA busy_timeout = 10", "BEGIN IMMEDIATE", SELECT, "COMMIT", "SELECT 1"],
    ["BEGIN IMMEDIATE", SELECT, SELECT, "ROLLBACK"],
    ["BEGIN IMMEDIATE", "SAVEPOINT s", UPDATE, "ROLLBACK TO s", "RELEASE s", "COMMIT"],
])
def test_one_immediate_transaction_is_fine(statements):
    assert txshape.problem(statements) is None


@pytest.mark.parametrize("statements, code, at", [
    ([], "no-sql", None),
    (["SELECT 1"], "no-sql", None),
    ([QUARANTINE, SELECT, UPDATE], "no-transaction", 0),
    ([SELECT, "BEGIN IMMEDIATE", UPDATE, "COMMIT"], "outside", 0),
    (["BEGIN IMMEDIATE", SELECT, "COMMIT", UPDATE], "write-outside", 3),
    ([QUARANTINE, "BEGIN IMMEDIATE", SELECT, UPDATE, "COMMIT"], "write-outside", 0),
    (["BEGIN IMMEDIATE", UPDATE, "COMMIT", "SELECT qty FROM jobs"], "read-after", 3),  # not "before"
    (["BEGIN", SELECT, UPDATE, "COMMIT"], "not-immediate", 0),
    (["BEGIN DEFERRED TRANSACTION", SELECT, UPDATE, "COMMIT"], "not-immediate", 0),
    (["SAVEPOINT claim", SELECT, UPDATE, "RELEASE claim"], "not-immediate", 0),
    (["BEGIN EXCLUSIVE", SELECT, UPDATE, "COMMIT"], "exclusive", 0),
    (["BEGIN IMMEDIATE", SELECT, "COMMIT", "BEGIN IMMEDIATE", UPDATE, "COMMIT"], "several", 3),
    (["BEGIN IMMEDIATE", SELECT, UPDATE], "left-open", 2),
    (["BEGIN IMMEDIATE", SELECT, UPDATE, "ROLLBACK TO x"], "left-open", 3),
])
def test_problems_are_found_and_placed(statements, code, at):
    found = txshape.problem(statements)
    assert (found.code, found.at) == (code, at)


def comment(sql: str) -> str:
    return f"-- what this does\n/* and why */ {sql}"


def test_statements_are_read_past_their_leading_comments():
    assert txshape.problem([comment(s) for s in
                            ("BEGIN IMMEDIATE", QUARANTINE, SELECT, UPDATE, "COMMIT")]) is None
    found = txshape.problem([comment(SELECT), "BEGIN IMMEDIATE", UPDATE, "COMMIT"])
    assert (found.code, found.at) == ("outside", 0)
    assert txshape.problem([comment("BEGIN"), SELECT, UPDATE, comment("END")]).code \
        == "not-immediate"
    assert txshape.problem(["-- jobs are picked here\nSELECT 1"]).code == "no-sql"


def test_a_comment_inside_begin_is_whitespace():
    # SQLite reads `BEGIN -- note\n IMMEDIATE` as BEGIN IMMEDIATE: it takes the write lock
    for begin in ("BEGIN -- note\n IMMEDIATE", "BEGIN /* note */ IMMEDIATE"):
        assert txshape.opening(begin) == "IMMEDIATE"
        assert txshape.problem([begin, QUARANTINE, SELECT, UPDATE, "COMMIT"]) is None
    assert txshape.opening("BEGIN /* IMMEDIATE */") == "DEFERRED"
    assert txshape.problem(["BEGIN IMMEDIATE", SELECT, UPDATE, "ROLLBACK /* x */ TO s",
                            "COMMIT"]) is None
    found = txshape.problem(["BEGIN -- IMMEDIATE\n", SELECT, UPDATE, "COMMIT"])
    assert found.code == "not-immediate" and found.begin == "BEGIN /* IMMEDIATE */"


@pytest.mark.parametrize("extra", [
    "SELECT sqlite_version()  -- RETURNING on jobs needs 3.35",
    "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'jobs'",
    "/* jobs */ SELECT 1 /* on jobs */",
    "PRAGMA table_info(jobs)",
    "pragma main.table_info('jobs')",
])
def test_a_statement_that_only_mentions_jobs_is_not_on_jobs(extra):
    # the word in a comment or a string literal is no name of the table, and a PRAGMA reads the
    # schema, never a row: such a statement may run anywhere
    assert not txshape.on_jobs(extra)
    assert txshape.problem([extra, "BEGIN IMMEDIATE", QUARANTINE, SELECT, UPDATE, "COMMIT",
                            extra]) is None
    assert txshape.problem([extra, UPDATE]) is None  # finish: one statement on jobs
    assert txshape.problem([extra]).code == "no-sql"


def test_a_quoted_name_of_jobs_is_on_jobs():
    for sql in ('SELECT id FROM "jobs"', "SELECT id FROM main.[jobs]", "DELETE FROM `Jobs`"):
        assert txshape.on_jobs(sql)
    found = txshape.problem(['SELECT id FROM "jobs" -- pick', UPDATE])
    assert (found.code, found.at) == ("no-transaction", 0)


def test_the_opening_statement_is_named():
    assert txshape.problem(["BEGIN", SELECT, UPDATE, "COMMIT"]).begin == "BEGIN"


@pytest.mark.parametrize("statements", [[UPDATE], ["BEGIN", UPDATE, "COMMIT"], ["BEGIN", SELECT]])
def test_a_lone_statement_is_atomic_however_wrapped(statements):
    assert txshape.problem(statements) is None


def test_repeats_from_triggers_count_once():
    assert txshape.problem([UPDATE, UPDATE, UPDATE]) is None
    assert txshape.problem([SELECT, UPDATE]).code == "no-transaction"


def test_no_sql_is_a_problem_only_when_sql_is_needed():
    assert txshape.problem(["SELECT 1"], need_sql=False) is None


def test_listing_marks_the_statement():
    lines = txshape.listing([SELECT, "BEGIN IMMEDIATE"], at=0).splitlines()
    assert lines[0].startswith(f"  {txshape.MARK}  1  SELECT")
    assert lines[1].startswith("     2  BEGIN IMMEDIATE")
    assert txshape.listing(["x" * 500]).endswith("…")


# -- which statements are on jobs, as SQLite's authorizer tells ------------------------------------
JOBS, NONE = frozenset({"jobs"}), frozenset()


def test_the_authorizers_tables_decide_which_statements_are_on_jobs():
    quoted = "UPDATE 'jobs' SET status = 'leased' WHERE id = 1"  # a string literal as the name
    assert not txshape.on_jobs(quoted)  # the text alone: no name of the table
    assert txshape.on_jobs(quoted, JOBS)
    master = "SELECT count(*) FROM sqlite_master WHERE name = 'jobs'"
    assert not txshape.on_jobs(master, frozenset({"sqlite_master"}))
    assert not txshape.on_jobs("UPDATE jobs SET qty = 1", frozenset({"temp.jobs"}))
    assert not txshape.on_jobs("WITH jobs AS (SELECT 1) SELECT * FROM jobs", NONE)
    assert txshape.on_jobs("SELECT * FROM v", frozenset({"jobs", "temp.v"}))  # a view over jobs
    # a PRAGMA and a transaction's statements never are, whatever they are said to touch
    assert not txshape.on_jobs("PRAGMA table_info(jobs)", JOBS)
    assert not txshape.on_jobs("BEGIN IMMEDIATE", JOBS)
    autocommit = [(quoted.replace("UPDATE", "SELECT id FROM").split(" SET")[0], JOBS),
                  (quoted, JOBS)]
    found = txshape.problem(autocommit)
    assert (found.code, found.at) == ("no-transaction", 0)
    assert txshape.problem([s for s, _ in autocommit]).code == "no-sql"  # as the text read it
    assert txshape.problem([("BEGIN IMMEDIATE", NONE), *autocommit, ("COMMIT", NONE)]) is None
    assert txshape.problem([(master, frozenset({"sqlite_master"})), ("BEGIN IMMEDIATE", NONE),
                            (SELECT, JOBS), (UPDATE, JOBS), ("COMMIT", NONE)]) is None
    # a text alone, or tables not known (None), is read from the text
    assert txshape.problem([(SELECT, None), UPDATE]).code == "no-transaction"


def test_repeats_count_once_with_the_tables_told_of_any():
    assert txshape.traced([(UPDATE, None), (UPDATE, JOBS), UPDATE, (SELECT, NONE)]) \
        == [(UPDATE, JOBS), (SELECT, NONE)]
    assert txshape.distinct([(UPDATE, JOBS), UPDATE, SELECT]) == [UPDATE, SELECT]
    assert txshape.listing([(SELECT, JOBS), ("BEGIN IMMEDIATE", NONE)], at=0) \
        == txshape.listing([SELECT, "BEGIN IMMEDIATE"], at=0)


# The tables of each statement as the judge's connection reads them: a DbHost and the proxy the
# code is handed, in this process (as tests/test_proxy_conformance.py drives them).
@pytest.fixture
def traced(tmp_path):
    from test_proxy_conformance import proxy_side

    conn, host = proxy_side(tmp_path)
    seen: list = []
    host.traced = lambda name, sql: seen.append((sql, host.tables_read(name)))

    def run(*sqls, params=()):
        """Run each of `sqls` (a script when it holds several statements); what was traced."""
        seen.clear()
        for sql in sqls:
            if sql.count(";") > 1:
                conn.executescript(sql)
            else:
                conn.execute(sql, params).fetchall()
        return list(seen)

    run.conn, run.host, run.seen = conn, host, seen
    return run


def test_a_table_named_by_a_string_literal_is_on_jobs(traced):
    claim = ["UPDATE jobs SET status = 'quarantined' WHERE deadline <= 0",
             "SELECT id FROM 'jobs' WHERE status = 'pending' ORDER BY id LIMIT 1",
             "UPDATE 'jobs' SET status = 'leased' WHERE id = 1"]
    found = txshape.problem(traced(*claim))
    assert (found.code, found.at) == ("no-transaction", 0)
    assert txshape.problem(claim) is None  # what the text alone made of it: one on jobs
    assert txshape.problem(traced("BEGIN IMMEDIATE", *claim, "COMMIT")) is None


@pytest.mark.parametrize("name", ['"jobs"', "[jobs]", "`jobs`", "'jobs'", "main.jobs",
                                  "main.'jobs'", "JOBS"])
def test_every_spelling_of_jobs_is_on_jobs(traced, name):
    for sql in (f"SELECT id FROM {name}", f"UPDATE {name} SET qty = qty WHERE id = 1",
                f"SELECT count(*) FROM {name}", f"DELETE FROM {name} WHERE 0",
                f"INSERT INTO {name} (qty, deadline) SELECT 1, 1 WHERE 0"):
        [(text, tables)] = traced(sql)
        assert txshape.on_jobs(text, tables), (sql, tables)


def test_a_statement_run_again_from_the_statement_cache_keeps_its_tables(traced):
    sql = "UPDATE 'jobs' SET qty = qty WHERE id = ?"
    first = traced(sql, params=(1,))
    again = traced(sql, params=(2,))  # sqlite3's cache: not prepared again, traced as id = 2
    assert first == [(sql.replace("?", "1"), JOBS)] and again == [(sql.replace("?", "2"), JOBS)]
    traced.seen.clear()
    traced.conn.executemany("UPDATE [jobs] SET qty = qty WHERE id = ?", [(1,), (2,), (3,)])
    assert [tables for _, tables in traced.seen] == [JOBS] * 3


def test_what_is_not_the_queues_jobs_table_is_not_on_jobs(traced):
    seen = traced("SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'jobs'",
                  "WITH jobs AS (SELECT 1 AS id) SELECT id FROM jobs",
                  "PRAGMA table_info(jobs)", "SELECT 'jobs'")
    assert [txshape.on_jobs(sql, tables) for sql, tables in seen] == [False] * 4
    # a TEMP table named jobs hides the queue's from names without a schema: not the queue
    seen = traced("CREATE TEMP TABLE jobs (id INTEGER PRIMARY KEY, qty INTEGER)",
                  "UPDATE jobs SET qty = qty", "UPDATE 'jobs' SET qty = qty",
                  "SELECT id FROM temp.jobs", "UPDATE main.jobs SET qty = qty WHERE 0")
    assert [tables for _, tables in seen][1:] == [frozenset({"temp.jobs"})] * 3 + [JOBS]
    assert [txshape.on_jobs(*pair) for pair in seen] == [False, False, False, False, True]


def test_a_view_or_a_trigger_over_jobs_is_on_jobs(traced):
    seen = traced("CREATE TEMP VIEW free AS SELECT id FROM jobs WHERE status = 'pending'",
                  "SELECT id FROM free",
                  "CREATE TEMP TABLE wanted (id INTEGER)",
                  "CREATE TEMP TRIGGER take AFTER INSERT ON wanted"
                  " BEGIN UPDATE jobs SET status = 'leased' WHERE id = NEW.id; END",
                  "INSERT INTO wanted VALUES (1)")
    on = {sql: txshape.on_jobs(sql, tables) for sql, tables in seen}
    assert on["SELECT id FROM free"] and on["INSERT INTO wanted VALUES (1)"]
    assert not on["CREATE TEMP VIEW free AS SELECT id FROM jobs WHERE status = 'pending'"]
    found = txshape.problem(seen)  # two statements on jobs, no transaction
    assert (found.code, found.at) == ("no-transaction", 1)


def test_a_script_is_read_statement_by_statement(traced):
    seen = traced('BEGIN IMMEDIATE; SELECT id FROM "jobs"; UPDATE [jobs] SET qty = qty;'
                  " DELETE FROM main.jobs WHERE 0; COMMIT;")
    assert [tables for _, tables in seen] == [NONE, JOBS, JOBS, JOBS, NONE]
    assert txshape.problem(seen) is None
    found = txshape.problem(traced("SELECT id FROM 'jobs'; UPDATE 'jobs' SET qty = qty;"))
    assert (found.code, found.at) == ("no-transaction", 0)


def test_sqlite3s_own_begin_takes_no_tables_from_the_write_it_opens(traced):
    # a legacy isolation_level: sqlite3 prepares the UPDATE, then prepares and runs its BEGIN
    traced.conn.isolation_level = "IMMEDIATE"
    sql = "UPDATE 'jobs' SET qty = qty WHERE id = ?"
    for job in (1, 2):  # prepared, then from the statement cache
        traced.seen.clear()
        traced.conn.execute(sql, (job,))
        traced.conn.commit()
        assert traced.seen == [("BEGIN IMMEDIATE", NONE), (sql.replace("?", str(job)), JOBS),
                               ("COMMIT", NONE)]


def test_texts_forgotten_make_every_statement_prepared_again(traced, monkeypatch):
    # beyond what a connection remembers, the oldest texts are dropped and every statement
    # prepared again before its next run: none runs from sqlite3's cache with its tables unknown
    from grader.harness.judge import hosted

    monkeypatch.setattr(hosted, "MAX_REMEMBERED", 2)
    sql = "UPDATE 'jobs' SET qty = qty WHERE id = ?"
    traced(sql, params=(1,))
    for n in range(5):
        traced(f"SELECT {n} FROM jobs WHERE 0")
    assert traced(sql, params=(2,)) == [(sql.replace("?", "2"), JOBS)]
    assert len(traced.host.conns["main"].tables_of) <= 3
    monkeypatch.setattr(hosted, "MAX_REMEMBERED_CHARS", 10)  # no text is short enough
    for job in (1, 2, 3):
        assert traced(sql, params=(job,)) == [(sql.replace("?", str(job)), JOBS)]
