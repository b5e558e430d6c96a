"""A Markdown job summary for CI: the summary table and the failing samples with their reasons."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import IO, Any

from localeval.escaping import markdown_cell
from localeval.reports import FIGURE_WORDS, NOISE_NOTE, explain, interval, number, score_text, threshold_reading, uncertainty_notes
from localeval.results import Outcome, ResultRow

MAX_FAILURES = 50  # failing samples listed; the rest are counted


def _gate_cell(m: Mapping[str, Any]) -> str:
    """The min mean cell: the minimum, the figure the gate read (which may be a prediction-powered
    bound, not the plain figures beside it) and its value, and the verdict with its reason."""
    words = FIGURE_WORDS.get(m.get("gated_figure", "mean"), str(m.get("gated_figure")))
    reason = f": {markdown_cell(m['gate_reason'])}" if m.get("gate_reason") else ""
    return f"{number(m['min_mean'])}, read on the {words} {number(m.get('gated_value', m['mean']))} ({'ok' if m['mean_ok'] else 'not met'}{reason})"


def write_markdown(out: IO[str], rows: Iterable[ResultRow], summary: Mapping[str, Any], max_failures: int = MAX_FAILURES) -> None:
    """Write the summary, then up to `max_failures` failing samples, reading `rows` once."""
    metrics = summary["metrics"]
    status = "passed" if summary["thresholds_met"] else "FAILED"
    out.write(f"## localeval: {status}\n\n{summary['samples']} samples, {summary['input_errors']} unreadable lines.")
    if summary.get("nothing_scored"):
        out.write(" Nothing was scored.")
    out.write("\n\n| metric | mean | std err | 95% interval | median | scored | NaN | errors | threshold | pass rate | min mean |\n|---|---|---|---|---|---|---|---|---|---|---|\n")
    for name, m in metrics.items():
        min_mean = _gate_cell(m) if "min_mean" in m else "-"
        out.write(
            f"| {markdown_cell(name)} | {number(m['mean'])} | {number(m.get('stderr'))} | {interval(m.get('ci95'))} | {number(m['median'])} | {m['scored']} | {m['nan']} | "
            f"{m['errors']} | {number(m.get('threshold'))} | {number(m.get('pass_rate'))} | {min_mean} |\n"
        )
    readings = [reading for name, m in metrics.items() if (reading := threshold_reading(name, m)) is not None]
    notes = readings + ([NOISE_NOTE] if any(m.get("ci95") for m in metrics.values()) else []) + uncertainty_notes(summary)
    if notes:
        out.write("\n" + "".join(f"- {markdown_cell(note, 1000)}\n" for note in notes))
    gated = {name: m["threshold"] for name, m in metrics.items() if "threshold" in m}
    listed: list[str] = []
    failing = 0
    for row in rows:
        for name, threshold in gated.items():
            if row.outcome(name, threshold) in (Outcome.FAIL, Outcome.ERROR):
                failing += 1
                if len(listed) < max_failures:
                    listed.append(
                        f"| {markdown_cell(row.id)} | {row.line} | {markdown_cell(name)} | {score_text(row, name)} | "
                        f"{number(threshold)} | {markdown_cell(explain(row, name))} |"
                    )
    if failing:
        out.write(f"\n### Failing samples ({failing})\n\n| id | line | metric | score | threshold | why |\n|---|---|---|---|---|---|\n")
        out.write("".join(line + "\n" for line in listed))
        if failing > max_failures:
            out.write(f"\n... and {failing - max_failures} more; see the results file.\n")
