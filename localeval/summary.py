"""Aggregating result rows into per-metric figures and threshold verdicts, in constant memory.

Works from `ResultRow`s, so a resumed run can feed the rows an earlier run wrote
and still report on the whole file. Nothing per sample is kept: the mean is a
compensated running sum, and the median comes from a `ScoreDistribution`, which
is exact while a metric has at most MAX_DISTINCT distinct scores (ratios of small
counts, as every localeval metric produces, rarely have more) and otherwise
within half a bin (BIN_WIDTH / 2 = 0.00005) of the exact median.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from localeval.errors import ConfigError
from localeval.results import Outcome, ResultRow

MAX_DISTINCT = 10_000
BINS = 10_000
BIN_WIDTH = 1.0 / BINS
Z95 = 1.959964  # the normal distribution's two-sided 95% quantile
GateOn = Literal["mean", "lower"]  # what --min-mean compares: the mean, or its 95% interval's lower bound


class ScoreDistribution:
    """The scores of one metric (all in [0, 1]): counts of each distinct value, or of
    fine bins once there are too many distinct values to keep."""

    def __init__(self) -> None:
        self.count = 0
        self._exact: Counter[float] | None = Counter()
        self._bins: list[int] | None = None
        self._sum = 0.0
        self._compensation = 0.0  # Neumaier: the low-order bits the running sum lost
        self._running_mean = 0.0  # Welford: mean and sum of squared deviations, for the spread
        self._squares = 0.0

    def add(self, value: float) -> None:
        self.count += 1
        delta = value - self._running_mean
        self._running_mean += delta / self.count
        self._squares += delta * (value - self._running_mean)
        total = self._sum + value
        if abs(self._sum) >= abs(value):
            self._compensation += (self._sum - total) + value
        else:
            self._compensation += (value - total) + self._sum
        self._sum = total
        if self._exact is not None:
            self._exact[value] += 1
            if len(self._exact) > MAX_DISTINCT:
                self._to_bins()
        else:
            assert self._bins is not None
            self._bins[self._bin(value)] += 1

    @staticmethod
    def _bin(value: float) -> int:
        return min(BINS - 1, max(0, int(value * BINS)))

    def _to_bins(self) -> None:
        assert self._exact is not None
        self._bins = [0] * BINS
        for value, count in self._exact.items():
            self._bins[self._bin(value)] += count
        self._exact = None

    @property
    def exact(self) -> bool:
        return self._exact is not None

    def mean(self) -> float | None:
        return (self._sum + self._compensation) / self.count if self.count else None

    def standard_error(self) -> float | None:
        """The mean's standard error (sample standard deviation / sqrt(n)); None below 2 scores."""
        if self.count < 2:
            return None
        return math.sqrt(max(self._squares, 0.0) / (self.count - 1) / self.count)

    def interval(self) -> tuple[float, float] | None:
        """An approximate 95% interval for the mean of the population these samples come from
        (mean +- 1.96 standard errors, within [0, 1]): how far the mean of another sample of the
        same pipeline may fall. None below 2 scores."""
        mean, error = self.mean(), self.standard_error()
        if mean is None or error is None:
            return None
        return max(0.0, mean - Z95 * error), min(1.0, mean + Z95 * error)

    def _value_at(self, rank: int) -> float:
        """The value of 0-based rank `rank` in sorted order (a bin's midpoint once binned)."""
        seen = 0
        if self._exact is not None:
            for value in sorted(self._exact):
                seen += self._exact[value]
                if seen > rank:
                    return value
        else:
            assert self._bins is not None
            for index, count in enumerate(self._bins):
                seen += count
                if seen > rank:
                    return (index + 0.5) * BIN_WIDTH
        raise IndexError(rank)

    def median(self) -> float | None:
        if not self.count:
            return None
        middle = self.count // 2
        if self.count % 2:
            return self._value_at(middle)
        return (self._value_at(middle - 1) + self._value_at(middle)) / 2

    def histogram(self, bins: int) -> list[int]:
        """Counts in `bins` equal bins over [0, 1]; the last bin includes 1.0."""
        counts = [0] * bins
        if self._exact is not None:
            items = list(self._exact.items())
        else:
            assert self._bins is not None
            items = [((index + 0.5) * BIN_WIDTH, count) for index, count in enumerate(self._bins) if count]
        for value, count in items:
            counts[min(bins - 1, max(0, int(value * bins)))] += count
        return counts


def prediction_powered(scores: ScoreDistribution, pairs: list[tuple[float, float]]) -> dict[str, Any]:
    """ARES's prediction-powered estimate of the mean (Angelopoulos et al. 2023): the metric's
    mean over every scored sample, corrected by the mean residual (human - metric) on the
    labelled ones; its variance adds the two parts' (var(metric)/N + var(residual)/n), and
    the 95% interval is the normal one, within [0, 1]. Needs 2 labelled samples."""
    mean, count = scores.mean(), len(pairs)
    figures: dict[str, Any] = {"labelled": count, "human_mean": sum(g for _, g in pairs) / count if count else None, "mean": None, "stderr": None, "ci95": None}
    if mean is None or count < 2:
        return figures
    residuals = [g - p for p, g in pairs]
    shift = sum(residuals) / count
    spread = sum((r - shift) ** 2 for r in residuals) / (count - 1)
    error = math.sqrt((scores.standard_error() or 0.0) ** 2 + spread / count)
    estimate = min(1.0, max(0.0, mean + shift))
    figures.update(mean=estimate, stderr=error, ci95=[max(0.0, mean + shift - Z95 * error), min(1.0, mean + shift + Z95 * error)])
    return figures


@dataclass
class _MetricTally:
    scores: ScoreDistribution = field(default_factory=ScoreDistribution)
    count: int = 0
    nan: int = 0
    errors: int = 0
    passed: int = 0
    failed: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    prompt_evaluated: int = 0
    seconds: float = 0.0
    labelled: list[tuple[float, float]] = field(default_factory=list)  # (metric's score, human's) where both exist


class Summary:
    """Running per-metric figures; `add` each row, then `to_dict`."""

    def __init__(
        self,
        metric_names: list[str],
        thresholds: Mapping[str, float] | None = None,
        min_mean: Mapping[str, float] | None = None,
        *,
        gate_on: GateOn = "mean",
        gold: Mapping[str, Mapping[str, float]] | None = None,
    ) -> None:
        """`gate_on`: what a min_mean gate compares ("lower": the lower bound of the 95% interval,
        the prediction-powered one where there are labels, so a gate fails only when the pipeline
        is worse with confidence). `gold`: human scores by sample id (localeval.gold)."""
        thresholds = dict(thresholds or {})
        min_mean = dict(min_mean or {})
        for kind, values in (("threshold", thresholds), ("min_mean", min_mean)):
            for name, value in values.items():
                if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0.0 <= value <= 1.0:
                    raise ConfigError(f"{kind} for {name} must be a number in [0, 1], got {value!r}")
        unknown = sorted((set(thresholds) | set(min_mean)) - set(metric_names))
        if unknown:
            raise ConfigError(f"threshold for a metric that is not selected: {', '.join(unknown)}")
        self.thresholds = thresholds
        self.min_mean = min_mean
        if gate_on not in ("mean", "lower"):
            raise ConfigError(f"threshold_on must be 'mean' or 'lower', got {gate_on!r}")
        self.gate_on = gate_on
        self.gold = dict(gold) if gold is not None else None
        self._labelled_metrics = {metric for scores in self.gold.values() for metric in scores} if self.gold is not None else set()
        self._matched: set[str] = set()
        self.samples = 0
        self.input_errors = 0
        self._tallies = {name: _MetricTally() for name in metric_names}

    def add(self, row: ResultRow) -> None:
        self.samples += 1
        if row.unreadable:
            self.input_errors += 1
            return
        for name, tally in self._tallies.items():
            tally.count += 1
            timing = row.timing.get(name) or {}
            tally.seconds += float(timing.get("seconds", 0.0))
            tally.prompt_evaluated += int(timing.get("prompt_evaluated", 0))
            usage = row.usage.get(name) or {}
            tally.prompt_tokens += int(usage.get("prompt_tokens", 0))
            tally.completion_tokens += int(usage.get("completion_tokens", 0))
            outcome = row.outcome(name, self.thresholds.get(name))
            if outcome is Outcome.ERROR:
                tally.errors += 1
                if name in self.thresholds:
                    tally.failed += 1  # a gate must not pass on samples it could not score
                continue
            if outcome is Outcome.NAN:
                tally.nan += 1
                continue
            value = row.scores[name]
            assert value is not None  # PASS or FAIL: a number
            tally.scores.add(value)
            human = self.gold.get(str(row.id), {}).get(name) if self.gold else None
            if human is not None:
                tally.labelled.append((value, human))
                self._matched.add(str(row.id))
            if name in self.thresholds:
                if outcome is Outcome.PASS:
                    tally.passed += 1
                else:
                    tally.failed += 1

    def distribution(self, name: str) -> ScoreDistribution:
        return self._tallies[name].scores

    def _gated_value(self, name: str) -> float | None:
        """What the min_mean gate compares: the mean, or the lower bound of its 95% interval
        (the prediction-powered one when the metric has labelled samples)."""
        tally = self._tallies[name]
        if self.gate_on == "mean":
            return tally.scores.mean()
        bounds = prediction_powered(tally.scores, tally.labelled)["ci95"] if tally.labelled else tally.scores.interval()
        return bounds[0] if bounds else None

    def _mean_ok(self, name: str) -> bool:
        value = self._gated_value(name)
        return value is not None and value >= self.min_mean[name]

    @property
    def nothing_scored(self) -> bool:
        """No metric has a single score: an empty file, or every line unreadable or undefined."""
        return all(tally.scores.count == 0 for tally in self._tallies.values())

    @property
    def errors(self) -> int:
        """Metric scores that could not be computed, over every metric (not unreadable lines)."""
        return sum(tally.errors for tally in self._tallies.values())

    @property
    def thresholds_met(self) -> bool:
        """Every gate holds. A gate with no sample it could judge does not hold: an empty
        file must not pass a CI step."""
        samples_ok = all(self._tallies[n].failed == 0 and self._tallies[n].passed > 0 for n in self.thresholds)
        return samples_ok and all(self._mean_ok(name) for name in self.min_mean)

    def to_dict(self) -> dict[str, Any]:
        metrics: dict[str, Any] = {}
        for name, tally in self._tallies.items():
            entry: dict[str, Any] = {
                "count": tally.count,
                "scored": tally.scores.count,
                "mean": tally.scores.mean(),
                "stderr": tally.scores.standard_error(),
                "ci95": list(interval) if (interval := tally.scores.interval()) else None,
                "median": tally.scores.median(),
                "nan": tally.nan,
                "errors": tally.errors,
            }
            if not tally.scores.exact:
                entry["median_within"] = BIN_WIDTH / 2
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
            if name in self._labelled_metrics:
                entry["ppi"] = prediction_powered(tally.scores, tally.labelled)
            if name in self.min_mean:
                entry["min_mean"] = self.min_mean[name]
                entry["min_mean_on"] = self.gate_on
                entry["gated_value"] = self._gated_value(name)
                entry["mean_ok"] = self._mean_ok(name)
            metrics[name] = entry
        labels = {"matched": len(self._matched), "unmatched": len(self.gold) - len(self._matched)} if self.gold is not None else None
        return {
            "samples": self.samples,
            "input_errors": self.input_errors,
            **({"labels": labels} if labels else {}),
            "thresholds_met": self.thresholds_met,
            "nothing_scored": self.nothing_scored,
            "metrics": metrics,
        }
