"""`python -m grader checks [--lang en|ja] [--markdown]`: the check catalogue (id, points, title,
and the why under each title), in the order the grader runs them. `--markdown` prints the
catalogue table of docs/contract.md (id, points, title)."""

from __future__ import annotations


from grader import arguments
from grader.checkdef import all_checks
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


def main(argv: list[str]) -> int:
    p = arguments.Parser(prog="python -m grader checks", description=__doc__)
    p.add_argument("--lang", choices=("en", "ja"))
    p.add_argument("--markdown", action="store_true", help="the catalogue table of docs/contract.md")
    try:
        args = p.parse_args(argv)
    except SystemExit as exc:
        return 0 if exc.code == 0 else 2
    lang = args.lang or default_lang()
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
