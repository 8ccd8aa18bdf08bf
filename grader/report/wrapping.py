"""Paragraphs for the terminal: English wrapped at the terminal's width, between words only (a
word longer than a line keeps its line to itself, whole); Japanese left whole (it has no spaces
to break at; the terminal wraps it).

The width is the terminal's (`shutil.get_terminal_size`: COLUMNS when it is set, else the
terminal stdout is on), `FALLBACK` when there is none (a pipe, a file), never under `NARROWEST`.
Before, every paragraph was wrapped at a fixed 88 columns and a check's own lines (the problem,
the sentence, why it matters, a check's title line) not at all: the terminal broke those at its
edge, in the middle of a word, at any width."""

from __future__ import annotations

import re
import shutil
import textwrap
import unicodedata
from typing import Callable

FALLBACK = 88
NARROWEST = 40
#: A word and the spaces before it.
WORD = re.compile(r"(\s*)(\S+)")


def columns() -> int:
    """The width to wrap at: the terminal's (see the module docstring)."""
    return max(NARROWEST, shutil.get_terminal_size((FALLBACK, 24)).columns)


def display_width(s: str) -> int:
    """Columns `s` takes in a terminal: East Asian wide characters take two."""
    return sum(2 if unicodedata.east_asian_width(ch) in "WF" else 1 for ch in s)


def wrap(paragraph: str, lang: str, indent: str = "", hanging: str | None = None,
         width: int | None = None) -> list[str]:
    """The paragraph as lines of at most `width` columns (default: `columns()`), the first
    indented by `indent`, the others by `hanging` (default: `indent`). A paragraph of several
    lines is wrapped line by line."""
    hanging = indent if hanging is None else hanging
    if lang == "ja":
        return [indent + line if i == 0 else hanging + line
                for i, line in enumerate(paragraph.splitlines() or [""])]
    width = width or columns()
    lines: list[str] = []
    for i, line in enumerate(paragraph.splitlines() or [""]):
        first = indent if i == 0 else hanging
        lines += textwrap.wrap(line, width, initial_indent=first, subsequent_indent=hanging,
                               break_on_hyphens=False, break_long_words=False) or [first]
    return lines


#: (text, style or None) or (text, style, True): a span kept whole (its words on one line).
Span = tuple


def wrap_spans(spans: list[Span], lang: str, indent: str = "", hanging: str | None = None,
               width: int | None = None) -> list[str]:
    """A line made of spans, each (text, style or None[, whole]), wrapped like `wrap`: between
    words (a `whole` span's words stay together, "id · 3/4 pt"), every word styled as its
    span asks (colours never count towards the width)."""
    hanging = indent if hanging is None else hanging
    if lang == "ja":
        return [indent + "".join(style(s) if style else s for s, style, *_ in spans)]
    width = width or columns()
    lines: list[str] = []
    line, used, empty = indent, display_width(indent), True
    gap = ""
    for s, style, *whole in spans:
        end = 0
        words = ([m for m in re.finditer(r"(\s*)(\S.*\S|\S)", s, re.S)] if whole and whole[0]
                 else WORD.finditer(s))
        for m in words:
            space, word = gap + m.group(1), m.group(2)
            gap, end = "", m.end()
            size = display_width(word)
            if not empty and used + len(space) + size > width:
                lines.append(line)
                line, used, space = hanging, display_width(hanging), ""
            line += space + (style(word) if style else word)
            used += len(space) + size
            empty = False
        gap += s[end:]
    lines.append(line)
    return lines
