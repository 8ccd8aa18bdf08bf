"""`python -m grader hint CHECK-ID [--lang en|ja] [--config PATH]`: one check's hint and why it
matters, when a student asks for it (rustlings' `hint`, check50's `help`).

The hint shown is the check's own (`check.<id>.hint`): the one a failure of its rule gets in a
report (also for a check this copy withholds: its words are in the catalogue). An id that is not a check is exit 2 with one line, and the id it looks like. With the
instructor's `hints = "never"` (grader.config) the command says hints are off (exit 2): a
course that keeps hints back keeps them back here too, and so does a check whose level
(`show`) is not full: a check students see as a verdict only, or not at all, has no hint to ask
for (exit 2, one line that does not say whether the id is a check)."""

from __future__ import annotations

import difflib
import sys

from grader import arguments
from grader import config as configs
from grader.checkdef import all_checks, check_families, withheld
from .messages import CHECK_HINT, CHECK_TITLE, CHECK_WHY, LANGS, default_lang, text
from .wrapping import wrap


def main(argv: list[str]) -> int:
    p = arguments.Parser(prog="python -m grader hint",
                         description=text("cli.command.hint", "en"))
    p.add_argument("check", metavar="CHECK-ID")
    p.add_argument("--lang", choices=LANGS)
    p.add_argument("--config", metavar="PATH", help="the instructor's config (its hints policy)")
    args = p.parse_command(argv)
    if isinstance(args, int):  # --help, or a bad argument
        return args
    lang = args.lang or default_lang()
    checks = list(all_checks()) + [c["id"] for c in withheld()]  # its words are all here
    try:
        config = configs.load(args.config, set(checks), check_families())
    except configs.ConfigError as exc:
        print(f"grader: {exc}", file=sys.stderr)
        return 2
    if config.hints == "never":
        print("grader: " + text("hints.off", lang), file=sys.stderr)
        return 2
    if args.check in checks and config.level_of(args.check) != "full":
        print("grader: " + text("hints.not-shown", lang), file=sys.stderr)
        return 2
    if args.check not in checks:
        print("grader: " + unknown(args.check, checks, lang), file=sys.stderr)
        return 2
    print(hint_text(args.check, lang))
    return 0


def unknown(check_id: str, ids: list[str], lang: str) -> str:
    """The one line for an id that is not a check, with the id it looks like."""
    close = difflib.get_close_matches(check_id, ids, n=1, cutoff=0.5)
    if close:
        return text("hints.unknown-check", lang, id=check_id, meant=close[0])
    return text("hints.unknown-check-no-match", lang, id=check_id)


def hint_text(check_id: str, lang: str) -> str:
    """The check's id and title, its hint, and why it matters."""
    lines = [f"{check_id} — {text(CHECK_TITLE(check_id), lang)}", ""]
    lines += wrap(f"{text('ui.hint', lang)} {text(CHECK_HINT(check_id), lang)}", lang, "", "  ")
    lines += wrap(f"{text('ui.why', lang)} {text(CHECK_WHY(check_id), lang)}", lang, "", "  ")
    return "\n".join(lines)
