"""Aggregating per-sample results into per-metric figures and threshold verdicts.

Works from the results-file form of a result (a dict), so that a resumed run can
feed the lines an earlier run wrote and still report on the whole file. Only
floats are kept per metric (for the median), never the samples.
"""

from __future__ import annotations

import math
import statistics
from array import array
from dataclasses import dataclass, field
from typing import Any, Mapping

from localeval.errors import ConfigError
from localeval.runner import INPUT_ERROR_KEY


@dataclass
class _MetricTally:
    values: array = field(default_factory=lambda: array("d"))
    count: int = 0
    nan: int = 0
    errors: int = 0
    passed: int = 0
    failed: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    prompt_evaluated: int = 0
    seconds: float = 0.0


class Summary:
    """Running per-metric figures; `add` each result, then `to_dict`."""

    def __init__(
        self,
        metric_names: list[str],
        thresholds: Mapping[str, float] | None = None,
        min_mean: Mapping[str, float] | None = None,
    ) -> None:
        thresholds = dict(thresholds or {})
        min_mean = dict(min_mean or {})
        unknown = sorted((set(thresholds) | set(min_mean)) - set(metric_names))
        if unknown:
            raise ConfigError(f"threshold for a metric that is not selected: {', '.join(unknown)}")
        self.thresholds = thresholds
        self.min_mean = min_mean
        self.samples = 0
        self.input_errors = 0
        self._tallies = {name: _MetricTally() for name in metric_names}

    def add(self, result: Mapping[str, Any]) -> None:
        self.samples += 1
        errors = result.get("errors") or {}
        if INPUT_ERROR_KEY in errors:
            self.input_errors += 1
            return
        scores = result.get("scores") or {}
        usage = result.get("usage") or {}
        timing = result.get("timing") or {}
        for name, tally in self._tallies.items():
            tally.count += 1
            spent_time = timing.get(name) or {}
            tally.seconds += float(spent_time.get("seconds", 0.0))
            tally.prompt_evaluated += int(spent_time.get("prompt_evaluated", 0))
            spent = usage.get(name) or {}
            tally.prompt_tokens += int(spent.get("prompt_tokens", 0))
            tally.completion_tokens += int(spent.get("completion_tokens", 0))
            if name in errors:
                tally.errors += 1
                if name in self.thresholds:
                    tally.failed += 1  # a gate must not pass on samples it could not score
                continue
            value = scores.get(name)
            if value is None or math.isnan(value):
                tally.nan += 1
                continue
            tally.values.append(value)
            if name in self.thresholds:
                if value >= self.thresholds[name]:
                    tally.passed += 1
                else:
                    tally.failed += 1

    def _mean(self, name: str) -> float | None:
        values = self._tallies[name].values
        return math.fsum(values) / len(values) if values else None

    def _mean_ok(self, name: str) -> bool:
        mean = self._mean(name)
        return mean is not None and mean >= self.min_mean[name]

    @property
    def thresholds_met(self) -> bool:
        samples_ok = all(self._tallies[name].failed == 0 for name in self.thresholds)
        return samples_ok and all(self._mean_ok(name) for name in self.min_mean)

    def to_dict(self) -> dict[str, Any]:
        metrics: dict[str, Any] = {}
        for name, tally in self._tallies.items():
            values = tally.values
            entry: dict[str, Any] = {
                "count": tally.count,
                "scored": len(values),
                "mean": self._mean(name),
                "median": statistics.median(values) if values else None,
                "nan": tally.nan,
                "errors": tally.errors,
            }
            if tally.prompt_tokens or tally.completion_tokens:
                entry["prompt_tokens"] = tally.prompt_tokens
                entry["completion_tokens"] = tally.completion_tokens
                entry["prompt_evaluated"] = tally.prompt_evaluated
                entry["judge_seconds"] = round(tally.seconds, 3)
            if name in self.thresholds:
                judged = tally.passed + tally.failed
                entry["threshold"] = self.thresholds[name]
                entry["passed"] = tally.passed
                entry["failed"] = tally.failed
                entry["pass_rate"] = tally.passed / judged if judged else None
            if name in self.min_mean:
                entry["min_mean"] = self.min_mean[name]
                entry["mean_ok"] = self._mean_ok(name)
            metrics[name] = entry
        return {
            "samples": self.samples,
            "input_errors": self.input_errors,
            "thresholds_met": self.thresholds_met,
            "metrics": metrics,
        }
