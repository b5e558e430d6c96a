"""Aggregating result rows into per-metric figures and threshold verdicts, in constant memory.

Works from `ResultRow`s, so a resumed run can feed the rows an earlier run wrote
and still report on the whole file. Nothing per sample is kept: the mean is a
compensated running sum, and the median comes from a `ScoreDistribution`, which
is exact while a metric has at most MAX_DISTINCT distinct scores (ratios of small
counts, as every localeval metric produces, rarely have more) and otherwise
within half a bin (BIN_WIDTH / 2 = 0.00005) of the exact median.

The mean's 95% interval is localeval.stats.intervals' (the small-sample rule), the gates' verdicts
localeval.stats.gates', the labelled metrics' prediction-powered figures localeval.stats.ppi's; what comes out
is one typed `SummaryFigures` (localeval.stats.figures) that every report reads.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from localeval.data.results import Outcome, ResultRow
from localeval.errors import ConfigError
from localeval.stats.figures import JudgeUsage, LabelsJoin, MetricFigures, SummaryFigures
from localeval.stats.gates import GateOn, MeanGate, ThresholdGate, check_gate_on, mean_gate
from localeval.stats.human_scores import Gold
from localeval.stats.intervals import mean_interval
from localeval.stats.ppi import PredictionPowered, prediction_powered

MAX_DISTINCT = 10_000
BINS = 10_000
BIN_WIDTH = 1.0 / BINS


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
        """The mean's 95% interval (localeval.stats.intervals); None below 2 scores."""
        return mean_interval(self.count, self.mean(), self._squares)

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
    calls: int = 0
    cached: int = 0
    saved_seconds: float = 0.0


def _count_costs(tally: _MetricTally, timing: Mapping[str, Any], usage: Mapping[str, Any]) -> None:
    """A judged row's seconds, cache answers and token counts for one metric, added to its tally."""
    tally.seconds += float(timing.get("seconds", 0.0))
    tally.prompt_evaluated += int(timing.get("prompt_evaluated", 0))
    tally.cached += int(timing.get("cached", 0))
    tally.saved_seconds += float(timing.get("saved_seconds", 0.0))
    tally.calls += int(usage.get("calls", 0))
    tally.prompt_tokens += int(usage.get("prompt_tokens", 0))
    tally.completion_tokens += int(usage.get("completion_tokens", 0))


class Summary:
    """Running per-metric figures; `add` each row, then read `figures()`."""

    def __init__(
        self,
        metric_names: list[str],
        thresholds: Mapping[str, float] | None = None,
        min_mean: Mapping[str, float] | None = None,
        *,
        max_mean: Mapping[str, float] | None = None,
        gate_on: GateOn = "mean",
        gold: Gold | None = None,
    ) -> None:
        """`max_mean`: the most a lower-is-better metric's mean may be. `gate_on`: what a min_mean
        or max_mean gate compares (GATE_MODES; an interval gate reads the prediction-powered
        interval of a metric with labels). `gold`: human scores by sample id
        (localeval.stats.human_scores), each joined to at most one scored sample."""
        thresholds = dict(thresholds or {})
        min_mean = dict(min_mean or {})
        max_mean = dict(max_mean or {})
        for kind, values in (("threshold", thresholds), ("min_mean", min_mean), ("max_mean", max_mean)):
            for name, value in values.items():
                if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0.0 <= value <= 1.0:
                    raise ConfigError(f"{kind} for {name} must be a number in [0, 1], got {value!r}")
        from localeval.metrics import maximum_refused, minimum_refused  # the registry, once a summary is made

        for option, values, refuses in (("--threshold", thresholds, minimum_refused), ("--min-mean", min_mean, minimum_refused), ("--max-mean", max_mean, maximum_refused)):
            refused = next((why for name in values if (why := refuses(name, option)) is not None), None)
            if refused is not None:
                raise ConfigError(refused)
            unscored = sorted(set(values) - set(metric_names))
            if unscored:  # a gate names a metric the user cares about: it never vanishes because the metric is not run
                raise ConfigError(
                    f"{option} {unscored[0]}: a gate for a metric that is not selected: {', '.join(unscored)} (this run scores {', '.join(metric_names) or 'nothing'}); "
                    f"select it (-m {unscored[0]}, or the config's metrics) or drop the gate"
                )
        self.thresholds = thresholds
        self.min_mean = min_mean
        self.max_mean = max_mean
        self.gate_on = check_gate_on(gate_on)
        self.gold = gold
        self._joined: dict[str, int] = {}  # labelled id -> the line of the one sample it joined
        self._ambiguous: set[str] = set()  # labelled ids that more than one sample has: used for none
        self._pairs: dict[str, dict[str, float]] = {}  # labelled id -> metric -> the metric's score (the human's: gold.scores, read at the end)
        self.samples = 0
        self.input_errors = 0
        self._tallies = {name: _MetricTally() for name in metric_names}
        self._gated = [(name, tally, thresholds.get(name)) for name, tally in self._tallies.items()]  # each metric's threshold, looked up once

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
        judged = bool(row.timing or row.usage)  # a row without a judge (the string, ID and rank metrics) has no costs to count
        for name, tally, threshold in self._gated:
            tally.count += 1
            if judged:
                _count_costs(tally, row.timing.get(name) or {}, row.usage.get(name) or {})
            outcome = row.outcome(name, threshold)
            if outcome is Outcome.ERROR:
                tally.errors += 1
                if threshold is not None:
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
            if threshold is not None:
                if outcome is Outcome.PASS:
                    tally.passed += 1
                else:
                    tally.failed += 1

    def distribution(self, name: str) -> ScoreDistribution:
        return self._tallies[name].scores

    @property
    def _labelled_metrics(self) -> set[str]:
        return {metric for scores in self.gold.scores.values() for metric in scores} if self.gold is not None else set()

    def _ppi(self, name: str) -> PredictionPowered:
        """The prediction-powered figures of `name`, pairing each joined sample's score with the
        human score its labels give now: a row left out after its sample joined (from standard input,
        a later sample with the same id may disagree with it) is not used."""
        scores = self._tallies[name].scores
        human = self.gold.scores if self.gold is not None else {}
        pairs = [(by_metric[name], human[key][name]) for key, by_metric in self._pairs.items() if name in by_metric and name in human.get(key, {})]
        return prediction_powered(scores.count, scores.mean(), scores.variance(), pairs)

    def _labels_join(self) -> LabelsJoin | None:
        """How the labels file joined the samples (localeval.stats.figures.LabelsJoin)."""
        if self.gold is None:
            return None
        ambiguous = sorted(self._ambiguous)
        return LabelsJoin(
            file=self.gold.path,
            sha256=self.gold.sha256,
            rows_with_id=self.gold.rows_with_id,
            matched=sum(1 for key in self._joined if key in self.gold.scores and key not in self._ambiguous),
            unmatched=sum(1 for key in self.gold.scores if key not in self._joined),
            ambiguous=len(ambiguous),
            ambiguous_ids=tuple(ambiguous[:20]),
            left_out=tuple(self.gold.left_out),
            unused_metrics=tuple(sorted(self._labelled_metrics - set(self._tallies))),
        )

    def _metric(self, name: str, tally: _MetricTally, labelled: set[str]) -> MetricFigures:
        scores = tally.scores
        ppi = self._ppi(name) if name in labelled else None
        interval = scores.interval()
        threshold = ThresholdGate(self.thresholds[name], tally.passed, tally.failed) if name in self.thresholds else None
        gate: MeanGate | None = None
        if name in self.min_mean or name in self.max_mean:  # never both: a metric takes the one its direction allows
            at_most = name in self.max_mean
            gate = mean_gate(
                self.gate_on, (self.max_mean if at_most else self.min_mean)[name], at_most=at_most,
                count=tally.count, errors=tally.errors, scored=scores.count, mean=scores.mean(), interval=interval, ppi=ppi,
            )
        usage = None
        if tally.prompt_tokens or tally.completion_tokens:
            usage = JudgeUsage(
                tally.prompt_tokens, tally.completion_tokens, tally.prompt_evaluated, round(tally.seconds, 3),
                cached_answers=tally.cached, judge_answers=max(0, tally.calls - tally.cached), saved_seconds=round(tally.saved_seconds, 3),
            )
        return MetricFigures(
            count=tally.count,
            scored=scores.count,
            mean=scores.mean(),
            stderr=scores.standard_error(),
            ci95=interval,
            median=scores.median(),
            nan=tally.nan,
            errors=tally.errors,
            median_within=None if scores.exact else BIN_WIDTH / 2,
            usage=usage,
            threshold=threshold,
            ppi=ppi,
            gate=gate,
        )

    def figures(self) -> SummaryFigures:
        """The figures so far. Every gate must hold for `thresholds_met`; `nothing_scored`: no
        metric has a single score (an empty file, or every line unreadable or undefined)."""
        labelled = self._labelled_metrics
        metrics = {name: self._metric(name, tally, labelled) for name, tally in self._tallies.items()}
        holds = all(m.threshold.holds for m in metrics.values() if m.threshold is not None) and all(m.gate.ok for m in metrics.values() if m.gate is not None)
        return SummaryFigures(
            samples=self.samples,
            input_errors=self.input_errors,
            labels=self._labels_join(),
            thresholds_met=holds,
            nothing_scored=all(m.scored == 0 for m in metrics.values()),
            metrics=metrics,
        )
