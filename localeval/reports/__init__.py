"""What a person reads about a run: the terminal table, JUnit XML, a Markdown job summary,
the HTML page. Each takes `ResultRow`s one at a time (memory does not grow with the
file) and escapes every value for its own format as it writes it."""

from __future__ import annotations

import math
from typing import Any

from localeval.metrics import REGISTRY
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
    cls = REGISTRY.get(metric)
    if cls is None or details is None:
        return ""
    return cls.explain_raw(details)


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
