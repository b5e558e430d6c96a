"""`localeval report`: one self-contained HTML page for a person looking at a failed gate.

No network, no external scripts or fonts: the histograms are inline SVG drawn here,
and the only script (sorting the table) is inline. Every value from the results is
escaped, so a context containing markup shows as text.
"""

from __future__ import annotations

import json
import math
from html import escape
from typing import Any, Mapping, Sequence

from localeval.explain import explain

BINS = 10
CHART_W, CHART_H, PAD = 320, 140, 24

STYLE = """
body{font:14px/1.4 system-ui,-apple-system,Segoe UI,Roboto,sans-serif;margin:24px;color:#1b1f24}
h1{font-size:20px}h2{font-size:16px;margin-top:28px}
table{border-collapse:collapse}th,td{border:1px solid #d0d7de;padding:4px 8px;text-align:left;vertical-align:top}
th{background:#f6f8fa}th.sortable{cursor:pointer}th.sortable:after{content:" \\2195";color:#8c959f}
td.num{text-align:right;font-variant-numeric:tabular-nums}.fail{color:#b3261e}.charts{display:flex;flex-wrap:wrap;gap:16px}
figure{margin:0;border:1px solid #d0d7de;padding:8px}figcaption{font-weight:600}pre{white-space:pre-wrap;max-width:900px;margin:4px 0}
details summary{cursor:pointer;color:#0969da}
"""

SCRIPT = """
(function(){
  var table=document.getElementById('samples');
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


def histogram_svg(values: Sequence[float], title: str) -> str:
    """Scores in [0, 1] as BINS bars; the last bin includes 1.0."""
    counts = [0] * BINS
    for value in values:
        counts[min(BINS - 1, int(value * BINS))] += 1
    top = max(counts) or 1
    bar_w = (CHART_W - 2 * PAD) / BINS
    bars = []
    for index, count in enumerate(counts):
        height = (CHART_H - 2 * PAD) * count / top
        x = PAD + index * bar_w
        y = CHART_H - PAD - height
        label = f"{index / BINS:.1f}-{(index + 1) / BINS:.1f}: {count}"
        bars.append(f'<rect x="{x:.1f}" y="{y:.1f}" width="{bar_w - 2:.1f}" height="{height:.1f}" fill="#0969da"><title>{label}</title></rect>')
        if count:
            bars.append(f'<text x="{x + bar_w / 2 - 1:.1f}" y="{y - 3:.1f}" font-size="10" text-anchor="middle">{count}</text>')
    axis = (
        f'<line x1="{PAD}" y1="{CHART_H - PAD}" x2="{CHART_W - PAD}" y2="{CHART_H - PAD}" stroke="#57606a"/>'
        f'<text x="{PAD}" y="{CHART_H - 8}" font-size="10">0</text>'
        f'<text x="{CHART_W / 2}" y="{CHART_H - 8}" font-size="10" text-anchor="middle">0.5</text>'
        f'<text x="{CHART_W - PAD}" y="{CHART_H - 8}" font-size="10" text-anchor="end">1</text>'
    )
    return (
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{CHART_W}" height="{CHART_H}" role="img" '
        f'aria-label="{escape(title)} score distribution">{axis}{"".join(bars)}</svg>'
    )


def _fmt(value: Any) -> str:
    return "-" if value is None else f"{value:.3f}" if isinstance(value, float) else escape(str(value))


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not (isinstance(value, float) and math.isnan(value))


def html_report(rows: Sequence[Mapping[str, Any]], summary: Mapping[str, Any], title: str = "localeval report") -> str:
    metrics = list(summary["metrics"])
    out = [f"<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\"><title>{escape(title)}</title><style>{STYLE}</style></head><body>"]
    out.append(f"<h1>{escape(title)}</h1><p>{summary['samples']} samples, {summary['input_errors']} unreadable lines.</p>")
    out.append("<h2>Summary</h2><table><thead><tr><th>metric</th><th>mean</th><th>median</th><th>scored</th><th>NaN</th><th>errors</th></tr></thead><tbody>")
    for name in metrics:
        m = summary["metrics"][name]
        out.append(f"<tr><td>{escape(name)}</td><td class=num>{_fmt(m['mean'])}</td><td class=num>{_fmt(m['median'])}</td>"
                   f"<td class=num>{m['scored']}</td><td class=num>{m['nan']}</td><td class=num>{m['errors']}</td></tr>")
    out.append("</tbody></table><h2>Score distributions</h2><div class=charts>")
    for name in metrics:
        values = [r["scores"][name] for r in rows if _is_number((r.get("scores") or {}).get(name))]
        out.append(f"<figure><figcaption>{escape(name)} (n={len(values)})</figcaption>{histogram_svg(values, name)}</figure>")
    out.append("</div><h2>Samples</h2><p>Click a column to sort; open a row's details for the judge's selections, verdicts and reasons.</p>")
    header = "".join(f"<th class=sortable>{escape(h)}</th>" for h in ["id", "line", *metrics])
    out.append(f"<table id=samples><thead><tr>{header}<th>details</th></tr></thead><tbody>")
    for row in rows:
        cells = [f"<td data-sort=\"{escape(str(row.get('id')))}\">{escape(str(row.get('id')))}</td>", f"<td class=num data-sort=\"{row.get('line')}\">{row.get('line')}</td>"]
        for name in metrics:
            value = (row.get("scores") or {}).get(name)
            sort_key = f"{value:.6f}" if _is_number(value) else "-1"
            css = " fail" if name in (row.get("errors") or {}) else ""
            cells.append(f"<td class=\"num{css}\" data-sort=\"{sort_key}\" title=\"{escape(explain(row, name))}\">{_fmt(value)}</td>")
        why = "".join(f"<li><b>{escape(n)}</b>: {escape(explain(row, n))}</li>" for n in metrics)
        raw = escape(json.dumps({"details": row.get("details"), "errors": row.get("errors"), "extra": row.get("extra")}, indent=1, ensure_ascii=False))
        cells.append(f"<td data-sort=\"\"><details><summary>show</summary><ul>{why}</ul><pre>{raw}</pre></details></td>")
        out.append(f"<tr>{''.join(cells)}</tr>")
    out.append(f"</tbody></table><script>{SCRIPT}</script></body></html>")
    return "\n".join(out) + "\n"
