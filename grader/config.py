"""The instructor config file (`--config grader.toml`): what students see in hidden grading.

    detail = "actual-only"        # full | actual-only | none  (--detail overrides it)
    show = "full"                  # full | verdict | hidden: what students see of each check
    visibility = "after_due_date"  # Gradescope visibility of every check, by default
    hints = "after-runs"           # always | after-runs (the default) | never
    hint_after = 3                 # after-runs: a failing check's hint shows by itself once
                                   # it has failed this many local runs in a row (default 3)

    [families.race]                # a rule family (grader.checkdef.FAMILIES): all its checks
    show = "verdict"

    [checks.race-one-winner]       # one check: wins over its family and the top level
    show = "hidden"
    visibility = "after_published" # hidden | after_due_date | after_published | visible

Unknown keys, check ids, family names or values are errors: a typo must not silently show
hidden tests.

What students see of a check (`show`, its *level*, `level_of`):
- `full`: everything the detail level shows (timeline, values, row, hint);
- `verdict`: its verdict and a one-line message (what went wrong), no timeline, no values, no
  row, no hint, no printed output;
- `hidden`: nothing of it (not its title, not its verdict) until the results are published:
  every report a student reads counts it only in a line saying how many checks, worth how many
  points, are hidden and count in the grade. Gradescope gets the whole test with a `visibility`
  that is not `visible` (Gradescope keeps it from students and shows it to instructors, then to
  students after the due date or once published).

`show` and `visibility` say one thing from two sides: Gradescope's `visibility` of a hidden check
is never `visible` (`after_published` unless set), and a check whose `visibility` is not `visible`
is hidden (the student's reports honour what Gradescope would). The most specific table that sets
either one decides the check (its `[checks.ID]`, else its `[families.NAME]`, else the top level);
the other key comes from the nearest wider table whose value agrees with it, else it follows
from the first (a hidden check's visibility is `after_published`, a shown check's `visible`, a
check that `visibility = "visible"` shows is `full`). A table that sets both and contradicts
itself (`show = "hidden"` with `visibility = "visible"`, or `show = "full"` with a visibility
that hides) is an error. `--instructor` ignores the levels: the instructor's copy.

Hints (a failed check's "Hint:", which often gives the fix away): `always` shows every fitting
hint; `never` shows none, anywhere (`python -m grader hint` says hints are off); `after-runs`
(the default) shows a check's hint when asked (`python -m grader hint ID`, `--hints`) or by
itself once the check has failed `hint_after` local runs in a row (the run history beside the
target, grader.report.history). A grade without a history (`--no-history`: the instructor's
batch, Gradescope and Classroom 50 runs) counts no runs: with `after-runs` it shows no hints.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass, field
from pathlib import Path

VISIBILITIES = ("hidden", "after_due_date", "after_published", "visible")
#: What students see of a check (see the module docstring), most first.
LEVELS = ("full", "verdict", "hidden")
#: Gradescope's visibility of a hidden check whose config does not say it.
HIDDEN_VISIBILITY = "after_published"
#: The settings a [checks.ID] or [families.NAME] table may hold.
SCOPED = ("show", "visibility")
DETAILS = ("full", "actual-only", "none")
HINTS = ("always", "after-runs", "never")
DEFAULT_HINT_AFTER = 3


class ConfigError(Exception):
    pass


@dataclass
class Config:
    detail: str = "full"
    #: the top level's `show` and `visibility`, None when not set
    show: str | None = None
    visibility: str | None = None
    check_visibility: dict[str, str] = field(default_factory=dict)
    check_show: dict[str, str] = field(default_factory=dict)
    family_visibility: dict[str, str] = field(default_factory=dict)
    family_show: dict[str, str] = field(default_factory=dict)
    hints: str = "after-runs"
    hint_after: int = DEFAULT_HINT_AFTER
    #: --instructor: every check in full, whatever `show` says (the instructor's own copy)
    instructor: bool = False
    #: each check's rule family (check id -> family name), as `load` was given it
    families: dict[str, str] = field(default_factory=dict)

    def _scopes(self, check_id: str) -> list[tuple[str | None, str | None]]:
        """(show, visibility) of the tables that may set `check_id`, most specific first."""
        family = self.families.get(check_id)
        return [(self.check_show.get(check_id), self.check_visibility.get(check_id)),
                (self.family_show.get(family), self.family_visibility.get(family)),
                (self.show, self.visibility)]

    def _resolved(self, check_id: str) -> tuple[str, str]:
        """The check's (level, Gradescope visibility), as the module docstring says."""
        scopes = self._scopes(check_id)
        for at, (show, visibility) in enumerate(scopes):
            if show is None and visibility is None:
                continue
            wider = scopes[at + 1:]
            if show is None:  # visibility decides: hidden unless visible
                if visibility != "visible":
                    return "hidden", visibility
                shows = [s for s, _ in wider if s is not None and s != "hidden"]
                return (shows[0] if shows else "full"), visibility
            if visibility is None:
                if show != "hidden":
                    return show, "visible"
                hiding = [v for _, v in wider if v is not None and v != "visible"]
                return show, hiding[0] if hiding else HIDDEN_VISIBILITY
            return show, visibility
        return "full", "visible"

    def visibility_of(self, check_id: str) -> str:
        """Gradescope's `visibility` of the check (whatever --instructor says)."""
        return self._resolved(check_id)[1]

    def level_of(self, check_id: str) -> str:
        """What students see of the check: full | verdict | hidden (full with --instructor)."""
        return "full" if self.instructor else self._resolved(check_id)[0]

    def levels(self, check_ids) -> dict[str, str]:
        """The level of every check of `check_ids` that is not full (the view's `levels`)."""
        return {cid: level for cid in check_ids if (level := self.level_of(cid)) != "full"}


def toml():
    """The TOML reader (tomllib; tomli on Python 3.10), imported when a file is to be read: not
    on the way of a grade without one."""
    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover - Python 3.10
        import tomli as tomllib
    return tomllib


def load(path: str | Path | None, known_checks: set[str],
         families: dict[str, str] | None = None) -> Config:
    """The config file at `path` (None: the defaults); `known_checks` the check ids it may name,
    `families` each check's rule family (grader.checkdef.check_families): the [families.NAME]
    tables it may hold."""
    families = dict(families or {})
    if path is None:
        return Config(families=families)
    tomllib = toml()
    try:
        data = tomllib.loads(Path(path).read_text(encoding="utf-8"))
    except OSError as exc:
        raise ConfigError(f"{path}: {exc.strerror}") from None
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path}: {exc}") from None
    unknown = set(data) - {"detail", "visibility", "show", "checks", "families", "hints",
                           "hint_after"}
    if unknown:
        raise ConfigError(f"{path}: unknown setting(s): {', '.join(sorted(unknown))}")
    config = Config(detail=_choice(path, "detail", data.get("detail", "full"), DETAILS),
                    families=families,
                    hints=_choice(path, "hints", data.get("hints", "after-runs"), HINTS))
    config.show, config.visibility = _scoped(path, "", data)
    if "hint_after" in data:
        after = data["hint_after"]
        if config.hints != "after-runs":
            raise ConfigError(f'{path}: hint_after = {after!r}: only with hints = "after-runs" '
                              f'(hints is {config.hints!r})')
        if type(after) is not int or after < 1:
            raise ConfigError(f"{path}: hint_after = {after!r}: a whole number of runs, 1 or more")
        config.hint_after = after
    for table, known, shows, visibilities in (
            ("checks", known_checks, config.check_show, config.check_visibility),
            ("families", set(families.values()), config.family_show, config.family_visibility)):
        entries = data.get(table) or {}
        if not isinstance(entries, dict):
            raise ConfigError(f"{path}: {table}: a table of [{table}.NAME] tables")
        for name, settings in entries.items():
            if name not in known:
                what = "check" if table == "checks" else "rule family"
                raise ConfigError(f"{path}: [{table}.{name}]: no such {what}")
            if not isinstance(settings, dict) or set(settings) - set(SCOPED):
                raise ConfigError(f"{path}: [{table}.{name}]: only 'show' and 'visibility' "
                                  "can be set")
            show, visibility = _scoped(path, f"{table}.{name}.", settings)
            if show is not None:
                shows[name] = show
            if visibility is not None:
                visibilities[name] = visibility
    return config


def _scoped(path, prefix: str, table: dict) -> tuple[str | None, str | None]:
    """A table's `show` and `visibility` (None when not set), refused when they contradict
    each other (a hidden check Gradescope would show, a shown check Gradescope would hide)."""
    show = _choice(path, prefix + "show", table["show"], LEVELS) if "show" in table else None
    visibility = (_choice(path, prefix + "visibility", table["visibility"], VISIBILITIES)
                  if "visibility" in table else None)
    if show is not None and visibility is not None \
            and (show == "hidden") != (visibility != "visible"):
        raise ConfigError(f"{path}: {prefix}show = {show!r} with {prefix}visibility = "
                          f"{visibility!r}: a hidden check has a visibility other than "
                          "'visible', a shown one 'visible'")
    return show, visibility


def _choice(path, name: str, value, allowed: tuple[str, ...]) -> str:
    if value not in allowed:
        raise ConfigError(f"{path}: {name} = {value!r}: choose one of {', '.join(allowed)}")
    return value
