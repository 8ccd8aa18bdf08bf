"""The message catalogue: every word the grader shows, in English and Japanese.

The catalogue is the JSON files in grader/report/catalogue/, merged: each maps a key to
`{"en": "...", "ja": "..."}`; texts are `str.format` templates. Check texts use the keys
`check.<id>.title`, `check.<id>.why`, `check.<id>.hint`, and `detail.<name>` for a sentence a
check's failure adds. Terminal, JSON and HTML reports all read from here.

Strict mode (`LEASELAB_STRICT_MESSAGES=1`, on in the project's tests): a missing key, a language
that is not in LANGS or lacks the text, or a placeholder the caller did not give raises
`MessageError`. Outside it a report never crashes over a word: a missing key shows as the key,
a template that cannot be filled as the template.
"""

from __future__ import annotations

import functools
import json
import os
from pathlib import Path

CATALOGUE_DIR = Path(__file__).with_name("catalogue")
LANGS = ("en", "ja")
STRICT_ENV = "LEASELAB_STRICT_MESSAGES"


class MessageError(LookupError):
    """Strict mode: a message that cannot be shown as asked."""


def strict(environ=os.environ) -> bool:
    return environ.get(STRICT_ENV, "") not in ("", "0")


@functools.lru_cache(maxsize=None)
def catalogue() -> dict[str, dict[str, str]]:
    merged: dict[str, dict[str, str]] = {}
    for path in sorted(CATALOGUE_DIR.glob("*.json")):
        entries = json.loads(path.read_text(encoding="utf-8"))
        for key, texts in entries.items():
            if key in merged:
                raise ValueError(f"message key {key!r} defined twice (again in {path.name})")
            merged[key] = texts
    return merged


def has(key: str) -> bool:
    return key in catalogue()


def text(key: str, lang: str = "en", **params) -> str:
    """The message `key` in `lang` (falling back to English), formatted with `params`.

    Strict mode raises MessageError instead of falling back (see the module docstring)."""
    texts = catalogue().get(key)
    if texts is None:
        _complain(f"no message {key!r} in the catalogue")
        return key
    if not texts.get(lang):
        _complain(f"message {key!r} has no {lang!r} text" if lang in LANGS
                  else f"unknown language {lang!r} (asked for {key!r}; known: {LANGS})")
    template = texts.get(lang) or texts.get("en") or key
    try:
        return template.format(**params)
    except (KeyError, IndexError, ValueError, AttributeError) as exc:
        _complain(f"message {key!r} ({lang}) cannot be filled: {type(exc).__name__}: {exc}"
                  f" (given: {sorted(params)})")
        return template


def _complain(problem: str) -> None:
    if strict():
        raise MessageError(problem)



def default_lang(environ=os.environ) -> str:
    """Japanese when the locale says so (LC_ALL, then LC_MESSAGES, then LANG), else English."""
    for name in ("LC_ALL", "LC_MESSAGES", "LANG"):
        value = environ.get(name)
        if value:
            return "ja" if value.lower().startswith("ja") else "en"
    return "en"
