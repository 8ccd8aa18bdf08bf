"""Paragraphs for the terminal, wrapped at the terminal's width: English between words only (a
word longer than a line keeps its line to itself, whole); Japanese, which has no spaces, also
between two wide characters, never inside a run of narrow ones (an id, a number, `lease_until`),
never before closing punctuation (、。」) nor after an opening one (「).

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

FALLBACK = 88
NARROWEST = 40
#: A word and the spaces before it.
WORD = re.compile(r"(\s*)(\S+)")
#: Punctuation a line does not start with, and punctuation it does not end with.
CLOSING = set("、。，．・：；？！」』）】〕〉》”’…‥ー々)]},.:;!?")
OPENING = set("「『（【〔〈《“‘([{")


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
    width = width or columns()
    if lang == "ja":
        return [line for i, part in enumerate(paragraph.splitlines() or [""])
                for line in wrap_spans([(part, None)], lang, indent if i == 0 else hanging,
                                       hanging, width)]
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
    width = width or columns()
    lines: list[str] = []
    line, used, empty = indent, display_width(indent), True
    gap = ""
    for s, style, *whole in spans:
        end = 0
        words = ([m for m in re.finditer(r"(\s*)(\S.*\S|\S)", s, re.S)] if whole and whole[0]
                 else WORD.finditer(s))
        pieces = [(m.group(1) if i == 0 else "", unit, m.end())
                  for m in words
                  for i, unit in enumerate([m.group(2)] if whole and whole[0]
                                           else units(m.group(2)))]
        for space, word, stop in pieces:
            space = gap + space
            gap, end = "", stop
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


def _wide(ch: str) -> bool:
    return unicodedata.east_asian_width(ch) in "WF"


def units(word: str) -> list[str]:
    """The pieces of `word` (no spaces in it) a line may break between: a run of narrow
    characters is one piece, a wide character another; closing punctuation stays with the piece
    before it, opening punctuation with the piece after it. A word without a wide character is
    one piece."""
    if not any(_wide(ch) for ch in word):
        return [word]
    pieces: list[str] = []
    for ch in word:
        if pieces and (ch in CLOSING or pieces[-1] and all(c in OPENING for c in pieces[-1])
                       or not _wide(ch) and not _wide(pieces[-1][-1])):
            pieces[-1] += ch  # a closing mark, after an opening one, or a narrow run going on
        else:
            pieces.append(ch)
    return pieces
