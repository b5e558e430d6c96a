"""The summary as a fixed-width table for a terminal."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from localeval.escaping import plain
from localeval.reports import NOISE_NOTE, gate_text, interval, number, threshold_reading, uncertainty_notes


def summary_table(summary: Mapping[str, Any]) -> str:
    """One row a metric, with the threshold verdict when one is set."""
    header = ["metric", "count", "mean", "std err", "95% interval", "median", "nan", "errors", "threshold", "pass rate"]
    rows = [header]
    for name, m in summary["metrics"].items():
        rows.append(
            [
                plain(name),
                number(m["count"]),
                number(m["mean"]),
                number(m.get("stderr")),
                interval(m.get("ci95")),
                number(m["median"]),
                number(m["nan"]),
                number(m["errors"]),
                number(m.get("threshold"), 2),
                number(m.get("pass_rate")) if "threshold" in m else "-",
            ]
        )
    widths = [max(len(row[i]) for row in rows) for i in range(len(header))]
    lines = ["  ".join(cell.ljust(w) if i == 0 else cell.rjust(w) for i, (cell, w) in enumerate(zip(row, widths))) for row in rows]
    lines.insert(1, "  ".join("-" * w for w in widths))
    tail = f"{summary['samples']} samples, {summary['input_errors']} unreadable"
    for name, m in summary["metrics"].items():
        if (reading := threshold_reading(name, m)) is not None:
            tail += f", {plain(reading)}"
        if "min_mean" in m:
            tail += f", {plain(gate_text(name, m))}"
            low, high = m.get("ci95") or (None, None)
            if m.get("min_mean_on", "mean") == "mean" and low is not None and high is not None and low < m["min_mean"] <= high:
                tail += " (within the mean's 95% interval: another sample of the same pipeline could fall on the other side)"
    if summary.get("nothing_scored"):
        tail += ", nothing was scored"
    if any("threshold" in m or "min_mean" in m for m in summary["metrics"].values()):
        tail += ", thresholds " + ("met" if summary["thresholds_met"] else "NOT met")
    noise = [NOISE_NOTE] if any(m.get("ci95") for m in summary["metrics"].values()) else []
    return "\n".join(lines + [tail] + noise + [plain(note) for note in uncertainty_notes(summary)])
