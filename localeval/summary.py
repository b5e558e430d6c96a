"""Aggregating result rows into per-metric figures and threshold verdicts, in constant memory.

Works from `ResultRow`s, so a resumed run can feed the rows an earlier run wrote
and still report on the whole file. Nothing per sample is kept: the mean is a
compensated running sum, and the median comes from a `ScoreDistribution`, which
is exact while a metric has at most MAX_DISTINCT distinct scores (ratios of small
counts, as every localeval metric produces, rarely have more) and otherwise
within half a bin (BIN_WIDTH / 2 = 0.00005) of the exact median.

The mean's 95% interval follows the small-sample rule of the prediction-powered interval's
labelled part (localeval.ppi): its variance is computed as if one more sample disagreed with
the others by the whole [0, 1] range, and it uses Student's t with n - 1 degrees of freedom. Two
samples of 1.0 have no spread, and a plain mean +- 1.96 standard errors would call 1.0 certain;
with the rule, fewer than FEWEST_TO_SETTLE scored samples always give the whole 0-1, so no interval
gate is settled by a handful of samples, and the extra fades as 1 / n.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from localeval.errors import ConfigError
from localeval.gold import Gold
from localeval.ppi import MIN_LABELS, prediction_powered, t_quantile_975
from localeval.results import Outcome, ResultRow

MAX_DISTINCT = 10_000
BINS = 10_000
BIN_WIDTH = 1.0 / BINS
# Student's t 0.975 quantiles where ppi's expansion is not yet within 2e-5 of them (below 9 degrees of freedom)
_T975_FEW = {1: 12.706205, 2: 4.302653, 3: 3.182446, 4: 2.776445, 5: 2.570582, 6: 2.446912, 7: 2.364624, 8: 2.306004}


def t975(freedom: int) -> float:
    """Student's t two-sided 95% quantile with `freedom` degrees of freedom (>= 1)."""
    return _T975_FEW.get(freedom) or t_quantile_975(freedom)


def _narrowest_half_width(count: int) -> float:
    """The half-width of the 95% interval of `count` scores that all agree: the rule's extra
    sample alone ((n / (n + 1)) / n / n of variance), times t."""
    return t975(count - 1) * math.sqrt(1.0 / ((count + 1) * count))


# Below this many scored samples the interval is always the whole [0, 1] (its narrowest half-width
# reaches 1): an interval gate cannot be settled.
FEWEST_TO_SETTLE = next(n for n in range(2, 100) if _narrowest_half_width(n) < 1.0)
SMALL_SAMPLE_RULE = (
    "the 95% interval counts one more sample disagreeing by the whole 0-1 range and uses Student's t, "
    f"so below {FEWEST_TO_SETTLE} scored samples it spans 0-1 and settles no interval gate"
)
# What --min-mean compares. "mean": the mean. The two interval gates read the 95% interval (the
# prediction-powered one for a labelled metric): "fail-if-confidently-below" fails only when the
# whole interval is below the minimum (its UPPER bound), giving a small sample the benefit of the
# doubt; "pass-if-confidently-above" passes only when the whole interval reaches it (its LOWER bound).
GateOn = Literal["mean", "fail-if-confidently-below", "pass-if-confidently-above"]
GATE_MODES: tuple[GateOn, ...] = ("mean", "fail-if-confidently-below", "pass-if-confidently-above")
RETIRED_GATE_MODES = {
    "lower": (
        "'lower' is no longer accepted: it was documented as failing only when the pipeline is worse with confidence, "
        "but compared the interval's lower bound. Use 'fail-if-confidently-below' (fail only when the interval's upper bound "
        "is below the minimum) or 'pass-if-confidently-above' (pass only when its lower bound reaches the minimum, what 'lower' did)"
    ),
}


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

    def variance(self) -> float | None:
        """The scores' sample variance (n - 1 in the denominator); None below 2 scores."""
        return max(self._squares, 0.0) / (self.count - 1) if self.count >= 2 else None

    def standard_error(self) -> float | None:
        """The mean's standard error (sample standard deviation / sqrt(n)); None below 2 scores."""
        if self.count < 2:
            return None
        return math.sqrt(max(self._squares, 0.0) / (self.count - 1) / self.count)

    def interval(self) -> tuple[float, float] | None:
        """An approximate 95% interval for the mean of the population these samples come from
        (within [0, 1]): how far the mean of another sample of the same pipeline may fall. The
        small-sample rule (module docstring): the variance as if one more score disagreed by the
        whole range, ((n - 1) var + n / (n + 1)) / n, and Student's t with n - 1 degrees of
        freedom. None below 2 scores."""
        mean, n = self.mean(), self.count
        if mean is None or n < 2:
            return None
        half = t975(n - 1) * math.sqrt((max(self._squares, 0.0) + n / (n + 1)) / n / n)
        return max(0.0, mean - half), min(1.0, mean + half)

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


def check_gate_on(value: object) -> GateOn:
    """`value` as a gate mode, or a ConfigError that names the modes (and, for a retired name, why)."""
    if isinstance(value, str) and value in RETIRED_GATE_MODES:
        raise ConfigError(f"threshold_on {RETIRED_GATE_MODES[value]}")
    for mode in GATE_MODES:
        if value == mode:
            return mode
    raise ConfigError(f"threshold_on must be one of {', '.join(GATE_MODES)}; got {value!r}")


# What each gate mode reads, by where the interval comes from: the summary's (and JUnit's) names.
_FIGURES = {
    ("fail-if-confidently-below", False): "ci95_high",
    ("fail-if-confidently-below", True): "ppi_ci95_high",
    ("pass-if-confidently-above", False): "ci95_low",
    ("pass-if-confidently-above", True): "ppi_ci95_low",
}


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


@dataclass
class _Gate:
    """What a min_mean gate read: the number (None when there is none), its name in the summary
    (`mean`, `ci95_low`, `ppi_ci95_high`...), whether it holds, and why not when the number alone
    does not say (no interval, too few labels, unscored samples)."""

    value: float | None
    figure: str
    ok: bool
    reason: str | None


class Summary:
    """Running per-metric figures; `add` each row, then `to_dict`."""

    def __init__(
        self,
        metric_names: list[str],
        thresholds: Mapping[str, float] | None = None,
        min_mean: Mapping[str, float] | None = None,
        *,
        gate_on: GateOn = "mean",
        gold: Gold | None = None,
    ) -> None:
        """`gate_on`: what a min_mean gate compares (GATE_MODES; an interval gate reads the
        prediction-powered interval of a metric with labels). `gold`: human scores by sample id
        (localeval.gold), each joined to at most one scored sample."""
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
        self.gate_on = check_gate_on(gate_on)
        self.gold = gold
        self._joined: dict[str, int] = {}  # labelled id -> the line of the one sample it joined
        self._ambiguous: set[str] = set()  # labelled ids that more than one sample has: used for none
        self._pairs: dict[str, dict[str, float]] = {}  # labelled id -> metric -> the metric's score (the human's: gold.scores, read at the end)
        self.samples = 0
        self.input_errors = 0
        self._tallies = {name: _MetricTally() for name in metric_names}

    def _join(self, row: ResultRow) -> dict[str, float] | None:
        """The human scores for this row, if exactly one sample has its id. A second sample with
        the same id (two samples with id 3, or one with id "3" and the id-less sample on line 3,
        whose id is its line) makes the label ambiguous: it is then used for neither."""
        if self.gold is None:
            return None
        key = str(row.id)
        human = self.gold.scores.get(key)
        if human is None or key in self._ambiguous:
            return None
        first = self._joined.setdefault(key, row.line)
        if first != row.line:
            self._ambiguous.add(key)
            self._pairs.pop(key, None)
            return None
        return human

    def add(self, row: ResultRow) -> None:
        self.samples += 1
        if row.unreadable:
            self.input_errors += 1
            return
        human = self._join(row)
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
            if human is not None:
                self._pairs.setdefault(str(row.id), {})[name] = value
            if name in self.thresholds:
                if outcome is Outcome.PASS:
                    tally.passed += 1
                else:
                    tally.failed += 1

    def distribution(self, name: str) -> ScoreDistribution:
        return self._tallies[name].scores

    @property
    def _labelled_metrics(self) -> set[str]:
        return {metric for scores in self.gold.scores.values() for metric in scores} if self.gold is not None else set()

    def _ppi(self, name: str) -> dict[str, Any]:
        """The prediction-powered figures of `name`, pairing each joined sample's score with the
        human score its labels give now: a row left out after its sample joined (from standard input,
        a later sample with the same id may disagree with it) is not used."""
        scores = self._tallies[name].scores
        human = self.gold.scores if self.gold is not None else {}
        pairs = [(by_metric[name], human[key][name]) for key, by_metric in self._pairs.items() if name in by_metric and name in human.get(key, {})]
        return prediction_powered(scores.count, scores.mean(), scores.variance(), pairs)

    def _gate(self, name: str) -> _Gate:
        """What the min_mean gate of `name` compares, and its verdict. An unscored sample fails the
        gate, as it fails a per-sample threshold: a mean over the few samples that could be scored
        says nothing about the others."""
        tally, minimum = self._tallies[name], self.min_mean[name]
        labelled = name in self._labelled_metrics
        reason = None
        if self.gate_on == "mean":
            value, figure = tally.scores.mean(), "mean"
        else:
            figure = _FIGURES[(self.gate_on, labelled)]
            side = 0 if figure.endswith("low") else 1
            if labelled:
                ppi = self._ppi(name)
                value = ppi["ci95"][side] if ppi["ci95"] else None
                if value is None:
                    reason = f"{ppi['labelled']} labelled sample(s): a prediction-powered interval needs at least {MIN_LABELS} (label more, or leave --labels out to gate on the plain interval)"
            else:
                bounds = tally.scores.interval()
                value = bounds[side] if bounds else None
                if value is None:
                    reason = f"no 95% interval from {tally.scores.count} scored sample(s): an interval needs 2"
                elif tally.scores.count < FEWEST_TO_SETTLE:
                    reason = f"{tally.scores.count} scored samples settle nothing: {SMALL_SAMPLE_RULE}"
        if value is None and reason is None:
            reason = "nothing was scored"
        if tally.errors:
            reason = f"{tally.errors} of {tally.count} samples could not be scored, and an unscored sample fails a gate"
        return _Gate(value, figure, value is not None and value >= minimum and not tally.errors, reason)

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
        return samples_ok and all(self._gate(name).ok for name in self.min_mean)

    def _labels_dict(self) -> dict[str, Any] | None:
        """How the labels file joined the samples: ids joined to one sample, ids no sample has,
        ids two samples have (used for neither), the rows left out of it by line, and the metrics
        it labels that this run does not score (their labels are not used)."""
        if self.gold is None:
            return None
        ambiguous = sorted(self._ambiguous)
        return {
            "file": self.gold.path,
            "sha256": self.gold.sha256,
            "rows_with_id": self.gold.rows_with_id,
            "matched": sum(1 for key in self._joined if key in self.gold.scores and key not in self._ambiguous),
            "unmatched": sum(1 for key in self.gold.scores if key not in self._joined),
            "ambiguous": len(ambiguous),
            "ambiguous_ids": ambiguous[:20],
            "left_out": list(self.gold.left_out),
            "unused_metrics": sorted(self._labelled_metrics - set(self._tallies)),
        }

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
                entry["ppi"] = self._ppi(name)
            if name in self.min_mean:
                gate = self._gate(name)
                entry["min_mean"] = self.min_mean[name]
                entry["min_mean_on"] = self.gate_on
                entry["gated_figure"] = gate.figure
                entry["gated_value"] = gate.value
                entry["mean_ok"] = gate.ok
                if gate.reason is not None:
                    entry["gate_reason"] = gate.reason
            metrics[name] = entry
        labels = self._labels_dict()
        return {
            "samples": self.samples,
            "input_errors": self.input_errors,
            **({"labels": labels} if labels is not None else {}),
            "thresholds_met": self.thresholds_met,
            "nothing_scored": self.nothing_scored,
            "metrics": metrics,
        }
