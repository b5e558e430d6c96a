"""`localeval report CANDIDATE --compare-to BASE`: the comparison as one self-contained HTML page.

The same content as the Markdown comparison (the setups' differences first, the paired table,
what could not be paired, the samples that moved most and why), drawn with the report page's
style, no script and nothing fetched. Every value is escaped where it is written.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import IO

from localeval.comparison.compare import Comparison
from localeval.comparison.movers import Mover
from localeval.reports import number
from localeval.reports.comparison import MAX_UNPAIRED_LISTED, difference_interval, gate_words, metric_notes, mover_tables, preamble, signed
from localeval.reports.escaping import html_text
from localeval.reports.html import STYLE

VERDICT_CLASS = {"better": "better", "worse": "fail", "no difference shown": ""}
EXTRA_STYLE = ".better{color:#1a7f37}"


def _movers(out: IO[str], name: str, label: str, movers: Sequence[Mover]) -> None:
    out.write(f"<h3>{html_text(name)}: {label}</h3><table><thead><tr><th>id</th><th>line</th><th>base</th><th>candidate</th><th>what changed</th></tr></thead><tbody>\n")
    for mover in movers:
        changes = "".join(f"<li>{html_text(change.text, 1000)}</li>" for change in mover.changes) or "<li>no change recorded in the details</li>"
        out.write(
            f"<tr><td>{html_text(mover.id)}</td><td class=num>{mover.base_line}</td><td class=num>{number(mover.base)}</td>"
            f"<td class=num>{number(mover.candidate)}</td><td><ul>{changes}</ul></td></tr>\n"
        )
    out.write("</tbody></table>\n")


def write_comparison_html(out: IO[str], comparison: Comparison, title: str = "localeval comparison") -> None:
    """Write the comparison page."""
    out.write(f'<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><title>{html_text(title)}</title><style>{STYLE}{EXTRA_STYLE}</style></head><body>\n')
    out.write(f"<h1>{html_text(title)}</h1><p>Base <code>{html_text(comparison.base)}</code>, candidate <code>{html_text(comparison.candidate)}</code>.</p>\n")
    out.write("<ul>" + "".join(f"<li>{html_text(line.strip(), 2000)}</li>" for line in preamble(comparison)) + "</ul>\n")
    out.write(
        "<h2>Paired differences (candidate minus base)</h2><table><thead><tr><th>metric</th><th>paired</th><th>base</th><th>candidate</th>"
        "<th>difference</th><th>95% interval</th><th>up</th><th>down</th><th>level</th><th>verdict</th></tr></thead><tbody>\n"
    )
    for name, m in comparison.metrics.items():
        d = m.difference
        css = VERDICT_CLASS.get(m.verdict.value, "")
        out.write(
            f"<tr><td>{html_text(name)}</td><td class=num>{d.count}</td><td class=num>{number(d.base_mean)}</td><td class=num>{number(d.candidate_mean)}</td>"
            f"<td class=num>{signed(d.mean)}</td><td class=num>{difference_interval(d.ci95)}</td><td class=num>{d.up}</td><td class=num>{d.down}</td>"
            f"<td class=num>{d.level}</td><td class=\"{css}\">{html_text(m.verdict.value)}</td></tr>\n"
        )
    out.write("</tbody></table>\n<ul>")
    for name, m in comparison.metrics.items():
        out.write(f"<li>{html_text(name)}: {html_text(m.sentence(), 1000)}</li>")
        out.write("".join(f"<li>{html_text(note, 2000)}</li>" for note in metric_notes(m)))
        if m.gate is not None:
            out.write(f"<li>{html_text(gate_words(name, m.gate, m.lower_is_better), 1000)}</li>")
    out.write("</ul>\n")
    if comparison.unpaired:
        out.write(f"<h2>Not paired ({len(comparison.unpaired)})</h2><table><thead><tr><th>id</th><th>line</th><th>side</th><th>why</th></tr></thead><tbody>\n")
        for u in comparison.unpaired[:MAX_UNPAIRED_LISTED]:
            out.write(f"<tr><td>{html_text(u.id)}</td><td class=num>{u.line}</td><td>{u.side}</td><td>{html_text(u.why, 1000)}</td></tr>\n")
        out.write("</tbody></table>\n")
        if len(comparison.unpaired) > MAX_UNPAIRED_LISTED:
            out.write(f"<p>... and {len(comparison.unpaired) - MAX_UNPAIRED_LISTED} more: <code>localeval compare --json</code> lists them all.</p>\n")
    moved = mover_tables(comparison)
    if moved:
        out.write("<h2>What moved</h2>\n")
    for name, label, movers in moved:
        _movers(out, name, label, movers)
    out.write("</body></html>\n")
