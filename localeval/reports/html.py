"""`localeval report`: one self-contained HTML page for a person looking at a failed gate.

No network, no external scripts or fonts: the histograms are inline SVG drawn here (the
bars, the mean and its interval), and the only script (sorting the table) is inline. Every value is escaped where it
is written (`localeval.reports.escaping.html_text`), including the ones that "are numbers":
a results file is untrusted input. The table is bounded: past MAX_TABLE_ROWS
samples it shows the lowest-scoring ones (errors first), and says so.
"""

from __future__ import annotations

import heapq
import json
from collections.abc import Iterable, Mapping, Sequence
from typing import IO

from localeval.data.results import ResultRow
from localeval.metrics import lower_is_better
from localeval.reports import explain, interval, noise_notes, number, uncertainty_notes
from localeval.reports.escaping import html_text
from localeval.stats.figures import SummaryFigures

BINS = 10
CHART_W, CHART_H, PAD = 320, 160, 24
BAR_TOP = 14  # room above the tallest bar for its count and the mean's label
MAX_TABLE_ROWS = 2_000
MAX_DETAIL_CHARS = 20_000  # of a row's raw details shown in its <pre>

STYLE = """
body{font:14px/1.4 system-ui,-apple-system,Segoe UI,Roboto,sans-serif;margin:24px;color:#1b1f24}
h1{font-size:20px}h2{font-size:16px;margin-top:28px}
table{border-collapse:collapse;table-layout:auto}th,td{border:1px solid #d0d7de;padding:4px 8px;text-align:left;vertical-align:top}
td{max-width:40em;overflow-wrap:break-word;unicode-bidi:isolate}td.text{overflow-wrap:anywhere;min-width:8ch}td.num{white-space:nowrap}
th{background:#f6f8fa}th.sortable{cursor:pointer}th.sortable:after{content:" \\2195";color:#8c959f}
td.num{text-align:right;font-variant-numeric:tabular-nums}.fail{color:#b3261e}.charts{display:flex;flex-wrap:wrap;gap:16px}
figure{margin:0;border:1px solid #d0d7de;padding:8px}figcaption{font-weight:600}pre{white-space:pre-wrap;max-width:900px;margin:4px 0}
details summary{cursor:pointer;color:#0969da}
"""

_SORT_SCRIPT = """
(function(){
  var table=document.getElementById('TABLE_ID');
  function key(cell){var v=cell.getAttribute('data-sort');var n=parseFloat(v);return isNaN(n)?v:n;}
  function sortBy(col,dir){
    var body=table.tBodies[0];var rows=Array.prototype.slice.call(body.rows);
    rows.sort(function(a,b){var x=key(a.cells[col]),y=key(b.cells[col]);
      if(typeof x!==typeof y){x=String(x);y=String(y);}return (x<y?-1:x>y?1:0)*dir;});
    rows.forEach(function(r){body.appendChild(r);});
    table.setAttribute('data-sorted',col+':'+(dir>0?'asc':'desc'));
  }
  Array.prototype.forEach.call(table.tHead.rows[0].cells,function(th,i){
    th.addEventListener('click',function(){var d=th.getAttribute('data-dir')==='asc'?-1:1;
      th.setAttribute('data-dir',d>0?'asc':'desc');sortBy(i,d);});
  });
  var m=/sort=(\\d+)(?:&dir=(asc|desc))?/.exec(location.hash);
  if(m){sortBy(parseInt(m[1],10),m[2]==='desc'?-1:1);}
})();
"""


def sort_script(table_id: str) -> str:
    """The inline script that sorts the table `table_id` by a column when its header is clicked
    (each cell's data-sort, numbers as numbers; a second click reverses) and by `#sort=N&dir=D` in
    the page's address: one sorting for the report page and the comparison page."""
    return _SORT_SCRIPT.replace("TABLE_ID", table_id)



def histogram_svg(counts: Sequence[int], title: str, mean: float | None = None, ci95: tuple[float, float] | None = None) -> str:
    """Counts of BINS equal score bins over [0, 1] as bars, each bin's edge ticked, with the mean
    (a dashed line) over its 95% interval (a band) when given: the shape is seen, not read."""
    top = max(counts) or 1
    span = CHART_W - 2 * PAD
    bar_w = span / len(counts)

    def x(value: float) -> float:
        return PAD + value * span

    parts = []
    if ci95 is not None:
        parts.append(f'<rect x="{x(ci95[0]):.1f}" y="{PAD - 10}" width="{max(x(ci95[1]) - x(ci95[0]), 1):.1f}" height="{CHART_H - 2 * PAD + 10}" fill="#fff8c5"><title>95% interval {ci95[0]:.3f}-{ci95[1]:.3f}</title></rect>')
    for index, count in enumerate(counts):
        height = (CHART_H - 2 * PAD - BAR_TOP) * count / top
        y = CHART_H - PAD - height
        label = f"{index / len(counts):.1f}-{(index + 1) / len(counts):.1f}: {count}"
        parts.append(f'<rect x="{x(index / len(counts)):.1f}" y="{y:.1f}" width="{bar_w - 2:.1f}" height="{height:.1f}" fill="#0969da"><title>{label}</title></rect>')
        if count:
            parts.append(f'<text x="{x(index / len(counts)) + bar_w / 2 - 1:.1f}" y="{y - 3:.1f}" font-size="10" text-anchor="middle">{count}</text>')
    parts.append(f'<line x1="{PAD}" y1="{CHART_H - PAD}" x2="{CHART_W - PAD}" y2="{CHART_H - PAD}" stroke="#57606a"/>')
    parts += [f'<line x1="{x(i / len(counts)):.1f}" y1="{CHART_H - PAD}" x2="{x(i / len(counts)):.1f}" y2="{CHART_H - PAD + 4}" stroke="#57606a"/>' for i in range(len(counts) + 1)]
    parts.append(
        f'<text x="{PAD}" y="{CHART_H - 8}" font-size="10" text-anchor="middle">0</text>'
        f'<text x="{CHART_W / 2}" y="{CHART_H - 8}" font-size="10" text-anchor="middle">0.5</text>'
        f'<text x="{CHART_W - PAD}" y="{CHART_H - 8}" font-size="10" text-anchor="middle">1</text>'
    )
    if mean is not None and mean == mean:
        anchor = "end" if mean > 0.5 else "start"
        shift = -4 if mean > 0.5 else 4
        parts.append(
            f'<line x1="{x(mean):.1f}" y1="{PAD - 12}" x2="{x(mean):.1f}" y2="{CHART_H - PAD}" stroke="#bc4c00" stroke-width="2" stroke-dasharray="4 3"/>'
            f'<text x="{x(mean) + shift:.1f}" y="{PAD - 4}" font-size="10" fill="#bc4c00" text-anchor="{anchor}">mean {mean:.3f}</text>'
        )
    return f'<svg width="{CHART_W}" height="{CHART_H}" role="img" aria-label="{html_text(title)} score distribution">{"".join(parts)}</svg>'


def _badness(row: ResultRow, metrics: Sequence[str], lower: frozenset[str] = frozenset()) -> float:
    """Smaller is worse: an error or an unreadable line first, then the lowest score (of a
    metric in `lower`, lower-is-better, 1 minus the score: its high scores are the bad ones)."""
    if row.unreadable or any(name in row.errors for name in metrics):
        return -1.0
    values = [1.0 - v if name in lower else v for name in metrics if (v := row.scores.get(name)) is not None and v == v]
    return min(values, default=2.0)


def worst_rows(rows: Iterable[ResultRow], metrics: Sequence[str], keep: int) -> tuple[list[ResultRow], int]:
    """At most `keep` rows, the worst ones (ties: earlier lines first), in input order; and how many there were."""
    lower = frozenset(name for name in metrics if lower_is_better(name))
    heap: list[tuple[float, int, ResultRow]] = []  # the kept rows; heap[0] is the best of them
    total = 0
    for row in rows:
        total += 1
        item = (-_badness(row, metrics, lower), -total, row)  # `total` breaks ties: rows never compare
        if len(heap) < keep:
            heapq.heappush(heap, item)
        elif item > heap[0]:
            heapq.heapreplace(heap, item)
    return [row for _, _, row in sorted(heap, key=lambda item: -item[1])], total


def _row_html(row: ResultRow, metrics: Sequence[str]) -> str:
    cells = [f'<td class=text data-sort="{html_text(row.id)}">{html_text(row.id)}</td>', f'<td class=num data-sort="{row.line}">{row.line}</td>']
    for name in metrics:
        value = row.scores.get(name)
        known = value is not None and value == value
        sort_key = f"{value:.6f}" if known else "-1"
        css = " fail" if name in row.errors or row.unreadable else ""
        cells.append(f'<td class="num{css}" data-sort="{sort_key}" title="{html_text(explain(row, name), 500)}">{html_text(number(value), None)}</td>')
    why = "".join(f"<li><b>{html_text(n)}</b>: {html_text(explain(row, n), 1000)}</li>" for n in metrics)
    raw = json.dumps({"details": row.details, "errors": row.errors, "extra": row.extra}, indent=1, ensure_ascii=False)
    cells.append(f'<td class=text data-sort=""><details><summary>show</summary><ul>{why}</ul><pre>{html_text(raw, MAX_DETAIL_CHARS)}</pre></details></td>')
    return f"<tr>{''.join(cells)}</tr>"


def write_html(
    out: IO[str], shown: Sequence[ResultRow], total: int, summary: SummaryFigures, histograms: Mapping[str, Sequence[int]], title: str = "localeval report"
) -> None:
    """Write the page: `summary` and `histograms` (BINS counts per metric) describe all
    `total` rows, `shown` (from `worst_rows`) are the ones in the table."""
    metrics = list(summary.metrics)
    out.write(f'<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><title>{html_text(title)}</title><style>{STYLE}</style></head><body>\n')
    out.write(f"<h1>{html_text(title)}</h1><p>{summary.samples} samples, {summary.input_errors} unreadable lines.</p>\n")
    out.write("<h2>Summary</h2><table><thead><tr><th>metric</th><th>mean</th><th>std err</th><th>95% interval</th><th>median</th><th>scored</th><th>NaN</th><th>errors</th></tr></thead><tbody>\n")
    for name in metrics:
        m = summary.metrics[name]
        out.write(
            f"<tr><td>{html_text(name)}</td><td class=num>{number(m.mean)}</td><td class=num>{number(m.stderr)}</td><td class=num>{interval(m.ci95)}</td><td class=num>{number(m.median)}</td>"
            f"<td class=num>{m.scored}</td><td class=num>{m.nan}</td><td class=num>{m.errors}</td></tr>\n"
        )
    out.write("</tbody></table>\n")
    for note in noise_notes(summary) + uncertainty_notes(summary):
        out.write(f"<p>{html_text(note)}</p>\n")
    out.write("<h2>Score distributions</h2><div class=charts>\n")
    for name in metrics:
        counts = histograms[name]
        m = summary.metrics[name]
        out.write(f"<figure><figcaption>{html_text(name)} (n={sum(counts)})</figcaption>{histogram_svg(counts, name, m.mean, m.ci95)}</figure>\n")
    out.write("</div><h2>Samples</h2>")
    if len(shown) < total:
        turned = [name for name in metrics if lower_is_better(name)]
        highest = f"; {', '.join(turned)}: the highest, lower being better" if turned else ""
        out.write(f"<p>Showing the {len(shown)} lowest-scoring of {total} samples (errors first{html_text(highest)}); every sample is in the results file.</p>")
    out.write("<p>Click a column to sort; open a row's details for the judge's selections, verdicts and reasons.</p>\n")
    header = "".join(f"<th class=sortable>{html_text(h)}</th>" for h in ["id", "line", *metrics])
    out.write(f"<table id=samples><thead><tr>{header}<th>details</th></tr></thead><tbody>\n")
    for row in shown:
        out.write(_row_html(row, metrics) + "\n")
    out.write(f"</tbody></table><script>{sort_script('samples')}</script></body></html>\n")
