"""The comparison as one self-contained HTML page: `localeval compare --html` and
`localeval report CANDIDATE --compare-to BASE`.

A person deciding on a pull request wants to see at a glance which metrics moved and how surely,
then check any sample. So the page opens with the verdict and a forest plot (each metric's
difference with its 95% interval, the zero line, each gate's limit), shows the gates and their
outcome, draws base against candidate per sample (a scatter per metric), and lists EVERY pair in
one table, already in a useful order (per metric, the worst change first) so it reads without
script; a small inline script sorts it and filters it to the samples that moved. The samples
that moved most follow, with what changed in them. Nothing is fetched: the plots are inline SVG,
the script is inline, and every value is escaped where it is written.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence
from typing import IO

from localeval.comparison.compare import Comparison, MetricComparison, PairedScore
from localeval.comparison.movers import Mover
from localeval.reports import number
from localeval.reports.comparison import (
    MAX_UNPAIRED_LISTED,
    difference_interval,
    gate_words,
    metric_notes,
    mover_tables,
    preamble,
    signed,
    smallest_shown_words,
    verdict_line,
)
from localeval.reports.escaping import html_text
from localeval.reports.html import STYLE, sort_script

VERDICT_CLASS = {"better": "better", "worse": "fail", "no difference shown": ""}
COLOURS = {"worse": "#b3261e", "better": "#1a7f37", "no difference shown": "#57606a"}
GATE_COLOUR = "#bc4c00"
EXTRA_STYLE = """
.better{color:#1a7f37}.verdict{font-size:16px;font-weight:600}.plots{display:flex;flex-wrap:wrap;gap:16px}
#pairs tr.level td{color:#57606a}.controls{margin:8px 0}.controls label{margin-right:16px}svg{max-width:100%;height:auto}
"""
MAX_PAIR_ROWS = 20_000  # rows of the table of every pair; past it the level pairs go first, and it says so
MAX_POINTS = 2_000  # distinct points a scatter draws; past it scores are rounded to 2 decimals
FOREST_W, ROW_H, LABEL_W, FIGURES_W = 860, 30, 200, 300
CHAR_W = 7  # about what a character of the 12 px figures takes: the plot widens for longer ones
SCATTER = 230
SCATTER_PAD = 34
INSET = 12  # the frame's margin around [0, 1]: a point at a corner is drawn whole

CONTROLS_SCRIPT = """
(function(){
  var table=document.getElementById('pairs'),body=table.tBodies[0];
  Array.prototype.forEach.call(table.tHead.rows[0].cells,function(th){th.classList.add('sortable');});
  var moved=document.getElementById('only-moved'),metric=document.getElementById('metric');
  function filter(){
    var shown=0;
    Array.prototype.forEach.call(body.rows,function(r){
      var keep=(!moved.checked||r.getAttribute('data-moved')==='1')&&(metric.value===''||r.getAttribute('data-metric')===metric.value);
      r.hidden=!keep;if(keep){shown++;}
    });
    document.getElementById('shown').textContent=shown;
  }
  moved.addEventListener('change',filter);metric.addEventListener('change',filter);
  document.getElementById('controls').hidden=false;
  if(/moved=1/.test(location.hash)){moved.checked=true;}
  filter();
})();
"""


def _scale(values: Sequence[float]) -> float:
    """The forest plot's half-range: the largest bound or gate limit, rounded up to a round number."""
    top = max([abs(v) for v in values] + [0.02]) * 1.08
    return next((step for step in (0.05, 0.1, 0.2, 0.25, 0.5, 0.75, 1.0) if top <= step), 1.0)


def _gate_limit(m: MetricComparison) -> float | None:
    """Where a metric's gate sits on the difference's axis: -VALUE, or +VALUE for a lower-is-better metric."""
    if m.gate is None:
        return None
    return m.gate.max_drop if m.lower_is_better else -m.gate.max_drop


def _figures(m: MetricComparison) -> str:
    """What the forest plot writes beside a metric's row: its difference, interval and verdict."""
    d = m.difference
    figures = f"{signed(d.mean, d.decimals)} ({difference_interval(d.ci95, d.decimals)})" if d.ci95 else f"{signed(d.mean)} (no interval)"
    return f"{figures} {m.verdict.value}"


def forest_svg(comparison: Comparison) -> str:
    """Each metric's mean difference (a dot) and 95% interval (a bar) against the zero line, coloured
    by its verdict, each gate's limit a dashed mark on its row; the figures written beside."""
    metrics = list(comparison.metrics.items())
    bounds = [v for _, m in metrics for v in (m.difference.ci95 or ())] + [v for _, m in metrics if (v := _gate_limit(m)) is not None]
    bounds += [m.difference.mean for _, m in metrics if m.difference.mean is not None]
    half = _scale(bounds)
    written = {name: _figures(m) for name, m in metrics}
    width = FOREST_W - FIGURES_W + max([FIGURES_W] + [CHAR_W * len(text) + 16 for text in written.values()])  # room for the longest figures
    left, right = LABEL_W, FOREST_W - FIGURES_W
    height = ROW_H * len(metrics) + 44

    def x(value: float) -> float:
        return left + (value + half) / (2 * half) * (right - left)

    parts = []
    for tick in (-half, -half / 2, 0.0, half / 2, half):
        look = 'stroke="#1b1f24"' if tick == 0 else 'stroke="#d0d7de" stroke-dasharray="2 3"'
        parts.append(f'<line x1="{x(tick):.1f}" y1="8" x2="{x(tick):.1f}" y2="{height - 26}" {look}/>')
        parts.append(f'<text x="{x(tick):.1f}" y="{height - 12}" font-size="11" text-anchor="middle">{tick:+.2f}</text>'.replace("+0.00", "0"))
    parts.append(f'<text x="{(left + right) / 2:.1f}" y="{height - 1}" font-size="11" text-anchor="middle" fill="#57606a">candidate minus base (worse ← → better; lower-is-better metrics the other way); dashed: the gate limit</text>')
    for row, (name, m) in enumerate(metrics):
        d = m.difference
        y = 8 + ROW_H * row + ROW_H / 2
        colour = COLOURS.get(m.verdict.value, COLOURS["no difference shown"])
        parts.append(f'<text x="{left - 8}" y="{y + 4:.1f}" font-size="12" text-anchor="end">{html_text(name, 28)}</text>')
        if d.ci95 is not None:
            low, high = d.ci95
            parts.append(f'<line x1="{x(low):.1f}" y1="{y:.1f}" x2="{x(high):.1f}" y2="{y:.1f}" stroke="{colour}" stroke-width="3"><title>{html_text(name)}: 95% interval {difference_interval(d.ci95, d.decimals)}</title></line>')
            parts += [f'<line x1="{x(v):.1f}" y1="{y - 6:.1f}" x2="{x(v):.1f}" y2="{y + 6:.1f}" stroke="{colour}" stroke-width="2"/>' for v in (low, high)]
        if d.mean is not None:
            parts.append(f'<circle cx="{x(d.mean):.1f}" cy="{y:.1f}" r="5" fill="{colour}"><title>{html_text(name)}: {signed(d.mean, d.decimals)} ({html_text(m.verdict.value)})</title></circle>')
        limit = _gate_limit(m)
        if limit is not None:
            parts.append(
                f'<line x1="{x(limit):.1f}" y1="{y - 11:.1f}" x2="{x(limit):.1f}" y2="{y + 11:.1f}" stroke="{GATE_COLOUR}" stroke-width="2" stroke-dasharray="3 2">'
                f"<title>{html_text(name)}: --max-drop {number(m.gate.max_drop) if m.gate else ''}</title></line>"
            )
        parts.append(f'<text x="{right + 10}" y="{y + 4:.1f}" font-size="12" fill="{colour}">{html_text(written[name])}</text>')
    return (
        f'<svg width="{width}" height="{height}" viewBox="0 0 {width} {height}" role="img" '
        f'aria-label="each metric\'s difference with its 95% interval">{"".join(parts)}</svg>'
    )


def scatter_svg(m: MetricComparison) -> str:
    """Base (across) against candidate (up) per sample, over [0, 1], with the diagonal: a point
    below it went down. Equal pairs are one point, larger by how many samples share it."""
    digits = 3
    points = Counter((round(p.base, digits), round(p.candidate, digits)) for p in m.pairs)
    if len(points) > MAX_POINTS:
        digits = 2
        points = Counter((round(p.base, digits), round(p.candidate, digits)) for p in m.pairs)

    span = SCATTER - SCATTER_PAD - 2 * INSET - 6

    def at(base: float, candidate: float) -> tuple[float, float]:
        return SCATTER_PAD + INSET + base * span, SCATTER - SCATTER_PAD - INSET - candidate * span

    (x0, y0), (x1, y1) = at(0, 0), at(1, 1)
    parts = [
        f'<rect x="{x0 - INSET}" y="{y1 - INSET}" width="{x1 - x0 + 2 * INSET:.1f}" height="{y0 - y1 + 2 * INSET:.1f}" fill="none" stroke="#d0d7de"/>',
        f'<line x1="{x0}" y1="{y0}" x2="{x1:.1f}" y2="{y1:.1f}" stroke="#8c959f" stroke-dasharray="4 3"/>',
        f'<text x="{x0}" y="{y0 + INSET + 13}" font-size="10" text-anchor="middle">0</text><text x="{x1:.1f}" y="{y0 + INSET + 13}" font-size="10" text-anchor="middle">1</text>',
        f'<text x="{x0 - INSET - 4}" y="{y1 + 4:.1f}" font-size="10" text-anchor="end">1</text><text x="{x0 - INSET - 4}" y="{y0 + 4:.1f}" font-size="10" text-anchor="end">0</text>',
        f'<text x="{(x0 + x1) / 2:.1f}" y="{y0 + INSET + 26}" font-size="11" text-anchor="middle">base</text>',
        f'<text x="12" y="{(y0 + y1) / 2:.1f}" font-size="11" text-anchor="middle" transform="rotate(-90 12 {(y0 + y1) / 2:.1f})">candidate</text>',
    ]
    for (base, candidate), count in sorted(points.items(), key=lambda item: -item[1]):
        worse = candidate > base if m.lower_is_better else candidate < base
        colour = COLOURS["no difference shown"] if base == candidate else COLOURS["worse"] if worse else COLOURS["better"]
        cx, cy = at(base, candidate)
        radius = min(3 + 1.6 * math.sqrt(count - 1), 14)
        parts.append(
            f'<circle cx="{cx:.1f}" cy="{cy:.1f}" r="{radius:.1f}" fill="{colour}" fill-opacity="0.55" stroke="{colour}">'
            f"<title>base {base:.{digits}f}, candidate {candidate:.{digits}f}: {count} sample{'s' if count > 1 else ''}</title></circle>"
        )
    return f'<svg width="{SCATTER}" height="{SCATTER}" viewBox="0 0 {SCATTER} {SCATTER}" role="img" aria-label="{html_text(m.name)}: base against candidate per sample">{"".join(parts)}</svg>'


def _gates(out: IO[str], comparison: Comparison) -> None:
    """The gates as read (from the command line or the config file), each one's outcome."""
    if not comparison.gated:
        return
    outcome = "refused" if comparison.gate_refusal else "met" if comparison.gates_hold else "NOT met"
    css = "fail" if outcome != "met" else "better"
    out.write(f'<h2>Gates: <span class="{css}">{outcome}</span></h2>\n')
    if comparison.gate_refusal:
        out.write(f"<p>{html_text(comparison.gate_refusal, 2000)}</p>\n")
    rows = [(name, m) for name, m in comparison.metrics.items() if m.gate is not None]
    if rows:
        out.write("<table><thead><tr><th>metric</th><th>may cost at most</th><th>read on</th><th>value read</th><th>outcome</th></tr></thead><tbody>\n")
        for name, m in rows:
            gate = m.gate
            assert gate is not None  # the rows hold gated metrics only
            verdict = "met" if gate.ok else "NOT met"
            out.write(
                f"<tr><td>{html_text(name)}</td><td class=num>{number(gate.max_drop)}</td><td>{html_text(gate.on)}</td><td class=num>{signed(gate.value)}</td>"
                f'<td class="{"better" if gate.ok else "fail"}" title="{html_text(gate_words(name, gate, m.lower_is_better), 1000)}">{verdict}{html_text(f" ({gate.reason})" if gate.reason else "", 500)}</td></tr>\n'
            )
        out.write("</tbody></table>\n")


def _pair_rows(comparison: Comparison) -> tuple[list[tuple[str, MetricComparison, PairedScore]], int]:
    """Every pair, per metric in the comparison's order, the worst change first (a rise for a
    lower-is-better metric); past MAX_PAIR_ROWS the largest changes are kept. And how many were left out."""
    rows = []
    for name, m in comparison.metrics.items():
        turn = -1.0 if m.lower_is_better else 1.0
        rows += [(name, m, p) for p in sorted(m.pairs, key=lambda p: (turn * (p.candidate - p.base), p.base_line))]
    if len(rows) <= MAX_PAIR_ROWS:
        return rows, 0
    order = {id(row): index for index, row in enumerate(rows)}
    kept = sorted(rows, key=lambda row: -abs(row[2].candidate - row[2].base))[:MAX_PAIR_ROWS]
    return sorted(kept, key=lambda row: order[id(row)]), len(rows) - MAX_PAIR_ROWS


def _pairs(out: IO[str], comparison: Comparison) -> None:
    rows, left_out = _pair_rows(comparison)
    moved = sum(1 for _, _, p in rows if p.candidate != p.base)
    out.write(f"<h2>Every pair ({len(rows)} rows, {moved} moved)</h2>\n")
    if left_out:
        out.write(f"<p>{left_out} pairs with the smallest changes (most of them level) are left out of this table; every pair is in the two results files.</p>\n")
    out.write("<p>Per metric, the worst change first. With script, click a column to sort.</p>\n")
    options = "".join(f'<option value="{html_text(name)}">{html_text(name)}</option>' for name in comparison.metrics)
    out.write(
        '<p id=controls class=controls hidden><label><input type=checkbox id=only-moved> only the samples that moved</label>'
        f'<label>metric <select id=metric><option value="">all</option>{options}</select></label> <span id=shown>{len(rows)}</span> shown</p>\n'
    )
    out.write("<table id=pairs><thead><tr><th>metric</th><th>id</th><th>line</th><th>base</th><th>candidate</th><th>difference</th></tr></thead><tbody>\n")
    for name, m, p in rows:
        change = p.candidate - p.base
        worse = change > 0 if m.lower_is_better else change < 0
        css = "level" if change == 0 else "fail" if worse else "better"
        out.write(
            f'<tr class="{css}" data-metric="{html_text(name)}" data-moved="{int(change != 0)}"><td data-sort="{html_text(name)}">{html_text(name)}</td>'
            f'<td class=text data-sort="{html_text(p.id)}">{html_text(p.id)}</td><td class=num data-sort="{p.base_line}">{p.base_line}</td>'
            f'<td class=num data-sort="{p.base:.6f}">{number(p.base)}</td><td class=num data-sort="{p.candidate:.6f}">{number(p.candidate)}</td>'
            f'<td class="num {css}" data-sort="{change:.6f}">{signed(change)}</td></tr>\n'
        )
    out.write("</tbody></table>\n")


def _movers(out: IO[str], name: str, label: str, movers: Sequence[Mover]) -> None:
    out.write(
        f"<details><summary>{html_text(name)}: {label} ({len(movers)})</summary>"
        "<table><thead><tr><th>id</th><th>line</th><th>base</th><th>candidate</th><th>what changed</th></tr></thead><tbody>\n"
    )
    for mover in movers:
        changes = "".join(f"<li>{html_text(change.text, 1000)}</li>" for change in mover.changes) or "<li>no change recorded in the details</li>"
        out.write(
            f"<tr><td class=text>{html_text(mover.id)}</td><td class=num>{mover.base_line}</td><td class=num>{number(mover.base)}</td>"
            f"<td class=num>{number(mover.candidate)}</td><td class=text><ul>{changes}</ul></td></tr>\n"
        )
    out.write("</tbody></table></details>\n")


def _paired_table(out: IO[str], comparison: Comparison) -> None:
    out.write(
        "<table><thead><tr><th>metric</th><th>paired</th><th>base</th><th>candidate</th><th>difference</th><th>95% interval</th>"
        "<th>up</th><th>down</th><th>level</th><th>verdict</th><th>smallest change shown</th></tr></thead><tbody>\n"
    )
    for name, m in comparison.metrics.items():
        d = m.difference
        css = VERDICT_CLASS.get(m.verdict.value, "")
        out.write(
            f"<tr><td>{html_text(name)}</td><td class=num>{d.count}</td><td class=num>{number(d.base_mean)}</td><td class=num>{number(d.candidate_mean)}</td>"
            f"<td class=num>{signed(d.mean, d.decimals)}</td><td class=num>{difference_interval(d.ci95, d.decimals)}</td><td class=num>{d.up}</td><td class=num>{d.down}</td>"
            f"<td class=num>{d.level}</td><td class=\"{css}\">{html_text(m.verdict.value)}</td><td class=num>{'±' + number(d.smallest_shown, d.decimals) if d.smallest_shown else '-'}</td></tr>\n"
        )
    out.write("</tbody></table>\n<ul>")
    for name, m in comparison.metrics.items():
        reach = smallest_shown_words(m)
        out.write(f"<li>{html_text(name)}: {html_text(m.sentence() + (f'; {reach}' if reach else ''), 1000)}</li>")
        out.write("".join(f"<li>{html_text(note, 2000)}</li>" for note in metric_notes(m)))
    out.write("</ul>\n")


def write_comparison_html(out: IO[str], comparison: Comparison, title: str = "localeval comparison") -> None:
    """Write the comparison page."""
    out.write(f'<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><title>{html_text(title)}</title><style>{STYLE}{EXTRA_STYLE}</style></head><body>\n')
    out.write(f"<h1>{html_text(title)}</h1><p class=verdict>{html_text(verdict_line(comparison), 2000)}</p>\n")
    out.write(f"<p>Base <code>{html_text(comparison.base)}</code>, candidate <code>{html_text(comparison.candidate)}</code>.</p>\n")
    out.write("<ul>" + "".join(f"<li>{html_text(line.strip(), 2000)}</li>" for line in preamble(comparison)) + "</ul>\n")
    if comparison.metrics:
        out.write(f"<h2>Paired differences (candidate minus base)</h2>{forest_svg(comparison)}\n")
        _paired_table(out, comparison)
    _gates(out, comparison)
    if any(m.pairs for m in comparison.metrics.values()):
        out.write("<h2>Base against candidate, per sample</h2><p>A point below the diagonal went down; a larger point is several samples with the same two scores.</p><div class=plots>\n")
        for name, m in comparison.metrics.items():
            if m.pairs:
                out.write(f"<figure><figcaption>{html_text(name)} (n={len(m.pairs)}{', lower is better' if m.lower_is_better else ''})</figcaption>{scatter_svg(m)}</figure>\n")
        out.write("</div>\n")
    if comparison.unpaired:
        out.write(f"<h2>Not paired ({len(comparison.unpaired)})</h2><table><thead><tr><th>id</th><th>line</th><th>side</th><th>why</th></tr></thead><tbody>\n")
        for u in comparison.unpaired[:MAX_UNPAIRED_LISTED]:
            out.write(f"<tr><td class=text>{html_text(u.id)}</td><td class=num>{u.line}</td><td>{u.side}</td><td class=text>{html_text(u.why, 1000)}</td></tr>\n")
        out.write("</tbody></table>\n")
        if len(comparison.unpaired) > MAX_UNPAIRED_LISTED:
            out.write(f"<p>... and {len(comparison.unpaired) - MAX_UNPAIRED_LISTED} more: <code>localeval compare --json</code> lists them all.</p>\n")
    moved = mover_tables(comparison)
    if moved:
        out.write("<h2>What moved</h2><p>The samples that moved most, per metric and way, with what changed in them (open a list).</p>\n")
    for name, label, movers in moved:
        _movers(out, name, label, movers)
    if any(m.pairs for m in comparison.metrics.values()):
        _pairs(out, comparison)
        out.write(f"<script>{sort_script('pairs')}{CONTROLS_SCRIPT}</script>")  # the pairs table's: a page without it has no script
    out.write("</body></html>\n")
