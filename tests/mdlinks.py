"""The relative links of Markdown files, and the ones that lead nowhere (the docs' tests and the
student export's use this)."""

from __future__ import annotations

import re
from pathlib import Path

FENCE = re.compile(r"^```.*?^```", re.M | re.S)
CODE_SPAN = re.compile(r"`[^`\n]*`")
LINK = re.compile(r"!?\[[^\]\n]*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
HEADING = re.compile(r"^#{1,6}\s+(.+?)\s*#*\s*$", re.M)
EXTERNAL = re.compile(r"^[a-z][a-z0-9+.-]*:", re.I)  # https:, mailto:, ...


def links(markdown: str) -> list[str]:
    """Every link target in `markdown`, outside code (fenced blocks and code spans; a code span
    inside a link's text is fine: `[`docs/x.md`](docs/x.md)`)."""
    text = FENCE.sub("", markdown)
    text = CODE_SPAN.sub("code", text)
    return LINK.findall(text)


def anchors(markdown: str) -> set[str]:
    """The fragment ids GitHub gives the headings of `markdown` (lower case, punctuation dropped,
    spaces to '-', a repeated heading numbered -1, -2, ...)."""
    seen: dict[str, int] = {}
    ids = set()
    for heading in HEADING.findall(FENCE.sub("", markdown)):
        slug = re.sub(r"[^\w\- ]", "", heading.lower()).replace(" ", "-")
        count = seen.get(slug, 0)
        seen[slug] = count + 1
        ids.add(slug if count == 0 else f"{slug}-{count}")
    return ids


def broken(path: Path, root: Path) -> list[str]:
    """`path: target (why)` for each relative link of the Markdown file `path` that does not lead
    to a file (or a folder) inside `root`, or names a heading its file does not have."""
    found = []
    for target in links(path.read_text(encoding="utf-8")):
        if EXTERNAL.match(target):
            continue
        name, _, fragment = target.partition("#")
        dest = (path.parent / name).resolve() if name else path.resolve()
        where = f"{path.relative_to(root).as_posix()}: {target}"
        if not dest.is_relative_to(root.resolve()):
            found.append(f"{where} (outside the repository)")
        elif not dest.exists():
            found.append(f"{where} (no such file)")
        elif fragment and dest.suffix == ".md" and \
                fragment not in anchors(dest.read_text(encoding="utf-8")):
            found.append(f"{where} (no such heading)")
    return found
