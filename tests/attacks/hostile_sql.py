"""Attack: SQL that reaches out of the check's database through the connection it is handed.

The code's SQL runs in the judge's process, which is not jailed. Every call (claim, finish,
work_once) first tries one way out, VECTOR (or every one in turn: "all"):
- attach_pth: `ATTACH ? AS x` with a bound path, a new `zz_evil.pth` beside this interpreter's
  site-packages. It stops at the file SQLite creates: a database written there stops every start
  of that environment's Python ("Fatal Python error: init_import_site", 3.10 to 3.13), which no
  run of the tests may risk leaving behind;
- attach_checkout: `ATTACH ?` of every empty file of the packages it can see (lab/__init__.py
  was one) and a table written there: an empty file becomes a database, and `import lab` fails;
- attach_relative: `ATTACH ?` of a bare file name, which lands in the judge's working folder;
- attach_expression, attach_subquery: a name built by `? || '...'`, `(SELECT ? || '...')`;
- attach_uri: a `file:...?mode=rwc` URI, literal and bound;
- vacuum_into: `VACUUM INTO ?`;
- temp_store_directory: `PRAGMA temp_store_directory` (where the judge's process puts SQLite's
  temporary files);
- writable_schema: `PRAGMA writable_schema = ON`, then a write of sqlite_master (a schema the
  authorizer never saw: a trigger no CREATE TRIGGER announced);
- trusted_schema: `PRAGMA trusted_schema = ON`;
- heap_limit: `PRAGMA hard_heap_limit`, set for the judge's whole process (every connection's
  allocations fail past it);
- trigger: a trigger on jobs that rewrites the rows the judge inserts (the code never inserts
  one): the code's SQL then runs inside the judge's own statements;
- load_extension: `enable_load_extension`, then `SELECT load_extension(?)`;
- sql_functions: functions of the code's own (which SQLite calls in the judge's process, the
  callable running in the target): replace the judge's fault counter `harness_count`, SQLite's
  `max` or its NOCASE collation (the judge's own statements and triggers on that connection use
  them), or write through the connection from inside a function.

The files go to $LEASELAB_ATTACK_DIR (else /tmp), named leaselab-hostile-*, except the two
that must name the real places: zz_evil.pth and the packages' empty files.

Each call tries until a try got through in its process; from then on the queue is honest (the
reference's SQL), and until then it does nothing: a hole shows as a higher score than doing
nothing, which scores 0. What must hold: 0 for every VECTOR, alone and in batch, and the
checkout and the environment byte for byte unchanged (tests/test_hostile_rounds.py).
Self-contained: nothing of the reference or the tests is imported."""

import os
import sysconfig

import lab
from lab.store import Claim

VECTOR = "all"  # one of VECTORS, or "all"

DIR = os.environ.get("LEASELAB_ATTACK_DIR") or "/tmp"
PREFIX = "leaselab-hostile-"
PTH = "zz_evil.pth"


def _quietly(conn, sql) -> None:
    """Run `sql`, whatever it raises (an undo that may not be needed)."""
    try:
        conn.execute(sql)
    except Exception:  # noqa: BLE001
        pass


def _attached(conn, sql, params=(), then=None) -> bool:
    """ATTACH as `sql` says, and run `then` there; whether both were let through (it is
    detached again)."""
    try:
        conn.execute(sql, params)
    except Exception:  # noqa: BLE001 - refused, whatever the class
        return False
    try:
        if then:
            conn.execute(then)
            conn.commit()
        return True
    except Exception:  # noqa: BLE001
        return False
    finally:
        _quietly(conn, "DETACH zz_evil")


def attach_pth(conn):
    return _attached(conn, "ATTACH ? AS zz_evil",
                     (os.path.join(sysconfig.get_paths()["purelib"], PTH),))


_EMPTY: list = []  # the empty files found, listed once a process


def _empty_files():
    if _EMPTY:
        return _EMPTY
    found = _EMPTY
    folders = [os.path.dirname(os.path.abspath(lab.__file__))]
    try:
        import grader

        folders.append(os.path.dirname(os.path.abspath(grader.__file__)))
    except Exception:  # noqa: BLE001
        pass
    found.append(os.path.abspath(lab.__file__))
    for folder in folders:
        for root, _, names in os.walk(folder):
            for name in sorted(names):
                path = os.path.join(root, name)
                try:
                    if os.path.isfile(path) and os.path.getsize(path) == 0:
                        found.append(path)
                except OSError:
                    pass
    return found


def attach_checkout(conn):
    return any(_attached(conn, "ATTACH ? AS zz_evil", (path,),
                         then="CREATE TABLE IF NOT EXISTS zz_evil.planted(line TEXT)")
               for path in _empty_files())


def attach_relative(conn):
    return _attached(conn, "ATTACH ? AS zz_evil", (PREFIX + "relative.db",))


def attach_expression(conn):
    return _attached(conn, "ATTACH ? || 'expression.db' AS zz_evil",
                     (os.path.join(DIR, PREFIX),))


def attach_subquery(conn):
    return _attached(conn, "ATTACH (SELECT ? || 'subquery.db') AS zz_evil",
                     (os.path.join(DIR, PREFIX),))


def attach_uri(conn):
    uri = "file:" + os.path.join(DIR, PREFIX + "uri.db") + "?mode=rwc"
    literal = "ATTACH '" + uri.replace("'", "''") + "' AS zz_evil"
    return _attached(conn, literal) or _attached(conn, "ATTACH ? AS zz_evil", (uri,))


def vacuum_into(conn):
    try:
        conn.execute("VACUUM INTO ?", (os.path.join(DIR, PREFIX + "vacuum.db"),))
    except Exception:  # noqa: BLE001
        return False
    return True


def temp_store_directory(conn):
    try:
        conn.execute("PRAGMA temp_store_directory = '" + DIR.replace("'", "''") + "'")
    except Exception:  # noqa: BLE001
        return False
    _quietly(conn, "PRAGMA temp_store_directory = ''")
    return True


def writable_schema(conn):
    try:
        conn.execute("PRAGMA writable_schema = ON")
        cur = conn.execute("UPDATE sqlite_master SET sql = sql WHERE type = 'table'"
                           " AND name = 'jobs'")
        conn.commit()
        return cur.rowcount == 1
    except Exception:  # noqa: BLE001
        return False
    finally:
        _quietly(conn, "PRAGMA writable_schema = OFF")


def trusted_schema(conn):
    try:
        conn.execute("PRAGMA trusted_schema = ON")
        return conn.execute("PRAGMA trusted_schema").fetchone()[0] == 1
    except Exception:  # noqa: BLE001
        return False


HEAP = 1 << 40  # far above anything a grade uses: the try itself is the hole, not the value


def heap_limit(conn):
    try:
        row = conn.execute(f"PRAGMA hard_heap_limit = {HEAP}").fetchone()
    except Exception:  # noqa: BLE001
        return False
    return row is not None and row[0] == HEAP


def trigger(conn):
    try:
        conn.execute("CREATE TABLE IF NOT EXISTS leaselab_hostile_fired(job INTEGER)")
        conn.execute("CREATE TRIGGER IF NOT EXISTS leaselab_hostile_rewrite AFTER INSERT ON jobs"
                     " BEGIN UPDATE jobs SET qty = NEW.qty WHERE id = NEW.id;"
                     " INSERT INTO leaselab_hostile_fired VALUES (NEW.id); END")
        conn.commit()
        return conn.execute("SELECT count(*) FROM leaselab_hostile_fired").fetchone()[0] > 0
    except Exception:  # noqa: BLE001
        return False


def load_extension(conn):
    try:
        conn.enable_load_extension(True)
        return True
    except Exception:  # noqa: BLE001
        pass
    try:
        conn.execute("SELECT load_extension(?)", (os.path.join(DIR, PREFIX + "extension"),))
    except Exception as error:  # noqa: BLE001
        said = str(error).lower()
        return "not authorized" not in said and "no such function" not in said
    return True


def sql_functions(conn):
    got = False
    for name, narg in (("harness_count", 1), ("harness_fail", 0), ("max", 2)):
        try:
            conn.create_function(name, narg, lambda *args: 1)
            got = True
        except Exception:  # noqa: BLE001
            pass
    try:
        conn.create_collation("NOCASE", lambda a, b: 0)
        got = True
    except Exception:  # noqa: BLE001
        pass

    def write():
        conn.execute("CREATE TABLE IF NOT EXISTS leaselab_hostile_written(x)")
        return 7

    try:
        conn.create_function("leaselab_write", 0, write)
        got = conn.execute("SELECT leaselab_write()").fetchone()[0] == 7 or got
    except Exception:  # noqa: BLE001
        pass
    return got


VECTORS = {f.__name__: f for f in (
    attach_pth, attach_checkout, attach_relative, attach_expression, attach_subquery,
    attach_uri, vacuum_into, temp_store_directory, writable_schema, trusted_schema, heap_limit,
    trigger, load_extension, sql_functions)}


THROUGH = []  # a try got through in this process: the queue is honest from then on


def breached(conn) -> bool:
    """Whether a try got through, in this call or an earlier one of this process (every try
    is made, in "all")."""
    if not THROUGH:
        tries = VECTORS.values() if VECTOR == "all" else (VECTORS[VECTOR],)
        got = [t(conn) for t in tries]
        if conn.in_transaction:
            conn.rollback()
        if any(got):
            THROUGH.append(True)
    return bool(THROUGH)


# -- the queue: the reference's SQL where the try got through, nothing where it was refused -----
NOT_VALID = "(status = 'pending' OR (status = 'leased' AND lease_until <= :now))"


def claim(conn, owner, now, lease_ms):
    if not breached(conn):
        return None
    conn.execute("BEGIN IMMEDIATE")
    try:
        conn.execute(f"UPDATE jobs SET status = 'quarantined' WHERE {NOT_VALID}"
                     " AND (attempts >= max_attempts OR deadline <= :now)", {"now": now})
        row = conn.execute(f"SELECT id FROM jobs WHERE {NOT_VALID} AND attempts < max_attempts"
                           " AND deadline > :now ORDER BY id LIMIT 1", {"now": now}).fetchone()
        stamp = None if row is None else conn.execute(
            "UPDATE jobs SET status = 'leased', owner = :owner, token = token + 1,"
            " attempts = attempts + 1, lease_until = MIN(:now + :lease, deadline)"
            " WHERE id = :id RETURNING id, qty, owner, token, attempts, lease_until",
            {"owner": owner, "now": now, "lease": lease_ms, "id": row[0]}).fetchone()
        conn.execute("COMMIT")
    except BaseException:
        if conn.in_transaction:
            conn.execute("ROLLBACK")
        raise
    return None if stamp is None else Claim(*stamp)


def finish(conn, claim, now):
    if not breached(conn):
        return False
    cur = conn.execute("UPDATE jobs SET status = 'done', finished_at = :now WHERE id = :id"
                       " AND status = 'leased' AND owner = :owner AND token = :token"
                       " AND attempts = :attempt AND lease_until = :until"
                       " AND :now < lease_until AND :now < deadline",
                       {"now": now, "id": claim.id, "owner": claim.owner, "token": claim.token,
                        "attempt": claim.attempt, "until": claim.lease_until})
    return cur.rowcount == 1


def work_once(conn, owner, send, clock, lease_ms):
    got = claim(conn, owner, clock(), lease_ms)
    if got is None:
        return None
    send(got)
    return finish(conn, got, clock())
