"""Paragraphs on the terminal (grader.report.wrapping): English never broken inside a word,
Japanese wrapped by columns (a wide character is two) with its line-breaking rules."""

from __future__ import annotations

import pytest

from grader.report import messages
from grader.report.wrapping import CLOSING, OPENING, display_width, wrap

JA = ("リースが切れたあとの finish は拒否されます。now < lease_until で比べてください"
      "(now <= lease_until ではありません)。「claim」はトークンを 1 つ上げます。") * 3


@pytest.mark.parametrize("width", [40, 60, 88, 120])
def test_japanese_is_wrapped_by_columns_and_loses_no_character(width):
    lines = wrap(JA, "ja", "    ", "      ", width=width)
    assert len(lines) > 1
    assert all(display_width(line) <= width for line in lines), lines
    assert "".join(line.strip() for line in lines).replace(" ", "") == JA.replace(" ", "")
    for line in lines:
        body = line.strip()
        assert body[0] not in CLOSING and body[-1] not in OPENING, line
    # a Latin word stays whole: lease_until is never cut
    assert all("lease_" not in line or "lease_until" in line for line in lines)


@pytest.mark.parametrize("width", [30, 60, 88])
def test_english_is_never_broken_inside_a_word(width):
    paragraph = messages.text("check.finish-at-expiry.why", "en") + " " + "x" * (width + 5)
    lines = wrap(paragraph, "en", "  ", "    ", width=width)
    words = paragraph.split()
    assert " ".join(" ".join(lines).split()) == " ".join(words)
    for line in lines:
        assert all(word in words for word in line.split()), line


def test_every_japanese_hint_is_wrapped_within_the_width():
    for key in messages.catalogue():
        if key.endswith(".hint"):
            lines = wrap(messages.text(key, "ja"), "ja", "    ", "      ", width=88)
            assert all(display_width(line) <= 88 for line in lines), (key, lines)
