"""What a run needs to be reproduced, and what a resume must share with the run it continues.

The provenance goes into the results file's header line and the summary: the
input's SHA-256, the metrics and their options, the field map, the judge's
weights and settings, the config file used, and the package versions.
"""

from __future__ import annotations

import platform
from collections.abc import Sequence
from importlib import metadata
from typing import Any

from localeval.judge.spec import SPEED_KEY
from localeval.metrics import Metric, plugin_package
from localeval.run.settings import RunSettings

PACKAGES = ("localeval", "rapidfuzz", "pysbd", "pydantic", "numpy", "llama_cpp_python")


def _version(package: str) -> str | None:
    try:
        return metadata.version(package)
    except metadata.PackageNotFoundError:
        return None


def describe_run(settings: RunSettings, metrics: Sequence[Metric[Any]], judge: dict[str, Any] | None, input_sha256: str | None) -> dict[str, Any]:
    """`judge` is the judge's own description (`Judge.describe()`), or None. A metric from
    another package adds its class, package and version under "plugins" (a run of the built-ins
    has no such key)."""
    plugins = {m.name: found for m in metrics if (found := plugin_package(type(m))) is not None}
    return {
        "localeval": _version("localeval"),
        "input": _input(settings, input_sha256),
        "metrics": {m.name: m.describe_params() for m in metrics},
        **({"plugins": plugins} if plugins else {}),
        "map": dict(settings.map),
        "judge": judge,
        "execution": {"ray": settings.ray} if settings.ray is not None else {"ray": None},
        "config": settings.config_source,
        "python": platform.python_version(),
        "packages": {p: v for p in PACKAGES if (v := _version(p))},
    }


def _input(settings: RunSettings, sha256: str | None) -> dict[str, Any]:
    """The input file and its SHA-256; for samples read from a run and qrels file, the run's path
    (not the temporary file's: a rerun writes the same header), the samples' SHA-256 (what a
    resume compares) and the files they were read from, each with its own SHA-256."""
    if settings.read_from is None:
        return {"path": settings.input, "sha256": sha256}
    return {"path": settings.read_from["run"]["path"], "sha256": sha256, "read_from": settings.read_from}


def _identity(run: dict[str, Any]) -> dict[str, Any]:
    """The parts of a provenance that decide the scores: all but the judge's speed settings (a
    plugin's package and version included: another version may score otherwise)."""
    judge = run.get("judge")
    return {
        "input": (run.get("input") or {}).get("sha256"),
        "metrics": run.get("metrics"),
        "map": run.get("map"),
        "judge": {k: v for k, v in judge.items() if k != SPEED_KEY} if isinstance(judge, dict) else judge,
        "localeval": run.get("localeval"),
        "plugins": run.get("plugins") or {},
    }


def resume_differences(previous: dict[str, Any], current: dict[str, Any], *, judge: bool = True) -> list[str]:
    """What differs between the run that wrote a results file and this one, in words: each
    differing setting by its dotted key, with both values (a long value is cut in the middle of
    neither side's difference, since only the differing leaf is shown). `judge=False` leaves the
    judge out: what can be compared before it is loaded."""
    before, now = _identity(previous), _identity(current)
    if not judge:
        before.pop("judge")
        now.pop("judge")
    return [f"{key}: {_short(old)} then, {_short(new)} now" for key, old, new in _leaf_differences(before, now, "")]


def _leaf_differences(before: Any, now: Any, prefix: str) -> list[tuple[str, Any, Any]]:
    if isinstance(before, dict) and isinstance(now, dict):
        found = []
        for key in [*now, *(k for k in before if k not in now)]:
            if before.get(key, _ABSENT) != now.get(key, _ABSENT):
                found += _leaf_differences(before.get(key, _ABSENT), now.get(key, _ABSENT), f"{prefix}{key}.")
        return found
    return [(prefix.rstrip("."), before, now)] if before != now else []


class _Absent:
    def __repr__(self) -> str:
        return "(not set)"


_ABSENT = _Absent()


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 120 else text[:117] + "..."
