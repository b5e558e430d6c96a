"""Rendering a summary for a person (a terminal table). Pure functions, no I/O."""

from __future__ import annotations

from typing import Any


def _fmt(value: Any, digits: int = 3) -> str:
    if value is None:
        return "-"
    if isinstance(value, float):
        return f"{value:.{digits}f}"
    return str(value)


def summary_table(summary: dict[str, Any]) -> str:
    """A fixed-width table: one row a metric, with the threshold verdict when one is set."""
    header = ["metric", "count", "mean", "median", "nan", "errors", "threshold", "pass rate"]
    rows = [header]
    for name, m in summary["metrics"].items():
        rows.append(
            [
                name,
                _fmt(m["count"]),
                _fmt(m["mean"]),
                _fmt(m["median"]),
                _fmt(m["nan"]),
                _fmt(m["errors"]),
                _fmt(m.get("threshold"), 2),
                _fmt(m.get("pass_rate")) if "threshold" in m else "-",
            ]
        )
    widths = [max(len(row[i]) for row in rows) for i in range(len(header))]
    lines = ["  ".join(cell.ljust(w) if i == 0 else cell.rjust(w) for i, (cell, w) in enumerate(zip(row, widths))) for row in rows]
    lines.insert(1, "  ".join("-" * w for w in widths))
    tail = f"{summary['samples']} samples, {summary['input_errors']} unreadable"
    for name, m in summary["metrics"].items():
        if "min_mean" in m:
            tail += f", {name} mean {'>=' if m['mean_ok'] else '<'} {m['min_mean']}"
    if any("threshold" in m or "min_mean" in m for m in summary["metrics"].values()):
        tail += ", thresholds " + ("met" if summary["thresholds_met"] else "NOT met")
    return "\n".join(lines + [tail])
