"""The instructor config file (`--config grader.toml`): what students see in hidden grading.

    detail = "actual-only"        # full | actual-only | none  (--detail overrides it)
    visibility = "after_due_date"  # Gradescope visibility of every check, by default

    [checks.race-one-winner]
    visibility = "hidden"          # hidden | after_due_date | after_published | visible

Unknown keys, check ids or values are errors: a typo must not silently show hidden tests.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass, field
from pathlib import Path

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    import tomli as tomllib

VISIBILITIES = ("hidden", "after_due_date", "after_published", "visible")
DETAILS = ("full", "actual-only", "none")


class ConfigError(Exception):
    pass


@dataclass
class Config:
    detail: str = "full"
    visibility: str = "visible"
    check_visibility: dict[str, str] = field(default_factory=dict)

    def visibility_of(self, check_id: str) -> str:
        return self.check_visibility.get(check_id, self.visibility)


def load(path: str | Path | None, known_checks: set[str]) -> Config:
    if path is None:
        return Config()
    try:
        data = tomllib.loads(Path(path).read_text(encoding="utf-8"))
    except OSError as exc:
        raise ConfigError(f"{path}: {exc.strerror}") from None
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path}: {exc}") from None
    unknown = set(data) - {"detail", "visibility", "checks"}
    if unknown:
        raise ConfigError(f"{path}: unknown setting(s): {', '.join(sorted(unknown))}")
    config = Config(detail=_choice(path, "detail", data.get("detail", "full"), DETAILS),
                    visibility=_choice(path, "visibility", data.get("visibility", "visible"),
                                       VISIBILITIES))
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
