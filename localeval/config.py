"""Defaults for `localeval score` from a file, so a CI step is just `localeval score data.jsonl`.

Looked for in this order: `--config PATH`; `localeval.toml` next to the data file;
`[tool.localeval]` in `pyproject.toml` in the current directory. Command-line options
override the file. An unknown key is an error that names it, so a typo never
silently turns a gate off.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from localeval.errors import ConfigError

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    import tomli as tomllib

CONFIG_FILE = "localeval.toml"
PYPROJECT = "pyproject.toml"


class Settings(BaseModel):
    """What a config file may set; the keys match the long command-line options."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    metrics: list[str] = Field(default_factory=list)
    thresholds: dict[str, float] = Field(default_factory=dict)
    min_mean: dict[str, float] = Field(default_factory=dict)
    options: dict[str, dict[str, Any]] = Field(default_factory=dict)
    map: dict[str, str] = Field(default_factory=dict)
    model: str | None = None
    n_ctx: int | None = None
    threads: int | None = None
    seed: int | None = None


def _read(path: Path, table: tuple[str, ...]) -> tuple[dict[str, Any], str] | None:
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path}: not valid TOML: {exc}") from None
    for key in table:
        if not isinstance(data, dict) or key not in data:
            return None
        data = data[key]
    label = f"{path} [{'.'.join(table)}]" if table else str(path)
    return data, label


def find_settings(data_path: str, explicit: str | None = None) -> tuple[Settings, str | None]:
    """The settings that apply to `data_path`, and where they came from (None: built-in defaults)."""
    found: tuple[dict[str, Any], str] | None = None
    if explicit:
        path = Path(explicit)
        if not path.is_file():
            raise ConfigError(f"config file not found: {explicit}")
        found = _read(path, ("tool", "localeval") if path.name == PYPROJECT else ())
        if found is None:
            raise ConfigError(f"{explicit} has no [tool.localeval] table")
    else:
        beside = Path(data_path).resolve().parent / CONFIG_FILE if data_path != "-" else None
        if beside is not None and beside.is_file():
            found = _read(beside, ())
        elif Path(PYPROJECT).is_file():
            found = _read(Path(PYPROJECT), ("tool", "localeval"))
    if found is None:
        return Settings(), None
    data, label = found
    try:
        return Settings.model_validate(data), label
    except ValidationError as exc:
        first = exc.errors()[0]
        key = ".".join(str(p) for p in first["loc"])
        reason = "unknown key" if first["type"] == "extra_forbidden" else first["msg"]
        raise ConfigError(f"{label}: '{key}': {reason}") from None
