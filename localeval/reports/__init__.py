"""What a person reads about a run: the terminal table, JUnit XML, a Markdown job summary,
the HTML page. Each takes `ResultRow`s one at a time (memory does not grow with the
file) and escapes every value for its own format as it writes it."""

from __future__ import annotations

import math
from typing import Any

from localeval.data.labels import LABELLED_METRICS
from localeval.data.results import INPUT_ERROR_KEY, OMITTED_KEY, ResultRow
from localeval.interrupts import users_interrupt
from localeval.metrics import BUILTIN, metric_class
from localeval.stats.figures import MetricFigures, SummaryFigures
from localeval.stats.gates import MeanGate
from localeval.stats.ppi import PredictionPowered


def explain(row: ResultRow, metric: str) -> str:
    """Why a sample got its score for a metric, in one unescaped line: the error, or the
    metric's own reading of its details."""
    if row.unreadable:
        return row.errors[INPUT_ERROR_KEY]
    if metric in row.errors:
        return row.errors[metric]
    if metric not in row.scores:
        return "not scored in this run"
    details = row.details.get(metric)
    if details is not None and set(details) == {OMITTED_KEY}:  # left out of a row too long to write: it says why
        return str(details[OMITTED_KEY])
    cls = metric_class(metric)  # a plugin's metric in a results file: its package explains its details
    if cls is None or details is None:
        return ""
    if cls in BUILTIN:
        return cls.explain_raw(details)
    try:
        return str(cls.explain_raw(details))
    except BaseException as error:  # noqa: BLE001 - another package's code: its failure is its row's text, not the report's end
        if users_interrupt(error):
            raise
        return f"details not explained: {cls.__module__}.{cls.__qualname__}.explain raised {type(error).__name__}"


def number(value: Any, digits: int = 3, missing: str = "-") -> str:
    """The one number format of every report: `digits` decimals for floats, `missing`
    for None and NaN, integers as they are."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return missing
    if isinstance(value, float):
        return f"{value:.{digits}f}"
    return str(value)


def interval(bounds: Any) -> str:
    """"0.430-0.590" for a mean's 95% interval, "-" when there is none (fewer than 2 scores)."""
    return f"{number(bounds[0])}-{number(bounds[1])}" if bounds else "-"


def score_text(row: ResultRow, metric: str) -> str:
    """A sample's score as the reports print it: three decimals, or null."""
    return number(row.scores.get(metric), missing="null")


# The figure a --min-mean or --max-mean gate read (the summary's `gated_figure`), in words.
FIGURE_WORDS = {
    "mean": "mean",
    "ci95_low": "lower 95% bound",
    "ci95_high": "upper 95% bound",
    "ppi_ci95_low": "prediction-powered lower 95% bound",
    "ppi_ci95_high": "prediction-powered upper 95% bound",
}
# Printed under every table with a plain interval: the interval is read as accuracy otherwise.
NOISE_NOTE = "95% interval: sampling noise only (where another sample of the same pipeline may fall), not the judge's bias; --labels FILE measures that"
MAX_LISTED = 5  # left-out label rows named one by one; the rest are counted


def gate_text(name: str, gate: MeanGate) -> str:
    """A min_mean or max_mean gate in words: which figure it read (the mean, or which bound of which
    interval), how it compared, and why it is not met (or met on few samples) when the number alone does not say."""
    words = FIGURE_WORDS.get(gate.figure, gate.figure)
    if gate.value is None:
        text = f"{name} {words}: none"
    elif gate.at_most:
        text = f"{name} {words} {number(gate.value)} {'<=' if gate.value <= gate.bound else '>'} {gate.bound} (the most it may be)"
    else:
        text = f"{name} {words} {number(gate.value)} {'>=' if gate.value >= gate.bound else '<'} {gate.bound}"
    reason = gate.reason  # also on a gate met: one met by the benefit of a small sample's doubt says so
    return text + (f" ({reason})" if reason else "") + (": not met" if reason and not gate.ok else "")


def threshold_reading(name: str, m: MetricFigures) -> str | None:
    """How many samples a `-t` gate read, when NaN samples (the metric undefined for them: neither
    pass nor fail, ragas' rule) left some out: one scored sample among many NaN passes a gate, and
    the reader should see on how few it rests."""
    if m.threshold is None or not m.nan:
        return None
    read = m.threshold.passed + m.threshold.failed
    return f"{name} threshold read {read} of {m.count} samples ({m.nan} NaN: undefined for the sample, neither pass nor fail)"


def _ppi_note(name: str, m: MetricFigures, ppi: PredictionPowered) -> str:
    if ppi.mean is None:
        return f"{name}: {ppi.labelled} labelled sample(s); a prediction-powered mean needs at least {ppi.min_labels}"
    if ppi.weight:
        helped = (
            f"the metric's weight (lambda) {ppi.weight:.2f}: the interval is {ppi.width_ratio:.2f} x as wide as from the labels alone "
            f"({interval(ppi.labels_only_ci95)}), as if there were {ppi.effective_labels:.0f} labels"
        )
    else:
        helped = "the metric did not narrow it (lambda 0: the labels alone)"
    return (
        f"{name}: prediction-powered mean {number(ppi.mean)}, 95% interval {interval(ppi.ci95)}, resting on {ppi.labelled} labelled samples "
        f"(human mean {number(ppi.human_mean)}; metric mean {number(m.mean)} on all {m.scored}); {helped}"
    )


def named_means(summary: SummaryFigures) -> list[str]:
    """What a metric's mean is known as, where it has a name of its own (`Metric.mean_is`:
    reciprocal_rank's mean is MRR, average_precision's MAP), so a retrieval team finds its figure."""
    return [f"{name}'s mean is {cls.mean_is}" for name in summary.metrics if (cls := metric_class(name)) is not None and cls.mean_is]


def noise_notes(summary: SummaryFigures) -> list[str]:
    """NOISE_NOTE, where a metric has a plain interval."""
    return [NOISE_NOTE] if any(m.ci95 for m in summary.metrics.values()) else []


def uncertainty_notes(summary: SummaryFigures) -> list[str]:
    """One line per metric with labelled samples: the prediction-powered mean and interval, how
    many labels it rests on and how much the metric helped; then how the labels joined (ids
    matching no sample, ids matching several, labels for metrics the run does not score, rows left
    out, a file with no id at all)."""
    notes = [_ppi_note(name, m, m.ppi) for name, m in summary.metrics.items() if m.ppi is not None]
    labels = summary.labels
    if labels:
        if not labels.rows_with_id:
            notes.append(f"the labels file {labels.file} has no row with an id, so no sample is labelled (rows without an id only serve localeval calibrate)")
        if labels.unmatched:
            notes.append(f"{labels.unmatched} labelled sample id(s) match no sample in this run")
        if labels.ambiguous:
            shown = ", ".join(repr(i) for i in labels.ambiguous_ids)
            notes.append(f"{labels.ambiguous} labelled id(s) name more than one sample (a repeated id, or an id equal to an id-less sample's line number), so they label none: {shown}")
        unlabelled = [name for name in summary.metrics if name not in LABELLED_METRICS]
        if unlabelled:
            notes.append(
                f"{', '.join(unlabelled)} {'takes' if len(unlabelled) == 1 else 'take'} no labels: no row kind of the labels file holds "
                f"{'its' if len(unlabelled) == 1 else 'their'} human score (labels fit {', '.join(LABELLED_METRICS)}), so no prediction-powered figure"
            )
        unused = labels.unused_metrics
        if unused:
            notes.append(f"the labels for {', '.join(unused)} are not used: this run does not score {'it' if len(unused) == 1 else 'them'} (select {'it' if len(unused) == 1 else 'them'} with -m to measure {'its' if len(unused) == 1 else 'their'} bias)")
        left_out = labels.left_out
        notes += [f"labels: {problem}" for problem in left_out[:MAX_LISTED]]
        if len(left_out) > MAX_LISTED:
            notes.append(f"labels: {len(left_out) - MAX_LISTED} more rows left out")
    return notes
