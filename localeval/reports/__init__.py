"""What a person reads about a run: the terminal table, JUnit XML, a Markdown job summary,
the HTML page. Each takes `ResultRow`s one at a time (memory does not grow with the
file) and escapes every value for its own format as it writes it."""

from __future__ import annotations

import math
from typing import Any

from localeval.metrics import BUILTIN, metric_class
from localeval.results import INPUT_ERROR_KEY, ResultRow


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
    cls = metric_class(metric)  # a plugin's metric in a results file: its package explains its details
    if cls is None or details is None:
        return ""
    if cls in BUILTIN:
        return cls.explain_raw(details)
    try:
        return str(cls.explain_raw(details))
    except Exception as error:  # noqa: BLE001 - another package's code: its failure is its row's text, not the report's end
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


def gate_text(name: str, m: Any) -> str:
    """A min_mean gate in words: what was compared (the mean, or its interval's lower bound) and how it came out."""
    compared = "mean" if m.get("min_mean_on", "mean") == "mean" else "lower 95% bound"
    return f"{name} {compared} {number(m.get('gated_value', m['mean']))} {'>=' if m['mean_ok'] else '<'} {m['min_mean']}"


def uncertainty_notes(summary: Any) -> list[str]:
    """One line per metric with labelled samples: the prediction-powered mean and interval
    beside the plain one; and how many labelled ids matched no scored sample."""
    notes = []
    for name, m in summary["metrics"].items():
        ppi = m.get("ppi")
        if ppi is None:
            continue
        if ppi["mean"] is None:
            notes.append(f"{name}: {ppi['labelled']} labelled sample(s); a prediction-powered mean needs at least 2")
        else:
            notes.append(
                f"{name}: prediction-powered mean {number(ppi['mean'])}, 95% interval {interval(ppi['ci95'])} "
                f"(metric mean {number(m['mean'])} corrected on {ppi['labelled']} labelled samples, whose human mean is {number(ppi['human_mean'])})"
            )
    labels = summary.get("labels")
    if labels and labels["unmatched"]:
        notes.append(f"{labels['unmatched']} labelled sample id(s) match no sample scored by a labelled metric")
    return notes
