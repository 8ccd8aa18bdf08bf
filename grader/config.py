"""The instructor config file (`--config grader.toml`): what students see in hidden grading.

    detail = "actual-only"        # full | actual-only | none  (--detail overrides it)
    visibility = "after_due_date"  # Gradescope visibility of every check, by default
    hints = "after-runs"           # always | after-runs (the default) | never
    hint_after = 3                 # after-runs: a failing check's hint shows by itself once
                                   # it has failed this many local runs in a row (default 3)

    [checks.race-one-winner]
    visibility = "hidden"          # hidden | after_due_date | after_published | visible

Unknown keys, check ids or values are errors: a typo must not silently show hidden tests.

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
DETAILS = ("full", "actual-only", "none")
HINTS = ("always", "after-runs", "never")
DEFAULT_HINT_AFTER = 3


class ConfigError(Exception):
    pass


@dataclass
class Config:
    detail: str = "full"
    visibility: str = "visible"
    check_visibility: dict[str, str] = field(default_factory=dict)
    hints: str = "after-runs"
    hint_after: int = DEFAULT_HINT_AFTER

    def visibility_of(self, check_id: str) -> str:
        return self.check_visibility.get(check_id, self.visibility)


def toml():
    """The TOML reader (tomllib; tomli on Python 3.10), imported when a file is to be read: not
    on the way of a grade without one."""
    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover - Python 3.10
        import tomli as tomllib
    return tomllib


def load(path: str | Path | None, known_checks: set[str]) -> Config:
    if path is None:
        return Config()
    tomllib = toml()
    try:
        data = tomllib.loads(Path(path).read_text(encoding="utf-8"))
    except OSError as exc:
        raise ConfigError(f"{path}: {exc.strerror}") from None
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path}: {exc}") from None
    unknown = set(data) - {"detail", "visibility", "checks", "hints", "hint_after"}
    if unknown:
        raise ConfigError(f"{path}: unknown setting(s): {', '.join(sorted(unknown))}")
    config = Config(detail=_choice(path, "detail", data.get("detail", "full"), DETAILS),
                    visibility=_choice(path, "visibility", data.get("visibility", "visible"),
                                       VISIBILITIES),
                    hints=_choice(path, "hints", data.get("hints", "after-runs"), HINTS))
    if "hint_after" in data:
        after = data["hint_after"]
        if config.hints != "after-runs":
            raise ConfigError(f'{path}: hint_after = {after!r}: only with hints = "after-runs" '
                              f'(hints is {config.hints!r})')
        if type(after) is not int or after < 1:
            raise ConfigError(f"{path}: hint_after = {after!r}: a whole number of runs, 1 or more")
        config.hint_after = after
    for check_id, settings in (data.get("checks") or {}).items():
        if check_id not in known_checks:
            raise ConfigError(f"{path}: [checks.{check_id}]: no such check")
        if not isinstance(settings, dict) or set(settings) - {"visibility"}:
            raise ConfigError(f"{path}: [checks.{check_id}]: only 'visibility' can be set")
        if "visibility" in settings:
            config.check_visibility[check_id] = _choice(
                path, f"checks.{check_id}.visibility", settings["visibility"], VISIBILITIES)
    return config


def _choice(path, name: str, value, allowed: tuple[str, ...]) -> str:
    if value not in allowed:
        raise ConfigError(f"{path}: {name} = {value!r}: choose one of {', '.join(allowed)}")
    return value
