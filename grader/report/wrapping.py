"""Paragraphs for the terminal, wrapped at WIDTH columns: English at spaces (a word is never
broken), Japanese between characters, counting a wide character as two columns, keeping a Latin
word (an id, `lease_until`, a number) whole, never starting a line with closing punctuation
(。、)」…) nor ending one with opening punctuation (「( …): the usual line-breaking rules
(kinsoku)."""

from __future__ import annotations

import re
import textwrap
import unicodedata

WIDTH = 88

#: Characters a Japanese line may not start with, and may not end with.
NO_START = set("、。，．,.)）]］}｝」』】〉》〕・：；:;!?！？ー～…‥々ゝゞっゃゅょァィゥェォッャュョ")
NO_END = set("(（[［{｛「『【〈《〔")
#: One unit that is never broken: a run of non-wide, non-space characters (a Latin word, a
#: number, `claim()`), a run of spaces, or one wide character.
UNIT = re.compile(r"[^\s\u1100-\uffff]+|\s+|.", re.S)


def wrap(paragraph: str, lang: str, indent: str = "", hanging: str | None = None,
         width: int = WIDTH) -> list[str]:
    """The paragraph as lines at most `width` columns wide (a word longer than a line stands
    alone), the first indented by `indent`, the others by `hanging` (default: `indent`)."""
    hanging = indent if hanging is None else hanging
    if lang == "ja":
        return wrap_ja(paragraph, width, indent, hanging)
    return textwrap.wrap(paragraph, width, initial_indent=indent, subsequent_indent=hanging,
                         break_on_hyphens=False, break_long_words=False) or [indent]


def columns(s: str) -> int:
    """How many terminal columns `s` takes (East Asian wide and full-width characters: 2)."""
    return sum(2 if unicodedata.east_asian_width(c) in "WF" else 1 for c in s)


def wrap_ja(paragraph: str, width: int, indent: str, hanging: str) -> list[str]:
    units = UNIT.findall(paragraph)
    lines: list[str] = []
    line, used = indent, columns(indent)
    i = 0
    while i < len(units):
        unit = units[i]
        # a unit that may not start a line goes with the one before it; one that may not end
        # a line goes with the one after it
        while i + 1 < len(units) and (units[i + 1][:1] in NO_START or unit[-1:] in NO_END):
            if units[i + 1].isspace():
                break
            i += 1
            unit += units[i]
        size = columns(unit)
        if used + size > width and line.strip():
            lines.append(line.rstrip())
            line, used = hanging, columns(hanging)
            if unit.isspace():
                i += 1
                continue
        line += unit
        used += size
        i += 1
    if line.strip() or not lines:
        lines.append(line.rstrip() if line.strip() else indent)
    return lines
