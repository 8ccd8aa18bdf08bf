"""`python -m grader catalogue`: the message catalogue's files, written by a tool, not by hand.

    python -m grader catalogue set KEY --en TEXT --ja TEXT [--file FAMILY] [--new-group]
    python -m grader catalogue remove KEY
    python -m grader catalogue format [FAMILY ...]

The layout of grader/report/catalogue/FAMILY.json (read by grader.report.messages): `{` and `}`
on lines of their own, one key a line, `  "key": {"en": "...", "ja": "..."},` (the key and its
texts as json.dumps writes them, non-ASCII as it is), the entries in groups with one blank line
between them, a newline at the end. The groups are the maintainers' (a check's title, why and
hint; a family's details) and are kept: `set` changes a key where it is, and puts a new one after
the last key that shares the most of its dotted prefix (check.<id>.hint after check.<id>.why),
in that key's group when they share all but the last part, else in a group of its own after it.
`--new-group` starts a group on request: the new key opens one of its own right after that key's
group even when they share all but the last part (a new set of detail.* sentences; the keys set
after it that are like it then join it). It is refused for a key that is there already, which
stays where it is. `--file` says which file a new key goes to (needed when no key is like it, or
keys like it are in more than one file; a FAMILY with no file yet makes one). Both texts must
have the same placeholders, `{name}`, as tests/test_catalogue.py asks. `format` writes files in
the layout.
"""

from __future__ import annotations

import argparse
import json
import re
import string
import sys
from pathlib import Path

from grader import arguments
from grader.report.files import write_atomically
from grader.report.messages import CATALOGUE_DIR, LANGS, default_lang, text

USAGE = """\
python -m grader catalogue set KEY --en TEXT --ja TEXT [--file FAMILY] [--new-group]
                             [--lang {en,ja}]
python -m grader catalogue remove KEY [--lang {en,ja}]
python -m grader catalogue format [FAMILY ...] [--lang {en,ja}]"""
#: A message key: dotted parts of lower-case letters, digits, "-" and "_" (every key today).
KEY = re.compile(r"[a-z0-9][a-z0-9_-]*(?:\.[a-z0-9_-]+)*")
#: A catalogue file's name without ".json".
FAMILY = re.compile(r"[a-z0-9][a-z0-9_-]*")

Entry = tuple[str, dict]  # (key, {"en": ..., "ja": ...})
Groups = list[list[Entry]]


class CatalogueError(Exception):
    """A request the catalogue refuses; the text (one line, in the language asked for) says why."""


# -- the layout ----------------------------------------------------------------------------------
def _unique(pairs: list[tuple[str, object]]) -> dict:
    found = {}
    for key, value in pairs:
        if key in found:
            raise ValueError(f"key {key!r} twice")
        found[key] = value
    return found


def read(path: Path) -> Groups:
    """A catalogue file's entries, in order, in the groups its blank lines make. A file in
    another layout (a key's texts over several lines) is read as it is, its keys in one group
    but where a blank line comes before a key's line."""
    source = path.read_text(encoding="utf-8")
    entries = json.loads(source, object_pairs_hook=_unique)
    lines = source.split("\n")
    # the line of each entry's key: indented by two spaces (a key's texts, if over several
    # lines, by more)
    starts = [i for i, line in enumerate(lines) if line.startswith('  "')]
    breaks = ([i > 0 and lines[i - 1].strip() == "" for i in starts]
              if len(starts) == len(entries) else [False] * len(entries))
    groups: Groups = []
    for (key, texts), new_group in zip(entries.items(), breaks):
        if new_group or not groups:
            groups.append([])
        groups[-1].append((key, texts))
    return groups


def render(groups: Groups) -> str:
    """The file's text in the layout (the module docstring). A key's texts in LANGS order; a
    text in another language, or one missing, is written as it is (tests/test_catalogue.py
    names it)."""
    blocks = ["\n".join(f"  {json.dumps(key, ensure_ascii=False)}: "
                        f"{json.dumps(_in_order(texts), ensure_ascii=False)}"
                        for key, texts in group)
              for group in groups if group]
    body = ",\n\n".join(block.replace("\n", ",\n") for block in blocks)
    return "{\n" + body + ("\n" if body else "") + "}\n"


def _in_order(texts: dict) -> dict:
    return {**{code: texts[code] for code in LANGS if code in texts},
            **{code: words for code, words in texts.items() if code not in LANGS}}


def write(path: Path, groups: Groups) -> None:
    write_atomically(path, render(groups))


def files(folder: Path = CATALOGUE_DIR) -> dict[str, Path]:
    """The catalogue's files by family."""
    return {path.stem: path for path in sorted(folder.glob("*.json"))}


def where(key: str, folder: Path = CATALOGUE_DIR) -> str | None:
    """The family whose file holds `key`, or None."""
    for family, path in files(folder).items():
        if any(k == key for group in read(path) for k, _ in group):
            return family
    return None


# -- placeholders --------------------------------------------------------------------------------
def placeholders(template: str) -> set[str]:
    """The names a template's `{...}` fields give (`{n:g}` -> n, `{a.b}` -> a), as
    tests/test_catalogue.py compares them. ValueError if it is not a template."""
    return {name.split(".")[0].split("[")[0]
            for _, name, _, _ in string.Formatter().parse(template) if name is not None}


def checked_texts(key: str, texts: dict[str, str], lang: str = "en") -> dict[str, str]:
    """The texts in LANGS order, after checking each is a template, not empty, and that all
    give the same placeholders (CatalogueError, in `lang`, when not)."""
    names = {}
    for code in LANGS:
        if not texts.get(code, "").strip():
            raise CatalogueError(text("instructor.catalogue-empty", lang, name=key, text=code))
        try:
            names[code] = placeholders(texts[code])
        except ValueError as exc:
            raise CatalogueError(text("instructor.catalogue-not-a-template", lang, name=key,
                                      text=code, error=exc)) from None
    if len({frozenset(found) for found in names.values()}) > 1:
        shown = {code: " ".join(f"{{{name}}}" for name in sorted(names[code])) or "-"
                 for code in LANGS}
        raise CatalogueError(text("instructor.catalogue-placeholders", lang, name=key,
                                  en=shown["en"], ja=shown["ja"]))
    return {code: texts[code] for code in LANGS}


# -- set, remove ---------------------------------------------------------------------------------
def _shared(a: str, b: str) -> int:
    """How many dotted parts, from the first, `a` and `b` share."""
    count = 0
    for x, y in zip(a.split("."), b.split(".")):
        if x != y:
            break
        count += 1
    return count


def set_message(key: str, texts: dict[str, str], family: str | None = None,
                folder: Path = CATALOGUE_DIR, lang: str = "en",
                new_group: bool = False) -> tuple[Path, bool]:
    """Give `key` these texts (module docstring): (the file written, whether the key is new).
    `new_group`: a new key opens a group of its own (`--new-group`; refused for a key that is
    there). CatalogueError, in `lang`, for what it refuses."""
    if not KEY.fullmatch(key):
        raise CatalogueError(text("instructor.catalogue-bad-key", lang, name=key))
    if family is not None and not FAMILY.fullmatch(family):
        raise CatalogueError(text("instructor.catalogue-bad-file", lang, file=family))
    texts = checked_texts(key, texts, lang)
    known = files(folder)
    held = where(key, folder)
    if held is not None:
        if family not in (None, held):
            raise CatalogueError(text("instructor.catalogue-elsewhere", lang, name=key, file=held,
                                      wanted=family))
        if new_group:
            raise CatalogueError(text("instructor.catalogue-new-group-there", lang, name=key,
                                      file=held))
        path = known[held]
        groups = read(path)
        for group in groups:
            for i, (k, _) in enumerate(group):
                if k == key:
                    group[i] = (key, texts)
        write(path, groups)
        return path, False
    if family is None:
        family = _family_for(key, known, lang)
    path = known.get(family, folder / f"{family}.json")
    groups = read(path) if path.exists() else []
    _insert(groups, key, texts, new_group)
    write(path, groups)
    return path, True


def _family_for(key: str, known: dict[str, Path], lang: str) -> str:
    """The one family holding the keys most like `key`; CatalogueError when none or several."""
    best, families = 0, set()
    for family, path in known.items():
        for group in read(path):
            for k, _ in group:
                shared = _shared(key, k)
                if shared > best:
                    best, families = shared, {family}
                elif shared == best and shared:
                    families.add(family)
    if len(families) != 1:
        raise CatalogueError(text("instructor.catalogue-which-file", lang, name=key,
                                  files=", ".join(sorted(families)) or "-"))
    return families.pop()


def _insert(groups: Groups, key: str, texts: dict, new_group: bool = False) -> None:
    """`key` after the last key sharing the most of its prefix (module docstring), in a group
    of its own right after that key's group when `new_group`; at the end, in a group of its
    own, when none shares any."""
    best, at = 0, None
    for g, group in enumerate(groups):
        for i, (k, _) in enumerate(group):
            shared = _shared(key, k)
            if shared and shared >= best:
                best, at = shared, (g, i)
    if at is None:
        groups.append([(key, texts)])
        return
    g, i = at
    if best >= len(key.split(".")) - 1 and not new_group:  # the same parent: in its group,
        groups[g].insert(i + 1, (key, texts))                 # right after it
    else:
        groups.insert(g + 1, [(key, texts)])


def remove_message(key: str, folder: Path = CATALOGUE_DIR, lang: str = "en") -> Path:
    """Remove `key` from its file (an emptied group goes with it): the file written."""
    held = where(key, folder)
    if held is None:
        raise CatalogueError(text("instructor.catalogue-unknown-key", lang, name=key))
    path = files(folder)[held]
    groups = [[(k, t) for k, t in group if k != key] for group in read(path)]
    write(path, [group for group in groups if group])
    return path


def format_files(families: list[str] | None = None, folder: Path = CATALOGUE_DIR,
                 lang: str = "en") -> list[tuple[Path, bool]]:
    """Write the files (all, or those of `families`) in the layout: [(file, whether it
    changed)]."""
    known = files(folder)
    unknown = [family for family in families or [] if family not in known]
    if unknown:
        raise CatalogueError(text("instructor.catalogue-no-file", lang, file=unknown[0]))
    done = []
    for family in families or list(known):
        path = known[family]
        before = path.read_text(encoding="utf-8")
        after = render(read(path))
        if after != before:
            write_atomically(path, after)
        done.append((path, after != before))
    return done


# -- the command ---------------------------------------------------------------------------------
def main(argv: list[str], folder: Path = CATALOGUE_DIR) -> int:
    p = arguments.Parser(prog="python -m grader catalogue",
                         description=text("cli.command.catalogue", "en"), epilog=USAGE,
                         formatter_class=argparse.RawDescriptionHelpFormatter)
    common = arguments.Parser(add_help=False)
    common.add_argument("--lang", choices=LANGS, help="language of messages")
    commands = p.add_subparsers(dest="command", required=True, metavar="{set,remove,format}")
    set_ = commands.add_parser("set", parents=[common], help="add a key, or change its texts")
    set_.add_argument("key", metavar="KEY")
    for code in LANGS:
        set_.add_argument(f"--{code}", required=True, metavar="TEXT", help=f"the {code} text")
    set_.add_argument("--file", metavar="FAMILY",
                      help="the file of a new key: grader/report/catalogue/FAMILY.json")
    set_.add_argument("--new-group", action="store_true",
                      help="a new key opens a group of its own (a blank line before it), "
                           "right after the group it would have joined; the keys set after "
                           "it that are like it join it")
    remove = commands.add_parser("remove", parents=[common], help="remove a key")
    remove.add_argument("key", metavar="KEY")
    fmt = commands.add_parser("format", parents=[common],
                              help="write the files (all, or FAMILY's) in the layout")
    fmt.add_argument("families", nargs="*", metavar="FAMILY")
    args = p.parse_command(argv)
    if isinstance(args, int):  # --help, or a bad argument
        return args
    lang = args.lang or default_lang()
    try:
        if args.command == "set":
            path, added = set_message(args.key, {code: getattr(args, code) for code in LANGS},
                                      args.file, folder, lang, args.new_group)
            print(text("instructor.catalogue-added" if added else "instructor.catalogue-changed",
                       lang, file=_shown(path), name=args.key))
        elif args.command == "remove":
            path = remove_message(args.key, folder, lang)
            print(text("instructor.catalogue-removed", lang, file=_shown(path), name=args.key))
        else:
            for path, changed in format_files(args.families, folder, lang):
                print(text("instructor.catalogue-formatted" if changed
                           else "instructor.catalogue-in-layout", lang, file=_shown(path)))
    except CatalogueError as exc:
        print(f"grader: {exc}", file=sys.stderr)
        return 2
    return 0


def _shown(path: Path) -> str:
    """`path` as the repository names it (grader/report/catalogue/x.json), else as it is."""
    root = CATALOGUE_DIR.parent.parent.parent
    return str(path.relative_to(root) if path.is_relative_to(root) else path)
