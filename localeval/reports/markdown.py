"""A Markdown job summary for CI: the summary table and the failing samples with their reasons."""

from __future__ import annotations

from collections.abc import Iterable
from typing import IO

from localeval.data.results import Outcome, ResultRow
from localeval.errors import EXIT_OK, EXIT_THRESHOLD_FAILED, EXIT_USAGE
from localeval.reports import FIGURE_WORDS, explain, interval, named_means, noise_notes, number, score_text, threshold_reading, uncertainty_notes
from localeval.reports.escaping import markdown_cell
from localeval.stats.figures import SummaryFigures
from localeval.stats.gates import MeanGate

MAX_FAILURES = 50  # failing samples listed; the rest are counted


def _gate_cell(gate: MeanGate) -> str:
    """The mean gate cell: the minimum (or "at most" the maximum), the figure the gate read (which
    may be a prediction-powered bound, not the plain figures beside it) and its value, and the
    verdict with its reason."""
    words = FIGURE_WORDS.get(gate.figure, gate.figure)
    reason = f": {markdown_cell(gate.reason)}" if gate.reason else ""
    bound = f"at most {number(gate.bound)}" if gate.at_most else number(gate.bound)
    return f"{bound}, read on the {words} {number(gate.value)} ({'ok' if gate.ok else 'not met'}{reason})"


# The headline for each exit code the figures call for: a CI page never says "passed" of a run that failed.
HEADLINES = {EXIT_OK: "passed", EXIT_THRESHOLD_FAILED: "FAILED", EXIT_USAGE: "FAILED (unreadable input lines, exit 2)"}


def write_markdown(out: IO[str], rows: Iterable[ResultRow], summary: SummaryFigures, max_failures: int = MAX_FAILURES, *, fail_on_error: bool = False) -> None:
    """Write the summary, then up to `max_failures` failing samples, reading `rows` once. The
    headline is the run's exit code in words (`fail_on_error`: --fail-on-error was given)."""
    metrics = summary.metrics
    out.write(f"## localeval: {HEADLINES[summary.exit_code(fail_on_error)]}\n\n{summary.samples} samples, {summary.input_errors} unreadable lines.")
    if summary.nothing_scored:
        out.write(" Nothing was scored.")
    out.write("\n\n| metric | mean | std err | 95% interval | median | scored | NaN | errors | threshold | pass rate | mean gate |\n|---|---|---|---|---|---|---|---|---|---|---|\n")
    for name, m in metrics.items():
        mean_gate = _gate_cell(m.gate) if m.gate is not None else "-"
        threshold, pass_rate = (m.threshold.minimum, m.threshold.pass_rate) if m.threshold is not None else (None, None)
        out.write(
            f"| {markdown_cell(name)} | {number(m.mean)} | {number(m.stderr)} | {interval(m.ci95)} | {number(m.median)} | {m.scored} | {m.nan} | "
            f"{m.errors} | {number(threshold)} | {number(pass_rate)} | {mean_gate} |\n"
        )
    readings = [reading for name, m in metrics.items() if (reading := threshold_reading(name, m)) is not None]
    notes = readings + noise_notes(summary) + named_means(summary) + uncertainty_notes(summary)
    if notes:
        out.write("\n" + "".join(f"- {markdown_cell(note, 1000)}\n" for note in notes))
    gated = {name: m.threshold.minimum for name, m in metrics.items() if m.threshold is not None}
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
