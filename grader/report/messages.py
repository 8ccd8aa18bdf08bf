"""The message catalogue: every word the grader shows, in English and Japanese.

The catalogue is the JSON files in grader/catalogue/, merged: each maps a key to
`{"en": "...", "ja": "..."}`; texts are `str.format` templates. Check texts use the keys
`check.<id>.title`, `check.<id>.why`, `check.<id>.hint`, and `detail.<name>` for a sentence a
check's failure adds. Terminal, JSON and HTML reports all read from here.
"""

from __future__ import annotations

import functools
import json
import os
from pathlib import Path

CATALOGUE_DIR = Path(__file__).with_name("catalogue")
LANGS = ("en", "ja")


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
    """The message `key` in `lang` (falling back to English), formatted with `params`."""
    texts = catalogue().get(key)
    if texts is None:
        return key
    template = texts.get(lang) or texts.get("en") or key
    try:
        return template.format(**params)
    except (KeyError, IndexError, ValueError):
        return template


def default_lang(environ=os.environ) -> str:
    """Japanese when the locale says so (LC_ALL, then LC_MESSAGES, then LANG), else English."""
    for name in ("LC_ALL", "LC_MESSAGES", "LANG"):
        value = environ.get(name)
        if value:
            return "ja" if value.lower().startswith("ja") else "en"
    return "en"
