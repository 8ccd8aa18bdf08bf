"""Paragraphs for the terminal: English wrapped at WIDTH columns, Japanese left whole (it has no
spaces to break at; the terminal wraps it)."""

from __future__ import annotations

import textwrap

WIDTH = 88


def wrap(paragraph: str, lang: str, indent: str = "", hanging: str | None = None) -> list[str]:
    """The paragraph as lines, the first indented by `indent`, the others by `hanging`
    (default: `indent`)."""
    hanging = indent if hanging is None else hanging
    if lang == "ja":
        return [indent + paragraph]
    return textwrap.wrap(paragraph, WIDTH, initial_indent=indent, subsequent_indent=hanging,
                         break_on_hyphens=False) or [indent]
