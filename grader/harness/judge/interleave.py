"""What the gates of the race and crash checks read off a statement, and the central loop's words.

Each claimer is a target process (`target_client.TargetProcess`) whose connection was opened
*gated*: the real connection is the judge's (`dbhost`), and during the claim its trace callback,
in the judge's process, asks before each statement runs (step, sql, holds_write, see
`target_client`) and blocks until the central loop answers "go" or "free": the code under grade
cannot run a statement the gate has not let through, nor hide one from it. `holds_write` is
worked out there by a `WriteLockWatch`. On the judge side each claimer's calls run in a thread of
their own (`children`), which hands every statement to one central loop and waits for its answer.
That loop decides who goes on:

- the race check (grader/checks/test_race.py): `explore.Schedule`, one statement at a time in
  the order of a schedule, every order that can matter one run each (`explore.explore`); it
  knows without a clock which statement would wait for the other's lock.
- the crash check (grader/checks/test_crash.py) needs no policy object: `children.run_to_kill`
  answers "go" to each statement of a claimer spawned with `kill_at=k` until it reports it is
  about to run statement k, then kills its process there with SIGKILL (statement k never runs).

Here: reading a statement, as SQLite's tokenizer reads it (`tokens`, `words`, `names`, `plain`:
a comment is whitespace wherever it stands, a string literal one token; every reading of a
statement's keywords in the grader goes through them: `verb`, `takes_write_lock`,
`waits_for_write_lock`, `changes_database`, txshape, journal), `bare`, `sql_line`, the
`WriteLockWatch`, and `GaveUp` (a schedule given up: never a pass).

Messages inside the judge (plain tuples on queues, never on a pipe), claimer thread -> central
loop: ("ready",), ("at", step, sql, holds_write, asking, in_transaction, unfinished),
("done", outcome) (`unfinished`: dbhost.DbHost.unfinished of its connection); central loop ->
claimer thread: "start", "go", "free" (free: the target stops asking for the rest of the claim;
the statements it then runs come back with the claim's reply and are logged when it ends),
"stop".
"""

from __future__ import annotations

import re
from dataclasses import dataclass

#: How long a claimer's thread waits for the central loop's answer (a safety net: the loop
#: always answers, or says "stop").
ANSWER_WAIT = 30.0


#: Whitespace and comments (`-- ...` to the end of the line, `/* ... */`) at the start of a
#: statement; SQLite skips them, and so does every reading of a statement here. An unclosed one
#: runs to the end of the text, as in SQLite.
_LEADING_COMMENTS = re.compile(r"\A(?:\s+|--[^\n]*(?:\n|\Z)|/\*.*?(?:\*/|\Z))*", re.S)


def bare(sql: str) -> str:
    """`sql` without the whitespace and comments it opens with: the statement SQLite runs."""
    return _LEADING_COMMENTS.sub("", sql, count=1)


def is_statement(sql: str) -> bool:
    """True for a statement the target ran itself, even one whose text opens with a comment;
    False for text that is only comments (SQLite traces a trigger program as '-- TRIGGER name')."""
    return bare(sql) != ""


#: One token of a statement as SQLite's tokenizer reads it: whitespace, a comment (`-- ...` to
#: the end of the line, `/* ... */`; an unclosed one runs to the end of the text), a string
#: literal ('...', quotes doubled inside), a quoted identifier ("...", `...`, [...]), a word (a
#: keyword, a name or a number), or any other one character.
_TOKEN = re.compile(r"""
    (?P<space>\s+)
  | (?P<comment>--[^\n]*(?:\n|\Z) | /\*.*?(?:\*/|\Z))
  | (?P<string>'(?:[^']|'')*'?)
  | (?P<quoted>"(?:[^"]|"")*"?|`(?:[^`]|``)*`?|\[[^\]]*\]?)
  | (?P<word>[\w$]+)
  | (?P<other>.)""", re.S | re.X)


def tokens(sql: str) -> list[tuple[str, str]]:
    """`sql` as SQLite's tokenizer reads it: (kind, text) for each token, kind one of space,
    comment, string, quoted, word, other. The one reading of a statement's text here: a comment
    is whitespace wherever it stands, a word inside a string literal or a comment is no word."""
    return [(m.lastgroup, m.group()) for m in _TOKEN.finditer(sql)]


def words(sql: str) -> list[str]:
    """The statement's tokens as SQLite reads them, comments and whitespace left out: words,
    string literals and quoted identifiers (each one token, quotes kept) and punctuation."""
    return [text for kind, text in tokens(sql) if kind not in ("space", "comment")]


def plain(sql: str) -> str:
    """`sql` as SQLite reads it, each comment (wherever it stands) made one space, the text
    between them kept as written, stripped."""
    return "".join(" " if kind == "comment" else text for kind, text in tokens(sql)).strip()


def names(sql: str) -> list[str]:
    """The names (and keywords) the statement mentions, lower case, quoted identifiers unquoted:
    never a word of a string literal or of a comment."""
    found = []
    for kind, text in tokens(sql):
        if kind == "word":
            found.append(text.lower())
        elif kind == "quoted":
            close = {"[": "]"}.get(text[0], text[0])
            inner = text[1:-1] if len(text) > 1 and text.endswith(close) else text[1:]
            found.append(inner.replace(close * 2, close).lower() if close != "]" else inner.lower())
    return found


def sql_line(sql: str, width: int = 90) -> str:
    """A statement on one line, cut to `width` characters (for reports). It means what it means
    as written: a `-- comment`, which would swallow the rest of the line once the lines are
    joined, is shown as `/* comment */`."""
    parts = []
    for kind, text in tokens(sql):
        if kind == "comment" and text.startswith("--"):
            body = text[2:].rstrip("\n").replace("*/", "* /")
            text = f"/*{body} */"
        parts.append(text)
    text = " ".join("".join(parts).split())
    return text if len(text) <= width else text[: width - 1] + "…"


def verb(sql: str) -> str:
    """The statement's first word, comments anywhere skipped, upper-case ("" for none): the first
    token of `words(sql)`, read without tokenizing the rest of the text (the judge reads it of
    every statement traced)."""
    found = _VERBS.get(sql)
    if found is None:
        first = _TOKEN.match(sql, _LEADING_COMMENTS.match(sql).end())
        found = first.group().upper() if first else ""
        if type(sql) is str and len(sql) <= _VERB_TEXT:
            if len(_VERBS) >= _VERB_TEXTS:
                _VERBS.clear()
            _VERBS[sql] = found
    return found


#: verb's answers by text (the same few statements are traced thousands of times a grade): at
#: most _VERB_TEXTS texts of at most _VERB_TEXT characters, then forgotten all at once
_VERBS: dict[str, str] = {}
_VERB_TEXTS, _VERB_TEXT = 1024, 4096


def takes_write_lock(sql: str) -> bool:
    """May this statement leave its connection holding the write (RESERVED) lock?

    Errs on the side of yes (anything but a plain read or a deferred BEGIN): a wrong yes only
    shortens a wait, a wrong no could make a blocked process wait for the other forever."""
    first = [w.upper() for w in words(sql)[:2]]
    if not first:
        return False
    if first[0] == "BEGIN":
        return len(first) > 1 and first[1] in ("IMMEDIATE", "EXCLUSIVE")
    return first[0] not in ("SELECT", "VALUES", "EXPLAIN")


def changes_database(sql: str) -> bool:
    """May this statement change what is stored (a write or a COMMIT)? Reads cannot, nor can a
    BEGIN of any kind (BEGIN IMMEDIATE takes the write lock but stores nothing). The crash check
    kills a claim only after such a statement."""
    return verb(sql) != "BEGIN" and takes_write_lock(sql)


def waits_for_write_lock(sql: str, holds_write: bool) -> bool:
    """Does this statement wait while another connection holds the write lock?

    True for BEGIN IMMEDIATE/EXCLUSIVE and for a write by a connection that holds no write lock
    yet; False for reads (a RESERVED lock lets readers in), for ending a transaction (a read-only
    COMMIT needs no write lock; ROLLBACK never waits) and for a connection that holds the lock."""
    if holds_write or verb(sql) in ("", "COMMIT", "END", "ROLLBACK", "RELEASE"):
        return False
    return takes_write_lock(sql)


class WriteLockWatch:
    """Does a connection surely hold the write (RESERVED) lock when a statement is about to run?

    One per gated connection, in the judge (`target_client`), told of every statement
    traced on it, in order: `before(sql, in_transaction)` answers for `sql` (True: it runs in a
    transaction in which a statement that may take the write lock already ran), then counts it.
    Outside a transaction no lock is held between statements."""

    def __init__(self):
        self.wrote = False  # a statement that may take the write lock ran in this transaction

    def before(self, sql: str, in_transaction: bool) -> bool:
        if not in_transaction:
            self.wrote = False  # autocommit between statements: no lock is held
        holds = in_transaction and self.wrote
        if takes_write_lock(sql):
            self.wrote = True
        return holds


@dataclass
class GaveUp:
    """A schedule given up (explore.Schedule: too many statements, or `actor` ran code of its
    own too long at `step`): the rest ran freely, so it forced nothing and is never a pass."""

    actor: str
    step: int
    waited: float  # the limit that ran out (0 for too many statements), not the measured time
    holds_write: bool
