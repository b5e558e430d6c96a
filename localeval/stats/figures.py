"""What a summary says, typed: the figures every report and the command line read by attribute.

`localeval.stats.summary` accumulates rows; at the end it hands out one `SummaryFigures`, frozen, so a
writer cannot read a figure by a misspelt key or change what the next writer sees. The JSON that
--summary-json writes (and the Python API's `summary` dict) is `to_json_dict()`, the one place
that knows the file's key names and which keys appear only when they apply.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from localeval.errors import EXIT_OK, EXIT_THRESHOLD_FAILED, EXIT_USAGE
from localeval.stats.gates import MeanGate, ThresholdGate
from localeval.stats.ppi import PredictionPowered


@dataclass(frozen=True)
class JudgeUsage:
    """A judged metric's cost over the run: tokens and the judge's seconds."""

    prompt_tokens: int
    completion_tokens: int
    prompt_evaluated: int
    judge_seconds: float
    # The verdict cache's part (localeval.judge.cache), from the rows' timing: answers read from
    # it, those the judge gave this run, and the judge seconds the cached ones took when first given.
    cached_answers: int = 0
    judge_answers: int = 0
    saved_seconds: float = 0.0

    def to_json_dict(self) -> dict[str, Any]:
        found: dict[str, Any] = {
            "prompt_tokens": self.prompt_tokens, "completion_tokens": self.completion_tokens, "prompt_evaluated": self.prompt_evaluated, "judge_seconds": self.judge_seconds,
        }
        if self.cached_answers:  # a run without the cache reads as it always did
            found.update(cached_answers=self.cached_answers, judge_answers=self.judge_answers, saved_seconds=self.saved_seconds)
        return found


@dataclass(frozen=True)
class MetricFigures:
    """One metric over the run: `count` samples (all but unreadable lines), `scored` of them with
    a number, `nan` undefined, `errors` unscored; the mean with its standard error and 95% interval
    (None below 2 scores), the median (within `median_within` once the scores are binned); and the
    blocks that apply: judge usage, a `-t` gate, prediction-powered figures, a --min-mean or --max-mean gate."""

    count: int
    scored: int
    mean: float | None
    stderr: float | None
    ci95: tuple[float, float] | None
    median: float | None
    nan: int
    errors: int
    median_within: float | None = None
    usage: JudgeUsage | None = None
    threshold: ThresholdGate | None = None
    ppi: PredictionPowered | None = None
    gate: MeanGate | None = None

    @property
    def gated(self) -> bool:
        return self.threshold is not None or self.gate is not None

    def to_json_dict(self) -> dict[str, Any]:
        found: dict[str, Any] = {
            "count": self.count, "scored": self.scored, "mean": self.mean, "stderr": self.stderr, "ci95": list(self.ci95) if self.ci95 else None,
            "median": self.median, "nan": self.nan, "errors": self.errors,
        }
        if self.median_within is not None:
            found["median_within"] = self.median_within
        if self.usage is not None:
            found.update(self.usage.to_json_dict())
        if self.threshold is not None:
            found.update(self.threshold.to_json_dict())
        if self.ppi is not None:
            found["ppi"] = self.ppi.to_json_dict()
        if self.gate is not None:
            found.update(self.gate.to_json_dict())
        return found


@dataclass(frozen=True)
class LabelsJoin:
    """How a labels file joined the samples: ids joined to one sample (`matched`), ids no sample
    has (`unmatched`), ids two samples have (`ambiguous`, used for neither; the first 20 named),
    the rows left out by line, and the metrics it labels that the run does not score."""

    file: str
    sha256: str | None
    rows_with_id: int
    matched: int
    unmatched: int
    ambiguous: int
    ambiguous_ids: tuple[str, ...]
    left_out: tuple[str, ...]
    unused_metrics: tuple[str, ...]

    def to_json_dict(self) -> dict[str, Any]:
        return {name: list(value) if isinstance(value, tuple) else value for name, value in vars(self).items()}


@dataclass(frozen=True)
class SummaryFigures:
    """A run's figures: lines read (`samples`), unreadable ones, the labels' join, whether every
    gate holds, whether nothing at all was scored, and each metric's figures in run order."""

    samples: int
    input_errors: int
    labels: LabelsJoin | None
    thresholds_met: bool
    nothing_scored: bool
    metrics: Mapping[str, MetricFigures]

    @property
    def errors(self) -> int:
        """Metric scores that could not be computed, over every metric (not unreadable lines)."""
        return sum(m.errors for m in self.metrics.values())

    def exit_code(self, fail_on_error: bool) -> int:
        """The exit code these figures call for (errors.py lists them), which every report's verdict repeats:
        2 for an unreadable input line, 1 for a gate not met (or, with `fail_on_error`, a sample unscored), else 0."""
        if self.input_errors:
            return EXIT_USAGE
        if (fail_on_error and self.errors) or not self.thresholds_met:
            return EXIT_THRESHOLD_FAILED
        return EXIT_OK

    def to_json_dict(self) -> dict[str, Any]:
        """The summary as --summary-json writes it (less the run's provenance, which the pipeline adds)."""
        return {
            "samples": self.samples,
            "input_errors": self.input_errors,
            **({"labels": self.labels.to_json_dict()} if self.labels is not None else {}),
            "thresholds_met": self.thresholds_met,
            "nothing_scored": self.nothing_scored,
            "metrics": {name: m.to_json_dict() for name, m in self.metrics.items()},
        }
