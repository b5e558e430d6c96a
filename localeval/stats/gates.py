"""The pass/fail rules of a run's gates: `-t` (every sample's score at least a threshold),
`--min-mean` (a metric's mean, or a bound of its 95% interval, at least a minimum) and `--max-mean`
(the same, at most a maximum: for a lower-is-better metric such as noise_sensitivity).

Apart from the summary's arithmetic so that the one question CI asks, "does this run pass", is
answered in one small place, and every writer reads the same verdict with its reason. A gate never
passes on what it could not judge: an unscored sample fails it, and a gate with no sample it could
judge does not hold (an empty file must not pass a CI step).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from localeval.errors import ConfigError
from localeval.stats.intervals import narrowest_half_width
from localeval.stats.ppi import MIN_LABELS, PredictionPowered

EVERY_METRIC = "all"  # --max-drop all=VALUE (max_drop in a config): a gate on every compared metric; a NAME=VALUE beside it wins for NAME
# Below this many scored samples the interval is always the whole [0, 1] (its narrowest half-width
# reaches 1): an interval gate cannot be settled.
FEWEST_TO_SETTLE = next(n for n in range(2, 100) if narrowest_half_width(n) < 1.0)
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
# What each gate mode reads of a --min-mean gate: the bound of the (plain) 95% interval, by its
# side (0 low, 1 high). A --max-mean gate reads the other side: on a lower-is-better metric the
# modes keep their sense for the pipeline's quality ("confidently below" the bar is the whole
# interval above the maximum), as compare's --max-drop does on such a metric.
_SIDES = {"fail-if-confidently-below": 1, "pass-if-confidently-above": 0}


def check_gate_on(value: object, option: str = "threshold_on") -> GateOn:
    """`value` as a gate mode, or a ConfigError that names the `option`, the modes (and, for a retired name, why)."""
    if isinstance(value, str) and value in RETIRED_GATE_MODES:
        raise ConfigError(f"{option} {RETIRED_GATE_MODES[value]}")
    for mode in GATE_MODES:
        if value == mode:
            return mode
    raise ConfigError(f"{option} must be one of {', '.join(GATE_MODES)}; got {value!r}")


@dataclass(frozen=True)
class ThresholdGate:
    """A `-t` gate's tally: samples at or above `minimum`, and below it or unscored (NaN samples
    are neither)."""

    minimum: float
    passed: int
    failed: int

    @property
    def pass_rate(self) -> float | None:
        judged = self.passed + self.failed
        return self.passed / judged if judged else None

    @property
    def holds(self) -> bool:
        """No sample failed, and at least one passed."""
        return self.failed == 0 and self.passed > 0

    def to_json_dict(self) -> dict[str, Any]:
        return {"threshold": self.minimum, "passed": self.passed, "failed": self.failed, "pass_rate": self.pass_rate}


@dataclass(frozen=True, kw_only=True)
class GateReading:
    """What a gate on one figure of a summary read: the mode `on`, the number `value` (None when
    there is none), its name in the summary `figure`, whether it holds, and why not when the number
    alone does not say. A --min-mean and a --max-drop gate differ only in their bound and in the
    JSON names of their bound and verdict, so the rest is read and written here once."""

    on: GateOn
    figure: str
    value: float | None
    ok: bool
    reason: str | None

    def _json_with(self, bound: dict[str, Any], ok_key: str) -> dict[str, Any]:
        """`bound` (the gate's own names for its bound and mode), then what it read and its verdict."""
        found: dict[str, Any] = {**bound, "gated_figure": self.figure, "gated_value": self.value, ok_key: self.ok}
        if self.reason is not None:
            found["gate_reason"] = self.reason
        return found


@dataclass(frozen=True, kw_only=True)
class MeanGate(GateReading):
    """What a --min-mean gate (or, `at_most`, a --max-mean gate) read (GateReading): its `figure`
    is `mean`, `ci95_low`, `ppi_ci95_high`..., and its reason tells no interval, too few samples or
    labels, unscored samples; the reason is also there on a gate met by a small sample's benefit of
    the doubt. `bound` is the minimum the figure must reach, or the maximum it must not pass."""

    bound: float
    at_most: bool = False

    @property
    def kind(self) -> str:
        """The gate's name in the summary's JSON and on the command line, less the dashes: min_mean or max_mean."""
        return "max_mean" if self.at_most else "min_mean"

    def to_json_dict(self) -> dict[str, Any]:
        return self._json_with({self.kind: self.bound, f"{self.kind}_on": self.on}, "mean_ok")


def mean_gate(
    on: GateOn, bound: float, *, at_most: bool = False, count: int, errors: int, scored: int, mean: float | None, interval: tuple[float, float] | None, ppi: PredictionPowered | None
) -> MeanGate:
    """The --min-mean verdict (`at_most`: the --max-mean verdict) of a metric with `count` samples,
    `errors` of them unscored and `scored` scored, whose mean and 95% interval are `mean` and
    `interval`; an interval gate reads the prediction-powered interval `ppi` when the metric has
    labels. An unscored sample fails the gate, as it fails a per-sample threshold: a mean over the
    few samples that could be scored says nothing about the others."""
    reason = None
    if on == "mean":
        value, figure = mean, "mean"
    else:
        side = _SIDES[on] if not at_most else 1 - _SIDES[on]
        figure = ("ppi_" if ppi is not None else "") + ("ci95_low", "ci95_high")[side]
        if ppi is not None:
            value = ppi.ci95[side] if ppi.ci95 else None
            if value is None:
                reason = f"{ppi.labelled} labelled sample(s): a prediction-powered interval needs at least {MIN_LABELS} (label more, or leave --labels out to gate on the plain interval)"
        else:
            value = interval[side] if interval else None
            if value is None:
                reason = f"no 95% interval from {scored} scored sample(s): an interval needs 2"
            elif scored < FEWEST_TO_SETTLE:
                reason = f"{scored} scored samples settle nothing: {SMALL_SAMPLE_RULE}"
    if value is None and reason is None:
        reason = "nothing was scored"
    if errors:
        reason = f"{errors} of {count} samples could not be scored, and an unscored sample fails a gate"
    within = value is not None and (value <= bound if at_most else value >= bound)
    return MeanGate(bound=bound, at_most=at_most, on=on, figure=figure, value=value, ok=within and not errors, reason=reason)


# What each mode of a --max-drop gate reads on a paired difference (compare's JSON and JUnit names).
_DROP_FIGURES = {"mean": "difference", "fail-if-confidently-below": "ci95_high", "pass-if-confidently-above": "ci95_low"}


@dataclass(frozen=True, kw_only=True)
class DropGate(GateReading):
    """A `compare --max-drop` verdict: the candidate may cost at most `max_drop` of the metric's
    mean. Read like a --min-mean gate whose minimum is -max_drop on the paired difference
    (GateReading)."""

    max_drop: float

    def to_json_dict(self) -> dict[str, Any]:
        return self._json_with({"max_drop": self.max_drop, "max_drop_on": self.on}, "ok")


def drop_gate(on: GateOn, max_drop: float, *, paired: int, mean: float | None, interval: tuple[float, float] | None, uncompared: int) -> DropGate:
    """The --max-drop verdict on a mean paired difference `mean` (candidate minus base) of `paired`
    pairs with 95% `interval`. "fail-if-confidently-below" fails only when the whole interval is
    below -max_drop (worse with confidence by more than max_drop); "pass-if-confidently-above"
    passes only when the whole interval is at least -max_drop (shown to cost at most max_drop);
    "mean" compares the mean difference. `uncompared` samples (in one run only, an error in either,
    scored in one and undefined in the other) fail it, as an unscored sample fails a score gate:
    what could not be compared may hide the drop."""
    figure = _DROP_FIGURES[on]
    reason = None
    if on == "mean":
        value = mean
    else:
        value = None if interval is None else interval[0 if figure == "ci95_low" else 1]
        if value is None:
            reason = f"no 95% interval from {paired} paired sample(s): an interval needs 2"
    if value is None and reason is None:
        reason = "no sample was scored in both runs"
    if uncompared:
        reason = f"{uncompared} sample(s) could not be compared (in one run only, an error, or undefined in one run), and a sample not compared fails a gate"
    return DropGate(max_drop=max_drop, on=on, figure=figure, value=value, ok=value is not None and value >= -max_drop - 1e-12 and not uncompared, reason=reason)
