"""Attack: text that rewrites the report. A queue that does the work, but whatever of it a report
shows holds a forged score on a line of its own: newlines, a carriage return, C1 controls (U+009B
is a one-character CSI, U+0085 a newline), a right-to-left override (U+202E), a line separator,
an escape sequence and the line "Score: 100/100". It is in the type's name and the repr of what
claim returns, in the owner it stores and hands back, in the type's name and message of what
finish raises and in the file name of the code that raises it. Each of those reached the
terminal report, the Markdown summary, the JUnit XML, PrairieLearn's and Gradescope's JSON.
HOSTILE_TEXT = False is its honest counterpart: the same queue, with plain text.
Self-contained: nothing of the reference or the tests is imported."""

from lab.store import Claim

HOSTILE_TEXT = True  # the trick; False: the same queue without it

FORGED = ("\n\rScore: 100/100\n\x85Score: 100 / 100\u2028Score: 100/100\x9b2J\u202e"
          "\x1b[32mEvery check passed.\x1b[0m\u2066\x07\t\n")
TEXT = FORGED if HOSTILE_TEXT else ""

NOT_VALID = "(status = 'pending' OR (status = 'leased' AND lease_until <= :now))"
calls = 0


class Hostile:
    """What claim returns on its second call in a process: a type and a repr of the forged text."""

    def __repr__(self):
        return f"Claim({TEXT})"


Hostile.__name__ = Hostile.__qualname__ = f"Claim{TEXT}"


def claim(conn, owner, now, lease_ms):
    global calls
    calls += 1
    conn.execute("BEGIN IMMEDIATE")
    try:
        conn.execute(f"UPDATE jobs SET status = 'quarantined' WHERE {NOT_VALID}"
                     " AND (attempts >= max_attempts OR deadline <= :now)", {"now": now})
        row = conn.execute(f"SELECT id FROM jobs WHERE {NOT_VALID} AND attempts < max_attempts"
                           " AND deadline > :now ORDER BY id LIMIT 1", {"now": now}).fetchone()
        got = None
        if row is not None:
            got = conn.execute("UPDATE jobs SET status = 'leased', owner = :owner,"
                               " token = token + 1, attempts = attempts + 1,"
                               " lease_until = min(:now + :lease, deadline) WHERE id = :id"
                               " RETURNING id, qty, owner, token, attempts, lease_until",
                               {"owner": owner + TEXT, "now": now, "lease": lease_ms,
                                "id": row[0]}).fetchone()
        conn.execute("COMMIT")
    except BaseException:
        conn.rollback()
        raise
    if got is None:
        return None
    if HOSTILE_TEXT and calls % 2 == 0:
        return Hostile()
    return Claim(*got)


class Refused(Exception):
    pass


Refused.__name__ = Refused.__qualname__ = f"Refused{TEXT}"

# finish, compiled under a file name that holds the text (a traceback's path shows it)
exec(compile('''
def finish(conn, claim, now):
    cur = conn.execute("UPDATE jobs SET status = 'done', finished_at = :now WHERE id = :id"
                       " AND status = 'leased' AND owner = :owner AND token = :token"
                       " AND attempts = :attempt AND lease_until = :until"
                       " AND :now < lease_until AND :now < deadline",
                       {"now": now, "id": claim.id, "owner": claim.owner, "token": claim.token,
                        "attempt": claim.attempt, "until": claim.lease_until})
    if cur.rowcount != 1 and TEXT:
        raise Refused(TEXT)
    return cur.rowcount == 1
''', f"queue{TEXT}.py", "exec"))


def work_once(conn, owner, send, clock, lease_ms):
    got = claim(conn, owner, clock(), lease_ms)
    if got is None:
        return None
    send(got)
    return finish(conn, got, clock())
