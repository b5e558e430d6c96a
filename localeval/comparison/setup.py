"""What differs between two runs' headers, and which compared metrics each difference changes.

A difference is judged per metric, by what that metric depends on: another judge (its weights,
context size, seed, calibration) changes the metrics that asked the judge in either run, and no
other (id_context_recall asks none); a metric's own options or another version of its package
change that metric alone; the field map changes every metric (it decides what each one reads).
A gate over a metric a difference changes is refused unless the user says the setup change is
what they compare. The same file content at two paths (a rubric, a model: their SHA-256 equal)
is no difference in meaning, only where it lies. Another input file is the normal case (the
candidate pipeline retrieved other contexts): it is no setup difference and is told apart.
A localeval version or package versions are information: listed, not refused.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

# The header keys whose differences change what a metric's score means: per metric ("metrics",
# "plugins": the entry under the metric's name), the judge (the metrics that asked it), the field
# map (every metric). The input is apart (INPUT_KEY); every other key is information.
PER_METRIC_KEYS = ("metrics", "plugins")
JUDGE_KEY = "judge"
EVERY_METRIC_KEYS = ("map",)
INPUT_KEY = "input"
SPEED_KEY = "speed"  # the judge's speed settings (threads, batch sizes): how fast, not what
# Where a file is, beside its SHA-256: no difference in meaning when the SHA-256 is the same.
WHERE_KEYS = ("path", "file", "model")
MAX_VALUE_CHARS = 120


@dataclass(frozen=True)
class SetupDifference:
    """One header value that differs: its dotted key, both values as the headers hold them (JSON
    values; None where a run does not set it), and the compared metrics whose scores it changes
    (none: information)."""

    key: str
    base: Any
    candidate: Any
    affects: tuple[str, ...] = ()

    @property
    def changes_scores(self) -> bool:
        return bool(self.affects)

    def describe(self) -> str:
        said = f"{self.key}: {_short(self.base)} in the base, {_short(self.candidate)} in the candidate"
        return f"{said} (changes {', '.join(self.affects)})" if self.affects else said

    def to_json_dict(self) -> dict[str, Any]:
        return {"field": self.key, "base": self.base, "candidate": self.candidate, "affects": list(self.affects), "changes_scores": self.changes_scores}


@dataclass(frozen=True)
class InputFiles:
    """The input files the two headers record (path and SHA-256 each, None where not recorded):
    another file is what a candidate pipeline's run has, not a setup difference."""

    base: dict[str, Any]
    candidate: dict[str, Any]

    @property
    def same(self) -> bool:
        """Both headers record one input file content (its SHA-256)."""
        sha = self.base.get("sha256")
        return isinstance(sha, str) and self.candidate.get("sha256") == sha

    def sentence(self) -> str:
        """One short line: the same input file, or another (the normal case), by name."""
        if self.same:
            return f"Input: the same file content ({_name(self.base)}) in both runs."
        said = f"Input: {_name(self.base)} in the base, {_name(self.candidate)} in the candidate"
        if self.base.get("sha256") is None or self.candidate.get("sha256") is None:
            return f"{said} (a header records no SHA-256: standard input, or another tool's file)."
        return f"{said} (another file, as a candidate's own run has)."

    def to_json_dict(self) -> dict[str, Any]:
        return {"base": self.base, "candidate": self.candidate, "same": self.same}


def _name(recorded: Mapping[str, Any]) -> str:
    path = recorded.get("path")
    return _short(path) if not isinstance(path, str) else path[:MAX_VALUE_CHARS]


def _short(value: Any) -> str:
    """A header value as JSON, cut to MAX_VALUE_CHARS (no Python repr: 'a.jsonl' reads "a.jsonl")."""
    text = "(not set)" if value is None else json.dumps(value, ensure_ascii=False, default=str)
    return text if len(text) <= MAX_VALUE_CHARS else text[: MAX_VALUE_CHARS - 3] + "..."


def input_files(base: dict[str, Any], candidate: dict[str, Any]) -> InputFiles:
    """The input files the headers `base` and `candidate` (untrusted: any JSON) record."""

    def recorded(run: dict[str, Any]) -> dict[str, Any]:
        found = run.get(INPUT_KEY)
        found = found if isinstance(found, dict) else {}
        return {key: value if isinstance(value := found.get(key), str) else None for key in ("path", "sha256")}

    return InputFiles(recorded(base), recorded(candidate))


def _leaves(base: Any, candidate: Any, path: tuple[str, ...]) -> list[tuple[tuple[str, ...], Any, Any]]:
    """The differing leaves under two header values, by key path; where both are dicts with one
    SHA-256, where the file lies (WHERE_KEYS) is left out: the same content at two paths."""
    if isinstance(base, dict) and isinstance(candidate, dict):
        same_file = isinstance(base.get("sha256"), str) and base.get("sha256") == candidate.get("sha256")
        found = []
        for key in [*base, *(k for k in candidate if k not in base)]:
            if same_file and key in WHERE_KEYS:
                continue
            if key not in base or key not in candidate or base[key] != candidate[key]:
                found += _leaves(base.get(key), candidate.get(key), (*path, str(key)))
        return found
    return [(path, base, candidate)] if base != candidate or type(base) is not type(candidate) else []


def _relevant(run: dict[str, Any], metrics: set[str]) -> dict[str, Any]:
    """The header as compared: no input (told apart), the judge without its speed settings, the
    metrics and plugins of the compared metrics only (a metric one run lacks is not compared)."""
    found = {k: v for k, v in run.items() if k != INPUT_KEY}
    judge = found.get(JUDGE_KEY)
    if isinstance(judge, dict):
        found[JUDGE_KEY] = {k: v for k, v in judge.items() if k != SPEED_KEY}
    for key in PER_METRIC_KEYS:
        if isinstance(found.get(key), dict):
            found[key] = {k: v for k, v in found[key].items() if k in metrics}
    return found


def judged_metrics(run: dict[str, Any], metrics: Iterable[str]) -> set[str]:
    """The metrics of `metrics` that asked the judge in the run whose header is `run` (untrusted),
    read from the options the header records: a metric whose class is not registered here, or
    whose recorded options cannot be read, is counted as judged (a difference in the judge then
    refuses its gate rather than passing it unseen)."""
    from localeval.metrics import REGISTRY  # the registry as it stands: no installed package imported

    recorded = run.get("metrics")
    recorded = recorded if isinstance(recorded, dict) else {}
    found = set()
    for name in metrics:
        cls = REGISTRY.get(name)
        options = recorded.get(name)
        if cls is not None and not cls.needs_judge:
            continue
        if cls is None or not isinstance(options, dict):
            found.add(name)
            continue
        try:  # the recorded options, unvalidated: a rubric's file is not read again, only what decides the grader
            params = cls.Params.model_construct(**{k: v for k, v in options.items() if k in cls.Params.model_fields})
            judged = cls(params).uses_judge()
        except Exception:  # noqa: BLE001 - options from an untrusted header, read by any metric's code
            judged = True
        if judged is not False:
            found.add(name)
    return found


def _affects(path: tuple[str, ...], compared: list[str], judged: set[str]) -> tuple[str, ...]:
    top = path[0] if path else ""
    if top in PER_METRIC_KEYS:
        return (path[1],) if len(path) > 1 and path[1] in compared else tuple(compared) if len(path) == 1 else ()
    if top == JUDGE_KEY:
        return tuple(name for name in compared if name in judged)
    if top in EVERY_METRIC_KEYS:
        return tuple(compared)
    return ()


def setup_differences(base: dict[str, Any], candidate: dict[str, Any], metrics: Iterable[str]) -> list[SetupDifference]:
    """Every differing header value but the input (both headers untrusted: any JSON), each with
    the compared metrics it changes; those that change a score first."""
    compared = list(dict.fromkeys(metrics))
    judged = judged_metrics(base, compared) | judged_metrics(candidate, compared)
    found = [
        SetupDifference(".".join(path), before, after, _affects(path, compared, judged))
        for path, before, after in _leaves(_relevant(base, set(compared)), _relevant(candidate, set(compared)), ())
    ]
    return sorted(found, key=lambda d: not d.changes_scores)
