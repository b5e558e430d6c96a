"""The summary as a fixed-width table for a terminal."""

from __future__ import annotations

from localeval.reports import gate_text, interval, named_means, noise_notes, number, threshold_reading, uncertainty_notes
from localeval.reports.escaping import plain
from localeval.stats.figures import SummaryFigures


def summary_table(summary: SummaryFigures) -> str:
    """One row a metric, with the threshold verdict when one is set."""
    header = ["metric", "count", "mean", "std err", "95% interval", "median", "nan", "errors", "threshold", "pass rate"]
    rows = [header]
    for name, m in summary.metrics.items():
        rows.append(
            [
                plain(name),
                number(m.count),
                number(m.mean),
                number(m.stderr),
                interval(m.ci95),
                number(m.median),
                number(m.nan),
                number(m.errors),
                number(m.threshold.minimum if m.threshold else None, 2),
                number(m.threshold.pass_rate) if m.threshold else "-",
            ]
        )
    widths = [max(len(row[i]) for row in rows) for i in range(len(header))]
    lines = ["  ".join(cell.ljust(w) if i == 0 else cell.rjust(w) for i, (cell, w) in enumerate(zip(row, widths))) for row in rows]
    lines.insert(1, "  ".join("-" * w for w in widths))
    tail = f"{summary.samples} samples, {summary.input_errors} unreadable"
    for name, m in summary.metrics.items():
        if (reading := threshold_reading(name, m)) is not None:
            tail += f", {plain(reading)}"
        if m.gate is not None:
            tail += f", {plain(gate_text(name, m.gate))}"
            low, high = m.ci95 or (None, None)
            if m.gate.on == "mean" and low is not None and high is not None and ((low <= m.gate.bound < high) if m.gate.at_most else (low < m.gate.bound <= high)):
                tail += " (within the mean's 95% interval: another sample of the same pipeline could fall on the other side)"
    if summary.nothing_scored:
        tail += ", nothing was scored"
    if any(m.gated for m in summary.metrics.values()):
        tail += ", thresholds " + ("met" if summary.thresholds_met else "NOT met")
    return "\n".join(lines + [tail] + noise_notes(summary) + [plain(note) for note in named_means(summary) + uncertainty_notes(summary)])
