"""`python -m grader checks [--lang en|ja] [--markdown [--update PATH]]`: the check catalogue
(id, points, title, and the why under each title), in the order the grader runs them.
`--markdown` prints the catalogue table of docs/contract.md (id, points, title); `--update
docs/contract.md` writes it there in place of the table it holds, and the count of checks and
points in the sentence "N points over M checks" (content derived from the registry and the
catalogue: no hand edit)."""

from __future__ import annotations

import re
import sys
from pathlib import Path

from grader import arguments
from grader.checkdef import all_checks
from . import files
from .messages import CHECK_TITLE, CHECK_WHY, default_lang, text
from .wrapping import wrap


def rows(lang: str) -> list[tuple[str, int, str, str]]:
    return [(c.id, c.points, text(CHECK_TITLE(c.id), lang), text(CHECK_WHY(c.id), lang))
            for c in all_checks().values()]


def markdown(lang: str = "en") -> str:
    lines = ["| id | points | what it verifies |", "|---|---:|---|"]
    for check_id, points, title, _ in rows(lang):
        lines.append(f"| `{check_id}` | {points} | {title} |")
    total = sum(r[1] for r in rows(lang))
    lines.append(f"| | **{total}** | |")
    return "\n".join(lines)


#: The sentence of docs/contract.md that counts the checks: `--update` keeps it in step.
COUNTED = re.compile(r"\b\d+ points over \d+ checks\b")


def counted() -> str:
    """"N points over M checks", as the registry has them."""
    checks = all_checks()
    return f"{sum(c.points for c in checks.values())} points over {len(checks)} checks"


def updated(document: str, lang: str = "en") -> str:
    """`document` (docs/contract.md) with its check table (the lines from the table's header to
    the last line starting with "|" after it) replaced by `markdown(lang)`, and its first "N
    points over M checks" by `counted()`. ValueError if it holds no such table."""
    table = markdown(lang).split("\n")
    lines = document.split("\n")
    if table[0] not in lines:
        raise ValueError(f"no check table in it (no line {table[0]!r})")
    start = lines.index(table[0])
    end = start
    while end < len(lines) and lines[end].startswith("|"):
        end += 1
    return COUNTED.sub(counted(), "\n".join(lines[:start] + table + lines[end:]), count=1)


def main(argv: list[str]) -> int:
    p = arguments.Parser(prog="python -m grader checks", description=__doc__)
    p.add_argument("--lang", choices=("en", "ja"))
    p.add_argument("--markdown", action="store_true", help="the catalogue table of docs/contract.md")
    p.add_argument("--update", metavar="PATH",
                   help="with --markdown: write the table into PATH (docs/contract.md) in place "
                        "of the one there, and its count of checks")
    args = p.parse_command(argv)
    if isinstance(args, int):  # --help, or a bad argument
        return args
    # the contract is English: --update writes English unless told otherwise
    lang = args.lang or ("en" if args.update is not None else default_lang())
    if args.update is not None:
        return update(args.update, lang) if args.markdown else _usage(p, "--update needs --markdown")
    if args.markdown:
        print(markdown(lang))
        return 0
    print(listing(lang))
    return 0


def listing(lang: str) -> str:
    """Each check: its id, points and title on one line, its why indented under them."""
    lines = []
    for check_id, points, title, why in rows(lang):
        lines += ["", f"{check_id:<36} {points:>3}  {title}", *wrap(why, lang, "    ")]
    return "\n".join(lines[1:])


def update(path: str, lang: str) -> int:
    """Write the current table into the file at `path`; say whether it changed."""
    try:
        before = Path(path).read_text(encoding="utf-8")
        after = updated(before, lang)
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        print(f"python -m grader checks: {path}: {exc}", file=sys.stderr)
        return 2
    if after != before:
        files.write_atomically(path, after)
    print(f"{path}: {'updated' if after != before else 'already up to date'}")
    return 0


def _usage(parser, problem: str) -> int:
    parser.print_usage(sys.stderr)
    print(f"python -m grader checks: {problem}", file=sys.stderr)
    return 2
