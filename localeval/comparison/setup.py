"""What differs between two runs' headers, and which differences change what a score means.

Another judge (its weights, context size, seed, calibration), other metric options (the grader,
the statements, a threshold) or another version of a metric from another package score the same
sample differently: a difference measured across such a change is the setup's as much as the
pipeline's, so a gate over it is refused unless the user says the setup change is what they
compare. Another input file is the normal case (the candidate pipeline retrieved other contexts),
and a localeval version or package versions are information: they are listed, not refused.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

# The header keys whose difference changes what a score means (read only for the metrics compared).
MEANING_KEYS = ("judge", "metrics", "plugins")
SPEED_KEY = "speed"  # the judge's speed settings (threads, batch sizes): how fast, not what
MAX_VALUE_CHARS = 120


@dataclass(frozen=True)
class SetupDifference:
    """One header value that differs: its dotted key, both values (shortened), and whether it
    changes what a score means."""

    key: str
    base: str
    candidate: str
    changes_scores: bool

    def describe(self) -> str:
        return f"{self.key}: {self.base} in the base, {self.candidate} in the candidate"

    def to_json_dict(self) -> dict[str, Any]:
        return {"key": self.key, "base": self.base, "candidate": self.candidate, "changes_scores": self.changes_scores}


class _Absent:
    def __repr__(self) -> str:
        return "(not set)"


ABSENT = _Absent()


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= MAX_VALUE_CHARS else text[: MAX_VALUE_CHARS - 3] + "..."


def _leaves(base: Any, candidate: Any, prefix: str) -> list[tuple[str, Any, Any]]:
    if isinstance(base, dict) and isinstance(candidate, dict):
        found = []
        for key in [*base, *(k for k in candidate if k not in base)]:
            if base.get(key, ABSENT) != candidate.get(key, ABSENT):
                found += _leaves(base.get(key, ABSENT), candidate.get(key, ABSENT), f"{prefix}{key}.")
        return found
    return [(prefix.rstrip("."), base, candidate)] if base != candidate else []


def _relevant(run: dict[str, Any], metrics: set[str]) -> dict[str, Any]:
    """The header as compared: the judge without its speed settings, the metrics and plugins of
    the compared metrics only (a metric one run lacks is not compared, its options say nothing)."""
    found = dict(run)
    judge = found.get("judge")
    if isinstance(judge, dict):
        found["judge"] = {k: v for k, v in judge.items() if k != SPEED_KEY}
    for key in ("metrics", "plugins"):
        if isinstance(found.get(key), dict):
            found[key] = {k: v for k, v in found[key].items() if k in metrics}
    return found


def setup_differences(base: dict[str, Any], candidate: dict[str, Any], metrics: Iterable[str]) -> list[SetupDifference]:
    """Every differing header value (both untrusted: any JSON), those that change what a score
    means first."""
    compared = set(metrics)
    found = [
        SetupDifference(key, _short(before), _short(after), key.split(".")[0] in MEANING_KEYS)
        for key, before, after in _leaves(_relevant(base, compared), _relevant(candidate, compared), "")
    ]
    return sorted(found, key=lambda d: not d.changes_scores)


def same_input(base: dict[str, Any], candidate: dict[str, Any]) -> bool:
    """Both headers record one input file content (its SHA-256)."""
    first, second = base.get("input"), candidate.get("input")
    sha = first.get("sha256") if isinstance(first, dict) else None
    return isinstance(sha, str) and isinstance(second, dict) and second.get("sha256") == sha
