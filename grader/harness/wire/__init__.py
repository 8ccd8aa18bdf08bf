"""The data-only wire between the judge and the target process: limits, and one message per line.

Every message is one JSON object on one line (UTF-8, `\\n`-terminated, at most `MAX_LINE` bytes,
containers nested at most `MAX_DEPTH` deep, no duplicate keys, no NaN/Infinity; floats only where
the reader allows them). Nothing is ever pickled: a reader gets dicts, lists, str, int, bool and
None, and checks every field's exact type itself (`type(x) is int`, never isinstance: a bool is
not an int here). The message shapes are in docs/protocol.md (what the target answers, what the
judge asks, the proxy connection's requests).

The wire is the only thing both sides of the harness use: this module (limits, one message per
line) and `values` (what a call returns or raises: the target's encoder beside the judge's
decoder).

May import: the standard library only. Never `grader.harness.judge`, `grader.harness.target` or
`grader.harness.processes`: both sides read the wire, so it holds nothing of either.
"""

from __future__ import annotations

import base64
import binascii
import json

MAX_LINE = 4 << 20  # bytes in one message, newline included
MAX_DEPTH = 6  # nesting of JSON containers in one message (the deepest legal one has 4)
MAX_STR = 10_000  # a str value (a return value, an owner)
MAX_REPR = 2_000  # the repr of a value that is not plain data
MAX_NAME = 200  # a type name, a connection name
MAX_MESSAGE = 1_000  # an exception's one-line message, a file:line
MAX_SQL = 4_000  # one traced statement
MAX_STATEMENTS = 500  # traced statements kept for one call (the rest are counted as dropped)
MAX_CHAIN = 8  # exceptions in a __cause__/__context__ chain
MAX_NESTING = 16  # calls made from inside callbacks, inside callbacks...
MAX_OWN = 8  # distinct paths in a reply's own_connections (grader.harness.target.filewatch)
MAX_PRINTED = 2_000  # characters of what one call printed, sent with its reply (the rest counted)
INT_MIN, INT_MAX = -(2**63), 2**63 - 1  # SQLite's integers

#: Environment the judge sets for the target process: the folders it may write, os.pathsep-
#: separated; the server then enters its Landlock jail (grader.harness.processes.jail) before the import.
JAIL_ENV = "LEASELAB_JAIL_WRITE"

#: Builtin errors a callback's SendFailed may also be ({"op": "raise", ..., "also": name}). In
#: the target, one that is no Exception (KeyboardInterrupt: Ctrl-C while send waited) is raised
#: as that builtin alone, as a real one is (`except Exception` does not catch it).
SEND_ALSO = ("ConnectionError", "TimeoutError", "KeyboardInterrupt")


class _Opaque:
    """What the judge's send returns where a real client returns an object of its own (a
    response): `{"op": "return", "cb", "object": true}` on the wire, a plain object in the
    target, which is not data (no JSON, no number, no str) and means nothing to work_once."""

    def __repr__(self) -> str:
        return "an object"


#: The judge's send returning an object (`_Opaque`).
SEND_OBJECT = _Opaque()

#: The proxy connection's protocol (grader.harness.target.dbproxy <-> dbhost): the rows a proxy asks for
#: at a time while it is iterated, and the builtin errors a request may raise besides sqlite3's
#: (binding a value, a bad argument), which the proxy raises again as that class.
DB_ITER_CHUNK = 16
#: The code's SQL functions (grader.harness.target.functions <-> judge.callbacks): registrations
#: kept per connection, and aggregate instances alive at once in the target.
DB_MAX_FUNCTIONS = 256
DB_MAX_AGGREGATES = 10_000
#: The error class of a reply whose statement a collation of the code's failed: sqlite3 lets the
#: collation's own exception out of the call, and the proxy raises the one it kept.
DB_COLLATION_RAISED = "CollationRaised"
DB_BUILTIN_ERRORS = ("TypeError", "ValueError", "OverflowError", "UnicodeEncodeError",
                     "MemoryError", "RecursionError", "KeyError", "IndexError")

#: A Claim on the wire: these six keys, these exact types.
CLAIM_FIELDS = (("id", int), ("qty", int), ("owner", str), ("token", int), ("attempt", int),
                ("lease_until", int))


class WireError(Exception):
    """A message that breaks the wire's rules; the text says which rule, briefly."""


def encode(message: dict) -> bytes:
    """One message as a line. Raises WireError if it would be longer than MAX_LINE."""
    if _C_ENCODER is not None and type(message) is dict:
        # what _ENCODER.encode(message) does for a dict, without its Python layers (the
        # messages are the hot path: thousands a grade, each way); the same text, the same
        # errors (a circular reference, a NaN, a value that is not JSON)
        data = "".join(_C_ENCODER({}, _ENCODER.default, _ESCAPE, None, ":", ",", False, False,
                                  False)(message, 0)).encode("utf-8") + b"\n"
    else:
        data = _ENCODER.encode(message).encode("utf-8") + b"\n"
    if len(data) > MAX_LINE:
        raise WireError(f"message of {len(data)} bytes (limit {MAX_LINE})")
    return data


def decode(line: bytes, *, floats: bool = False) -> dict:
    """One line (without its newline) back to a dict; WireError on anything irregular."""
    if len(line) >= MAX_LINE:
        raise WireError(f"message over {MAX_LINE} bytes")
    try:
        text = line.decode("utf-8")
    except UnicodeDecodeError:
        raise WireError("message is not UTF-8") from None
    decoder = _FLOATS if floats else _INTEGERS
    try:
        # the scanner JSONDecoder.decode runs, called as it calls it: a message that is one
        # object from the first character to the last (what every writer of the wire writes)
        # is read without the decoder's Python layers; anything else (whitespace around it,
        # what is not JSON) is read by decode itself, which says what is wrong in its words
        message, end = decoder.scan_once(text, 0) if text[:1] == "{" else (None, -1)
    except (StopIteration, ValueError, RecursionError):
        message, end = None, -1
    try:
        if end != len(text):
            message = decoder.decode(text)
    except WireError:
        raise
    except RecursionError:
        raise WireError("message nested too deeply") from None
    except ValueError as exc:
        raise WireError(f"message is not JSON ({str(exc)[:80]})") from None
    if type(message) is not dict:
        raise WireError("message is not a JSON object")
    # a container MAX_DEPTH deep needs MAX_DEPTH brackets: most lines have fewer
    if line.count(b"{") + line.count(b"[") >= MAX_DEPTH and _too_deep(message):
        raise WireError("message nested too deeply")
    return message


def decode_trusted(line: bytes) -> dict:
    """A line the judge wrote, read in the target process (floats allowed): JSON only, without
    the checks a line from the target gets (`decode`), which the judge's own lines cannot fail."""
    text = line.decode("utf-8")
    try:  # as in `decode`: one object from the first character to the last, scanned alone
        message, end = _PLAIN.scan_once(text, 0) if text[:1] == "{" else (None, -1)
    except (StopIteration, ValueError, RecursionError):
        message, end = None, -1
    if end != len(text):
        message = _PLAIN.decode(text)
    if type(message) is not dict:
        raise WireError("message is not a JSON object")
    return message


def _no_duplicates(pairs):
    result = dict(pairs)
    if len(result) != len(pairs):  # some key came twice: name the first repeated one
        seen = set()
        for key, _ in pairs:
            if key in seen:
                raise WireError(f"duplicate key {key[:40]!r}")
            seen.add(key)
    return result


def _too_deep(message: dict) -> bool:
    """Whether `message` nests deeper than MAX_DEPTH: anything (a value, a container) inside a
    container MAX_DEPTH deep. Level by level, containers only."""
    level = [message]  # the containers at depth 1, 2, ...
    for _ in range(MAX_DEPTH - 1):
        inner = []
        for container in level:
            for child in (container.values() if type(container) is dict else container):
                kind = type(child)
                if kind is dict or kind is list:
                    inner.append(child)
        if not inner:
            return False
        level = inner
    return any(level)  # a container MAX_DEPTH deep that holds anything


def _no_constant(name):
    raise WireError(f"{name} is not allowed")


def _no_float(text):
    raise WireError("a float where only integers are allowed")


# Built once (json.dumps and json.loads with options build a coder at every call)
_ENCODER = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), allow_nan=False)
# the C encoder json.JSONEncoder.iterencode makes for _ENCODER at every call (None where this
# Python has none: _ENCODER itself then), and the str escape it is given for ensure_ascii=False
_C_ENCODER = getattr(json.encoder, "c_make_encoder", None)
_ESCAPE = json.encoder.encode_basestring


def _c_encoder_agrees() -> bool:
    """Whether this Python's C encoder, called as `encode` calls it, writes what _ENCODER does
    (its signature is the json module's own business)."""
    probe = {"a": [1, -2.5, None, True, "é\n\"", {"b": []}], "c": 2**63}
    try:
        return "".join(_C_ENCODER({}, _ENCODER.default, _ESCAPE, None, ":", ",", False, False,
                                  False)(probe, 0)) == _ENCODER.encode(probe)
    except Exception:  # noqa: BLE001 - another signature: the Python layers then
        return False


if _C_ENCODER is not None and not _c_encoder_agrees():
    _C_ENCODER = None
_INTEGERS = json.JSONDecoder(object_pairs_hook=_no_duplicates, parse_constant=_no_constant,
                             parse_float=_no_float)
_FLOATS = json.JSONDecoder(object_pairs_hook=_no_duplicates, parse_constant=_no_constant,
                           parse_float=float)
_PLAIN = json.JSONDecoder()


# -- strict field checks (the reader's side) -------------------------------------------------------
def keys(message: dict, required: tuple, optional: tuple = (), what: str = "message") -> None:
    """`message` has every required key and no key outside required + optional."""
    for k in required:  # the usual case, told without building lists (every message is read)
        if k not in message:
            break
    else:
        if len(message) == len(required):
            return
        for k in message:
            if k not in required and k not in optional:
                break
        else:
            return
    missing = [k for k in required if k not in message]
    extra = [k for k in message if k not in required and k not in optional]
    if missing or extra:
        parts = ([f"missing {', '.join(missing)}"] if missing else []) + \
                ([f"unknown {', '.join(k[:40] for k in extra)}"] if extra else [])
        raise WireError(f"{what}: {'; '.join(parts)}")


def integer(value, what: str) -> int:
    if type(value) is not int:
        raise WireError(f"{what} is not an int (a {type(value).__name__})")
    if not INT_MIN <= value <= INT_MAX:
        raise WireError(f"{what} is out of the 64-bit range")
    return value


def boolean(value, what: str) -> bool:
    if type(value) is not bool:
        raise WireError(f"{what} is not a bool (a {type(value).__name__})")
    return value


def string(value, what: str, limit: int) -> str:
    if type(value) is not str:
        raise WireError(f"{what} is not a str (a {type(value).__name__})")
    if len(value) > limit:
        raise WireError(f"{what} is longer than {limit} characters")
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        raise WireError(f"{what} holds a lone surrogate") from None
    return value


def optional_string(value, what: str, limit: int) -> str | None:
    return None if value is None else string(value, what, limit)


def array(value, what: str, limit: int) -> list:
    if type(value) is not list:
        raise WireError(f"{what} is not a list (a {type(value).__name__})")
    if len(value) > limit:
        raise WireError(f"{what} has more than {limit} items")
    return value


def obj(value, what: str) -> dict:
    if type(value) is not dict:
        raise WireError(f"{what} is not an object (a {type(value).__name__})")
    return value


def bounded(text: str, limit: int) -> str:
    """`text` made fit for a str field of `limit` characters: encodable as UTF-8 (lone surrogates
    escaped), cut to `limit - 1` characters and "…" when longer. The writing side's counterpart of
    `string`: the target server bounds what it tells, the judge what it keeps of a trace."""
    if type(text) is str and text.isascii() and len(text) <= limit:
        return text  # what the round trip below gives back: the same characters (hot: traces)
    text = text.encode("utf-8", "backslashreplace").decode("utf-8")
    return text if len(text) <= limit else text[: limit - 1] + "…"


# -- SQLite values (the proxy connection's parameters and rows: grader.harness.target.dbproxy) ------------
def sql_value(value):
    """A value SQLite gives or takes (None, int, float, str, bytes) as JSON: None, int and str as
    themselves, a finite float as itself, others as {"f": "inf" | "-inf" | "nan"}, bytes as
    {"b": base64}. ValueError for anything else."""
    kind = type(value)
    if value is None or kind is int or kind is str:
        return value
    if kind is float:
        if value != value:
            return {"f": "nan"}
        if value in (float("inf"), float("-inf")):
            return {"f": "inf" if value > 0 else "-inf"}
        return value
    if kind is bytes:
        return {"b": base64.b64encode(value).decode("ascii")}
    raise ValueError(f"not an SQLite value: {kind.__name__}")


def sql_value_back(value):
    """What `sql_value` wrote, back; WireError for anything else."""
    kind = type(value)
    if value is None or kind is str or kind is float:
        return value
    if kind is int:
        return integer(value, "an SQL value")
    if kind is dict and len(value) == 1:
        if "f" in value and value["f"] in ("inf", "-inf", "nan"):
            return float(value["f"])
        if "b" in value and type(value["b"]) is str:
            try:
                return base64.b64decode(value["b"].encode("ascii"), validate=True)
            except (binascii.Error, UnicodeEncodeError):
                raise WireError("an SQL blob is not base64") from None
    raise WireError("not an SQL value")
