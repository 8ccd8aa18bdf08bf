"""Output on any console: where the terminal's (or a redirected stream's) encoding cannot write a
symbol of the reports (a Windows console's cp1252, `PYTHONIOENCODING=ascii`), an ASCII stand-in
is written instead (`▶` `>`, `✗` `x`, `≠` `!=`, `—` `-`), and `?` for any other character,
never an exception. The files the grader writes (HTML, JSON, JUnit, Markdown, CSV) are UTF-8
whatever the console (grader.report.files).

`adapt(stream)` sets the stand-ins as the stream's error handler; `python -m grader` does it for
its standard output and error before it prints anything.

Lives here: the stand-ins and the error handler; stdlib only.
"""

from __future__ import annotations

import codecs

#: What a symbol of the reports becomes where the console cannot write it.
STAND_INS = {
    "▶": ">", "▸": ">", "✗": "x", "✓": "v", "≠": "!=", "—": "-", "–": "-", "→": "->",
    "←": "<-", "·": "-", "…": "...", "‥": "..", "“": '"', "”": '"', "‘": "'", "’": "'",
    "⏱": "T", "✎": "*", "◆": "*", "▲": "^", "█": "#", "░": ".", "≤": "<=", "≥": ">=",
    "×": "x", "•": "*", "²": "2", "│": "|", "─": "-", "↳": "->", "⚠": "!",
}
#: Markers that stand in a column of their own (the row table's "≠"): their wider stand-in
#: takes the place of the space after them.
COLUMN_MARKERS = ("≠",)
HANDLER = "leaselab.stand-in"


def _stand_in(error: UnicodeError):
    if not isinstance(error, UnicodeEncodeError):
        raise error
    text, end = error.object, error.end
    out = "".join(STAND_INS.get(ch, "?") for ch in text[error.start:end])
    # a wider stand-in of a marker that stands alone (a space before it) takes the place of the
    # space after it, so the row table's columns stay where they are ("  ≠ status  1" ->
    # "  !=status  1", where "  != status  1" would push the row one column right)
    extra = len(out) - (end - error.start)
    alone = (text[error.start:end] in COLUMN_MARKERS and error.start > 0
             and text[error.start - 1] == " ")
    while alone and extra > 0 and text[end:end + 1] == " ":
        end, extra = end + 1, extra - 1
    return out, end


codecs.register_error(HANDLER, _stand_in)


def adapt(stream) -> None:
    """Write what `stream`'s encoding cannot hold as its ASCII stand-in (a text stream that can
    be reconfigured; any other is left as it is)."""
    reconfigure = getattr(stream, "reconfigure", None)
    if reconfigure is None:
        return
    try:
        reconfigure(errors=HANDLER)
    except (ValueError, OSError, TypeError):  # closed, detached, or not a TextIOWrapper
        pass
