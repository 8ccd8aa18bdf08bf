"""The report files a grade can write, each declared once: its flag, its help, its writer, and
how to recognise a file it wrote before.

A grade replaces a report file it finds at the path given (an earlier run's) and writes nothing
anywhere else: `refused_path` is asked before grading starts, and a path it refuses is never
removed nor written. It refuses a Python file, the file under grade, anything inside the lab's
own folders (`lab/`, `solutions/`, `grader/`), the same file for two flags, and an existing file
with something in it that is not a report of that flag's kind (`recognises`): a student who types
`--html lab/queue.py` or `--json notes.txt` loses nothing. An empty file, or something that is
not a regular file (/dev/stdout, a FIFO a CI step reads), is written to as before.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from typing import Callable

from .. import arguments
from ..config import Config
from . import files
from .messages import LANGS, Family, text
from .view import ReportView

#: A Python file's suffixes: never a report's.
PYTHON_SUFFIXES = (".py", ".pyw", ".pyi", ".pyc", ".pyo")
#: How much of an existing file is read to recognise it (a report starts with what says so).
HEAD_BYTES = 64 * 1024
#: What the HTML report's <head> says, so that a later grade knows the file is one of ours.
HTML_GENERATOR = '<meta name="generator" content="lease-lab">'


@dataclass(frozen=True)
class Format:
    """One output format, declared once: `--<name> PATH` writes `write(report, config)` to PATH;
    its help is `cli.option.<name>` in the catalogue (`OUTPUT_OPTION`)."""
    name: str  # the flag without its dashes: a word, or words joined by "-"
    noun: str  # what its file is, in a refusal ("an HTML report")
    write: Callable[[ReportView, Config], str]
    recognises: Callable[[str], bool]  # the head of an existing file: one of this kind's?

    @property
    def flag(self) -> str:
        return "--" + self.name

    @property
    def dest(self) -> str:
        """The argparse attribute of the flag (`--json` -> `json`, `--a-b` -> `a_b`)."""
        return self.name.replace("-", "_")

    def help(self, lang: str) -> str:
        """The flag's line in `--help`, in `lang`."""
        return text(OUTPUT_OPTION(self.name), lang)

    def add_to(self, parser, help: str) -> None:
        """Add the flag to an argparse parser (or group), with `help` (e.g. `self.help(lang)`)."""
        parser.add_argument(self.flag, dest=self.dest, metavar="PATH", help=help)


def _declared_names() -> tuple[str, ...]:
    return tuple(f.name for f in FORMATS)


#: The --help line of a report file's flag, one per format in FORMATS (a catalogue family,
#: declared here beside the formats: grader.report.messages imports no module of the package).
OUTPUT_OPTION = Family("cli.option.{}", _declared_names)


# Each writer imports its module when a grade writes that file: a terminal grade imports none
# (xml, html entities, jinja2... are not on the way to the first verdict).
def _html(report: ReportView, config: Config) -> str:
    from . import html

    return html.from_view(report)


def _results_json(report: ReportView, config: Config) -> str:
    from . import results_json

    return _json_file(results_json.from_view(report, config))


def _junit(report: ReportView, config: Config) -> str:
    from . import junit

    return junit.from_view(report)


def _prairielearn(report: ReportView, config: Config) -> str:
    from . import prairielearn

    return _json_file(prairielearn.from_view(report))


def _markdown(report: ReportView, config: Config) -> str:
    from . import markdown

    return markdown.from_view(report)


def _json_file(payload: dict) -> str:
    from . import results_json

    return results_json.serialise(payload) + "\n"


def _json_with(key: str, without: str | None = None) -> Callable[[str], bool]:
    """A JSON object that has `key` at its top level, and not `without`."""
    def recognises(head: str) -> bool:
        keys = _top_keys(head)
        return key in keys and not (without and without in keys)
    return recognises


def _top_keys(head: str) -> set[str]:
    """The top-level keys of the JSON object `head` opens, read one by one so that a file cut
    off at HEAD_BYTES still names the keys before the cut; empty if it opens no object."""
    decoder, keys = json.JSONDecoder(), set()
    at = len(head) - len(head.lstrip("\ufeff \t\r\n"))
    if head[at:at + 1] != "{":
        return keys
    at += 1
    try:
        while True:
            at = _skip_space(head, at)
            if head[at:at + 1] == "}":
                return keys
            name, at = decoder.raw_decode(head, at)
            at = _skip_space(head, at)
            if not isinstance(name, str) or head[at:at + 1] != ":":
                return keys
            keys.add(name)
            _, at = decoder.raw_decode(head, _skip_space(head, at + 1))
            at = _skip_space(head, at)
            if head[at:at + 1] != ",":
                return keys
            at += 1
    except ValueError:  # cut off (or not JSON): the keys read so far
        return keys


def _skip_space(s: str, at: int) -> int:
    while at < len(s) and s[at] in " \t\r\n":
        at += 1
    return at


def _is_junit(head: str) -> bool:
    start = head.lstrip("\ufeff \t\r\n")
    if start.startswith("<?xml"):
        start = start.split("?>", 1)[-1].lstrip()
    return start.startswith(("<testsuites", "<testsuite"))


def _is_html_report(head: str) -> bool:
    start = head.lstrip("\ufeff \t\r\n")[:15].lower()
    # the generator tag, or (a report of an earlier version) its stylesheet's first comment
    return start.startswith("<!doctype html") and (HTML_GENERATOR in head
                                                   or "/* The lease lab report" in head)


def _is_markdown_summary(head: str) -> bool:
    first = head.lstrip("\ufeff").split("\n", 1)[0]
    prefixes = [text("ui.header", lang, target="\0").split("\0")[0] for lang in LANGS]
    return first.startswith("## ") and any(first[3:].startswith(p) for p in prefixes)


FORMATS = (
    Format("json", "a results.json", _results_json, _json_with("tests", without="gradable")),
    Format("html", "an HTML report", _html, _is_html_report),
    Format("junit", "a JUnit XML report", _junit, _is_junit),
    Format("prairielearn", "a PrairieLearn results.json", _prairielearn, _json_with("gradable")),
    Format("markdown", "a Markdown summary", _markdown, _is_markdown_summary),
)
BY_FLAG = {f.flag: f for f in FORMATS}


def asked(args) -> dict[str, str]:
    """The report files an argparse namespace with every format's flag asks for: {flag: path}."""
    return {f.flag: getattr(args, f.dest) for f in FORMATS if getattr(args, f.dest, None)}


def check_paths(asked: dict[str, str], *, target: str | None,
                protected: list[str]) -> str | None:
    """The first report path of `asked` ({flag: path}) that may not or cannot be written, as
    `FLAG PATH: why`; None when every one can."""
    taken: dict[str, str] = {}
    for flag, path in asked.items():
        problem = (refused_path(flag, path, target=target, protected=protected, taken=taken)
                   or arguments.unwritable_destination(path))
        if problem:
            return f"{flag} {path}: {problem}"
        taken[os.path.realpath(path)] = flag
    return None


def write_all(asked: dict[str, str], report: ReportView, config: Config) -> str | None:
    """Write every report file of `asked` ({flag: path}); the first that could not be written,
    as one line (checked before grading, a folder can still vanish or a disk fill up)."""
    for flag, path in asked.items():
        try:
            files.write_atomically(path, BY_FLAG[flag].write(report, config))
        except OSError as exc:
            return f"{flag} {path}: could not be written ({exc.strerror or exc})"
    return None


def refused_path(flag: str, path: str, *, target: str | None, protected: list[str],
                 taken: dict[str, str]) -> str | None:
    """Why `flag` may not write at `path`, as one line; None when it may. `target` is the file
    under grade, `protected` the folders nothing is written in, `taken` {real path: flag} of the
    flags checked before this one."""
    real = os.path.realpath(path)  # a symlink is judged by what it points at
    if target and real == os.path.realpath(target):
        return "is the file under grade: a report never replaces your code"
    if real.lower().endswith(PYTHON_SUFFIXES) or path.lower().endswith(PYTHON_SUFFIXES):
        return "is a Python file: a report never replaces code (write it to e.g. report.html)"
    for folder in protected:
        folder = os.path.realpath(folder)
        if real == folder or real.startswith(folder.rstrip(os.sep) + os.sep):
            return (f"is inside {os.path.relpath(folder)}{os.sep}, the lab's own files: write "
                    "reports outside it")
    if real in taken:
        return f"is the same file as {taken[real]}'s"
    head = _regular_head(real)
    if head is not None and head.strip() and not BY_FLAG[flag].recognises(head):
        return (f"already exists and is not {BY_FLAG[flag].noun} the grader wrote, so it is not "
                "replaced (remove it first, or choose another path)")
    return None


def _regular_head(path: str) -> str | None:
    """The first HEAD_BYTES of `path` as text if it is a regular file; None if it is missing or
    not a regular file (never opened: a FIFO would block)."""
    try:
        if not os.path.isfile(path):
            return None
        with open(path, "rb") as f:
            return f.read(HEAD_BYTES).decode("utf-8", errors="replace")
    except OSError:
        return None
