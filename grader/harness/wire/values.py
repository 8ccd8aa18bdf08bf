"""What a call of the code under grade returns or raises, on the wire: the target process's
encoder (`encode_value`, `describe_error`) beside the judge's decoder (`decode_value`,
`decode_error`) and what that decodes into (`Foreign`, `RaisedInTarget`). The shapes, VALUE and
ERROR: docs/protocol.md, "The target process".

Both sides import it: a target-process module, it imports nothing of the judge's (only `wire`,
`lab.store` and the standard library; tests/test_layers.py).
"""

from __future__ import annotations

import dataclasses
import os
import reprlib
import sqlite3
from typing import Any

from lab.store import Claim

from grader.harness import wire

_HARNESS_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))  # grader/harness
#: The standard library's modules the target process imports only when it first needs them
#: (`where`: a call of the code under grade raised), after the code under grade is loaded:
#: grader.harness.target.loader imports them before it puts a folder of the code's first on
#: sys.path, so that a module of the code's named like one of them cannot stand in for it.
STANDARD_AT_NEED = ("sysconfig", "traceback")

_library_dirs: tuple | None = None


def library_dirs() -> tuple[tuple[str, ...], tuple[str, ...]]:
    """The standard library's folders (`where` passes over their frames), and site-packages,
    which may lie inside them and is not the standard library: found at the first `where`
    (sysconfig's paths take every fresh interpreter of the portable path a few milliseconds to
    work out, and a target whose code raises nothing never needs them; `STANDARD_AT_NEED`)."""
    global _library_dirs
    if _library_dirs is None:
        import sysconfig

        _library_dirs = tuple(
            tuple(sorted({os.path.join(os.path.abspath(sysconfig.get_paths()[key]), "")
                          for key in keys}))
            for keys in (("stdlib", "platstdlib"), ("purelib", "platlib")))
    return _library_dirs


# -- the target's side: values and errors as plain data --------------------------------------------
_REPR = reprlib.Repr()
_REPR.maxlevel, _REPR.maxstring, _REPR.maxother, _REPR.maxlong = 4, 200, 400, 100
_REPR.maxlist = _REPR.maxtuple = _REPR.maxdict = _REPR.maxset = _REPR.maxfrozenset = 20


def encode_value(value) -> dict:
    """`value` as plain data, its kind decided by its exact type."""
    kind = type(value)
    if value is None:
        return {"kind": "none"}
    if kind is bool:
        return {"kind": "bool", "value": value}
    if kind is int and wire.INT_MIN <= value <= wire.INT_MAX:
        return {"kind": "int", "value": value}
    if kind is str and len(value) <= wire.MAX_STR and _utf8(value):
        return {"kind": "str", "value": value}
    other = {"kind": "other", "type": type_name(kind), "repr": safe_repr(value)}
    if kind is Claim:
        fields = {name: vars(value).get(name) for name, _ in wire.CLAIM_FIELDS}
        if all(_plain(fields[name], field_type) for name, field_type in wire.CLAIM_FIELDS):
            return {"kind": "claim", "value": fields}
        for name, field_type in wire.CLAIM_FIELDS:  # the first field of the wrong type
            if type(fields[name]) is not field_type:
                other["wrong_field"] = {"field": name, "value": safe_repr(fields[name]),
                                        "type": type_name(type(fields[name])),
                                        "wanted": field_type.__name__}
                break
    return other


def _plain(value, kind) -> bool:
    if type(value) is not kind:
        return False
    if kind is int:
        return wire.INT_MIN <= value <= wire.INT_MAX
    return len(value) <= wire.MAX_STR and _utf8(value)


def _utf8(text: str) -> bool:
    try:
        text.encode("utf-8")
        return True
    except UnicodeEncodeError:
        return False


def type_name(kind: type) -> str:
    """`module.QualName` of a type; builtins by their bare name."""
    try:
        module = kind.__module__
        name = kind.__qualname__
        text = name if module == "builtins" else f"{module}.{name}"
    except BaseException:
        text = "?"
    return wire.bounded(str(text), wire.MAX_NAME)


def safe_repr(value) -> str:
    """A bounded repr; never raises (a repr that fails says so)."""
    try:
        text = _REPR.repr(value)
        if type(text) is not str:
            raise TypeError("repr did not return a str")
    except BaseException as exc:
        text = f"<{type_name(type(value))} whose repr raised {type(exc).__name__}>"
    return wire.bounded(text, wire.MAX_REPR)


def describe_error(exc: BaseException, raised_by_callbacks: list,
                   send_failed_type: type) -> dict:
    """What the judge needs to know of an exception the target raised (`send_failed_type`: the
    target's SendFailed, target_server.SendFailed, whose name it keeps on the wire)."""
    if any(exc is error for error in raised_by_callbacks):
        send_failed = "same"
    elif isinstance(exc, send_failed_type):
        send_failed = "instance"
    else:
        send_failed = None
    return {
        "type": type_name(type(exc)),
        "message": one_line(exc),
        "where": where(exc),
        "not_implemented": isinstance(exc, NotImplementedError),
        "sqlite_error": _sqlite_class(exc),
        "send_failed": send_failed,
        "chain": _chain(exc),
        "hidden": _hidden(exc),
    }


def one_line(exc: BaseException) -> str:
    """`Type: first line of the message`, bounded; never raises."""
    name = wire.bounded(str(type(exc).__name__), wire.MAX_NAME)
    try:
        lines = str(exc).strip().splitlines()
    except BaseException:
        lines = ["<message unreadable>"]
    return wire.bounded(f"{name}: {lines[0]}" if lines else name, wire.MAX_MESSAGE)


def where(exc: BaseException) -> str | None:
    """file:line of the innermost frame outside the harness and the standard library (the
    target's code, usually: a send run by concurrent.futures and re-raised by `.result()` is
    placed at the target's line, not in concurrent/futures); a frame of the standard library
    only when there is no other."""
    found = in_stdlib = None
    try:
        import traceback  # (at need, as sysconfig is: `library_dirs`)

        stdlib_dirs, site_dirs = library_dirs()
        for frame in traceback.extract_tb(exc.__traceback__):
            path = os.path.abspath(frame.filename)
            if path.startswith(_HARNESS_DIR) or "importlib" in path:
                continue
            try:
                text = f"{os.path.relpath(path)}:{frame.lineno}"
            except ValueError:
                text = f"{path}:{frame.lineno}"
            if path.startswith(stdlib_dirs) and not path.startswith(site_dirs):
                in_stdlib = text
            else:
                found = text
    except BaseException:
        return None
    found = found or in_stdlib
    return None if found is None else wire.bounded(found, wire.MAX_MESSAGE)


def _sqlite_class(exc: BaseException) -> str | None:
    if not isinstance(exc, sqlite3.Error):
        return None
    try:
        for kind in type(exc).__mro__:
            if kind.__dict__.get("__module__") == "sqlite3":
                return kind.__name__
    except BaseException:
        pass
    return "Error"


def chained(exc: BaseException):
    """The exception `exc` is chained to as Python's traceback shows it: its __cause__ (raise ...
    from), else its __context__ (raised while handling it) unless __suppress_context__ hides it
    (raise ... from None); None if neither."""
    if exc.__cause__ is not None:
        return exc.__cause__
    return None if exc.__suppress_context__ else exc.__context__


def _chain(exc: BaseException) -> list[str]:
    """One line per exception of `exc`'s chain as a traceback shows it, `exc` left out."""
    chain, seen = [], {id(exc)}
    try:
        current = chained(exc)
        while isinstance(current, BaseException) and id(current) not in seen and \
                len(chain) < wire.MAX_CHAIN:
            seen.add(id(current))
            chain.append(one_line(current))
            current = chained(current)
    except BaseException:
        pass
    return chain


def _hidden(exc: BaseException) -> list[str]:
    """The exception an exception of `exc`'s shown chain hides (raise ... from None: its
    __context__, with __suppress_context__ set and no __cause__), then that one's own shown
    chain: one line each; [] if none hides one."""
    try:
        current, seen = exc, set()
        while isinstance(current, BaseException) and id(current) not in seen and \
                len(seen) < wire.MAX_CHAIN:
            seen.add(id(current))
            context = current.__context__
            if current.__cause__ is None and current.__suppress_context__ and \
                    isinstance(context, BaseException):
                return [one_line(context), *_chain(context)][:wire.MAX_CHAIN]
            current = chained(current)
    except BaseException:
        pass
    return []


# -- the judge's side: only checked data -----------------------------------------------------------
class RaisedInTarget(Exception):
    """A call into the target raised. Only data: the exception itself stayed in the target."""

    def __init__(self, function: str, type: str, message: str, where: str | None,
                 not_implemented: bool, sqlite_error: str | None, send_failed: str | None,
                 chain: list[str], hidden: list[str] | None = None):
        super().__init__(message)
        self.function = function
        self.type = type  # "module.QualName"; builtins bare: "ValueError"
        self.message = message  # "Name: first line of the message"
        self.where = where  # file:line in the target's code, if any frame was there
        self.not_implemented = not_implemented
        self.sqlite_error = sqlite_error  # "OperationalError", ... for sqlite3 errors
        self.send_failed = send_failed  # "same": the very SendFailed a callback raised
        self.chain = chain  # one line per __cause__/__context__ a traceback shows, innermost last
        # what it hides (raise ... from None): the suppressed context and its chain, a line each
        self.hidden = hidden or []


@dataclasses.dataclass(frozen=True)
class Foreign:
    """A value that is not plain data: its type's name and a bounded repr, nothing more."""

    type: str
    repr: str
    #: a lab.store.Claim whose field is of a wrong type: {"field", "value", "type", "wanted"}
    wrong_field: dict | None = None

    def __repr__(self) -> str:
        return self.repr


def decode_value(value) -> Any:
    """A VALUE from the target back to None / bool / int / str / Claim / Foreign."""
    value = wire.obj(value, "value")
    kind = value.get("kind")
    if kind == "none":
        wire.keys(value, ("kind",), what="none value")
        return None
    if kind in ("bool", "int", "str"):
        wire.keys(value, ("kind", "value"), what=f"{kind} value")
        if kind == "bool":
            return wire.boolean(value["value"], "value")
        if kind == "int":
            return wire.integer(value["value"], "value")
        return wire.string(value["value"], "value", wire.MAX_STR)
    if kind == "claim":
        wire.keys(value, ("kind", "value"), what="claim value")
        fields = wire.obj(value["value"], "claim")
        wire.keys(fields, tuple(name for name, _ in wire.CLAIM_FIELDS), what="claim")
        return Claim(**{name: wire.integer(fields[name], f"claim {name}") if field_type is int
                        else wire.string(fields[name], f"claim {name}", wire.MAX_STR)
                        for name, field_type in wire.CLAIM_FIELDS})
    if kind == "other":
        wire.keys(value, ("kind", "type", "repr"), ("wrong_field",), what="other value")
        wrong = None
        if "wrong_field" in value:
            wrong = wire.obj(value["wrong_field"], "wrong_field")
            wire.keys(wrong, ("field", "value", "type", "wanted"), what="wrong_field")
            if wrong["field"] not in [name for name, _ in wire.CLAIM_FIELDS] or \
                    wrong["wanted"] not in ("int", "str"):
                raise wire.WireError("wrong_field names no Claim field")
            wrong = {"field": wrong["field"], "wanted": wrong["wanted"],
                     "value": wire.string(wrong["value"], "wrong_field value", wire.MAX_REPR),
                     "type": wire.string(wrong["type"], "wrong_field type", wire.MAX_NAME)}
        return Foreign(wire.string(value["type"], "type", wire.MAX_NAME),
                       wire.string(value["repr"], "repr", wire.MAX_REPR), wrong)
    raise wire.WireError("value of unknown kind")

def decode_error(error, function: str) -> RaisedInTarget:
    """An ERROR from the target as a RaisedInTarget (only checked data in it)."""
    error = wire.obj(error, "raised")
    wire.keys(error, ("type", "message", "where", "not_implemented", "sqlite_error",
                      "send_failed", "chain", "hidden"), what="raised")
    send_failed = error["send_failed"]
    if send_failed not in (None, "same", "instance"):
        raise wire.WireError("raised: send_failed is not null, same or instance")
    chain = wire.array(error["chain"], "chain", wire.MAX_CHAIN)
    hidden = wire.array(error["hidden"], "hidden", wire.MAX_CHAIN)
    return RaisedInTarget(
        function,
        type=wire.string(error["type"], "raised type", wire.MAX_NAME),
        message=wire.string(error["message"], "raised message", wire.MAX_MESSAGE),
        where=wire.optional_string(error["where"], "raised where", wire.MAX_MESSAGE),
        not_implemented=wire.boolean(error["not_implemented"], "not_implemented"),
        sqlite_error=wire.optional_string(error["sqlite_error"], "sqlite_error", wire.MAX_NAME),
        send_failed=send_failed,
        chain=[wire.string(line, "chain entry", wire.MAX_MESSAGE) for line in chain],
        hidden=[wire.string(line, "hidden entry", wire.MAX_MESSAGE) for line in hidden],
    )
