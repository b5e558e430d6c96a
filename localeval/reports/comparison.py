"""A comparison of two runs for people and for CI: the terminal text and JUnit XML with one case
per gated metric, and the sentences every format shares (the verdict line, the gates in words,
what a run of this size can show). The Markdown comment is comparison_markdown.py's, the page
comparison_html.py's.

Each writer says the same things in the same order: what differs between the runs' setups first
(another judge changes what every score means), how samples were paired and what was left
unpaired, then the paired table with each metric's verdict, the gates, and what moved. Every
value from a results file is escaped for its format where it is written.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import IO

from localeval.comparison.compare import Comparison, MetricComparison, Unpaired
from localeval.comparison.movers import Mover
from localeval.reports import number
from localeval.reports.escaping import plain, xml_attribute, xml_text
from localeval.stats.gates import DropGate
from localeval.stats.paired import Verdict

MAX_UNPAIRED_LISTED = 20  # unpaired samples listed in the terminal and Markdown; the JSON has them all
MAX_IN_VERDICT = 3  # metrics named in the verdict line; the rest are counted
DROP_FIGURE_WORDS = {"difference": "mean difference", "ci95_low": "lower 95% bound", "ci95_high": "upper 95% bound"}


def signed(value: float | None, places: int = 3) -> str:
    """A difference with its sign; `places`: a metric's `PairedDifference.decimals`."""
    return "-" if value is None or value != value else f"{value:+.{places}f}"


def difference_interval(bounds: tuple[float, float] | None, places: int = 3) -> str:
    return f"{signed(bounds[0], places)} to {signed(bounds[1], places)}" if bounds else "-"


def gate_words(name: str, gate: DropGate, lower_is_better: bool = False) -> str:
    """One gate's verdict in words: the figure it read, the limit, and why not where the number does
    not say; for a lower-is-better metric, that it read the difference with its sign turned."""
    words = DROP_FIGURE_WORDS.get(gate.figure, gate.figure)
    if lower_is_better:
        words = f"lower is better, so a rise is the drop: {words} with its sign turned,"
    verdict = "ok" if gate.ok else "NOT met"
    reason = f" ({gate.reason})" if gate.reason else ""
    return f"--max-drop {name}={number(gate.max_drop)} ({gate.on}): {words} {signed(gate.value)} against -{number(gate.max_drop)}: {verdict}{reason}"


def smallest_shown_words(m: MetricComparison) -> str | None:
    """What a run of this size can see on one metric: the interval's half-width is the smallest
    change that can be shown either way (a smaller one reads "no difference shown", however real)."""
    d = m.difference
    if not d.smallest_shown or d.ci95 is None:
        return None
    return f"with n = {d.count} and this spread, a {'rise' if m.lower_is_better else 'drop'} smaller than {d.smallest_shown:.{d.decimals}f} cannot be shown"


def _listed(items: list[tuple[str, MetricComparison]]) -> str:
    named = ", ".join(f"{name} {signed(m.difference.mean, m.difference.decimals)} ({difference_interval(m.difference.ci95, m.difference.decimals)})" for name, m in items[:MAX_IN_VERDICT])
    return named + (f" and {len(items) - MAX_IN_VERDICT} more" if len(items) > MAX_IN_VERDICT else "")


def verdict_line(comparison: Comparison) -> str:
    """The comparison in one line, for the top of a comment: the metrics shown worse (each with its
    difference and interval), else that none was, those shown better, and the gates' outcome."""
    metrics = comparison.metrics
    worse = [(name, m) for name, m in metrics.items() if m.verdict is Verdict.WORSE]
    better = [(name, m) for name, m in metrics.items() if m.verdict is Verdict.BETTER]
    count = f"{len(metrics)} metric{'' if len(metrics) == 1 else 's'}"
    if not metrics:
        line = "no metric compared"
    elif worse:
        line = f"{len(worse)} of {count} worse: {_listed(worse)}"
    else:
        line = f"no metric shown worse (of {count})"
    if better:
        line += f"; {len(better)} better: {_listed(better)}"
    gates = [name for name, m in metrics.items() if m.gate is not None]
    failed = [name for name, m in metrics.items() if m.gate is not None and not m.gate.ok]
    plural = "s" if len(gates) != 1 else ""
    if comparison.gate_refusal is not None:
        line += "; gates refused"
    elif failed:
        line += f"; gate{plural} failed: {', '.join(failed[:MAX_IN_VERDICT])}" + (f" and {len(failed) - MAX_IN_VERDICT} more" if len(failed) > MAX_IN_VERDICT else "")
    elif gates:
        line += f"; gate{plural} passed"
    return line


def unpaired_summary(comparison: Comparison) -> list[str]:
    """How many samples were left out of every metric's pairing, by why, and the first of them."""
    if not comparison.unpaired:
        return []
    lines = [f"{len(comparison.unpaired)} sample(s) not paired (a --max-drop gate fails on them):"]
    lines += [f"  {_unpaired(u)}" for u in comparison.unpaired[:MAX_UNPAIRED_LISTED]]
    if len(comparison.unpaired) > MAX_UNPAIRED_LISTED:
        lines.append(f"  ... and {len(comparison.unpaired) - MAX_UNPAIRED_LISTED} more (--json lists them all)")
    return lines


def _unpaired(u: Unpaired) -> str:
    return f"id {u.id!r}, line {u.line} of the {'base' if u.side == 'both' else u.side}: {u.why}"


def preamble(comparison: Comparison) -> list[str]:
    """What is said before the table: setup differences, pairing, the question check, metrics not shared, the refusal."""
    lines = []
    meaning = [d for d in comparison.setup if d.changes_scores]
    other = [d for d in comparison.setup if not d.changes_scores]
    if meaning:
        lines.append("The runs differ in what a score means:")
        lines += [f"  {d.describe()}" for d in meaning]
    if other:
        lines.append("The runs also differ in:" if meaning else "The runs differ in:")
        lines += [f"  {d.describe()}" for d in other]
    if not comparison.setup:
        lines.append("The runs have the same setup (judge, metric options, field map).")
    if comparison.inputs is not None:  # another input file is the normal case: one line, not a setup difference
        lines.append(comparison.inputs.sentence())
    how = "by line (the samples have no ids)" if comparison.paired_by == "line" else "by id"
    lines.append(f"Samples paired {how}; {comparison.questions}.")
    if comparison.unpaired and not any(m.difference.count for m in comparison.metrics.values()):
        lines.append(f"No sample was compared: are these two runs of the same questions? Samples pair by {'line' if comparison.paired_by == 'line' else 'id'}.")
    for name, side in comparison.not_shared.items():
        lines.append(f"{name} is scored in the {side} only: not compared.")
    if comparison.gate_refusal:
        lines.append(comparison.gate_refusal)
    return lines


def metric_notes(m: MetricComparison) -> list[str]:
    notes = []
    if m.not_compared:
        notes.append(f"{m.name}: {len(m.not_compared)} sample(s) not compared: " + "; ".join(_unpaired(u) for u in m.not_compared[:5]) + (" ..." if len(m.not_compared) > 5 else ""))
    if m.undefined_in_both:
        notes.append(f"{m.name}: {m.undefined_in_both} sample(s) undefined (NaN) in both runs")
    return notes


def comparison_text(comparison: Comparison) -> str:
    """The terminal report."""
    header = ["metric", "paired", "base", "candidate", "difference", "95% interval", "up", "down", "level"]
    rows = [header]
    for name, m in comparison.metrics.items():
        d = m.difference
        rows.append([plain(name), str(d.count), number(d.base_mean), number(d.candidate_mean), signed(d.mean, d.decimals), difference_interval(d.ci95, d.decimals), str(d.up), str(d.down), str(d.level)])
    widths = [max(len(row[i]) for row in rows) for i in range(len(header))]
    table = ["  ".join(cell.ljust(w) if i == 0 else cell.rjust(w) for i, (cell, w) in enumerate(zip(row, widths))) for row in rows]
    table.insert(1, "  ".join("-" * w for w in widths))
    lines = [plain(line) for line in preamble(comparison) if line != comparison.gate_refusal] + [""] + table + [""]  # the refusal: once, as the error
    for name, m in comparison.metrics.items():
        reach = smallest_shown_words(m)
        lines.append(plain(f"{name}: {m.sentence()}" + (f"; {reach}" if reach else "")))
        lines += [plain(note) for note in metric_notes(m)]
        if m.gate is not None:
            lines.append(plain(gate_words(name, m.gate, m.lower_is_better)))
    lines += [plain(line) for line in unpaired_summary(comparison)]
    moved = mover_tables(comparison)
    if moved:
        lines.append("")
    for name, label, movers in moved:
        lines.append(plain(f"{name}, {label}:"))
        for mover in movers:
            lines.append(plain(f"  id {mover.id!r} (line {mover.base_line}): {number(mover.base)} -> {number(mover.candidate)}"))
            lines += [plain(f"    {change.text}") for change in mover.changes]
    if comparison.gated:
        lines.append("gates refused" if comparison.gate_refusal else "gates " + ("met" if comparison.gates_hold else "NOT met"))
    return "\n".join(lines)


def mover_tables(comparison: Comparison) -> list[tuple[str, str, Sequence[Mover]]]:
    """The samples that moved most, as (metric, "worsened most" or "improved most", samples): each
    metric's worsened first, nothing for a side where none moved. One list for every format, so the
    terminal, Markdown and HTML reports show the same samples under the same headings in one order."""
    return [
        (name, label, movers)
        for name, m in comparison.metrics.items()
        for label, movers in (("worsened most", m.worsened), ("improved most", m.improved))
        if movers
    ]


def write_comparison_junit(out: IO[str], comparison: Comparison) -> None:
    """JUnit XML: one test case per gated metric (an error case each when the gates were refused)."""
    cases = []
    failures = errors = 0
    for name, limit in comparison.max_drop.items():
        m = comparison.metrics[name]
        system_out = f"<system-out>{xml_text(m.sentence())}</system-out>"
        if m.gate is None:  # refused (the setup changed what its score means): an error case; another gated metric is still read
            errors += 1
            reason = comparison.gate_refusal or "not gated"
            body = f'<error message={xml_attribute(reason)} type="refused">{xml_text(reason)}</error>'
        elif not m.gate.ok:
            failures += 1
            text = gate_words(name, m.gate, m.lower_is_better)
            body = f'<failure message={xml_attribute(text)} type="max-drop">{xml_text(text)}</failure>'
        else:
            body = ""
        cases.append(f"    <testcase classname=\"localeval.compare\" name={xml_attribute(f'{name} max drop {number(limit)}')}>{body}{system_out}</testcase>\n")
    out.write('<?xml version="1.0" encoding="UTF-8"?>\n<testsuites name="localeval compare">\n')
    out.write(f'  <testsuite name="localeval compare" tests="{len(cases)}" failures="{failures}" errors="{errors}" skipped="0">\n')
    out.write("    <properties>\n")
    for name, m in comparison.metrics.items():
        d = m.difference
        low, high = d.ci95 or (None, None)
        for key, value in (("difference", d.mean), ("ci95_low", low), ("ci95_high", high), ("paired", d.count)):
            out.write(f"      <property name={xml_attribute(f'{name}.{key}')} value={xml_attribute(number(value, 6, missing=''))}/>\n")
    out.write("    </properties>\n" + "".join(cases) + "  </testsuite>\n</testsuites>\n")
