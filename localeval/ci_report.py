"""Reports for CI: JUnit XML (one test case per sample and metric) and a Markdown job summary.

Pure functions from results-file rows and the summary to a string.
"""

from __future__ import annotations

import math
from typing import Any, Iterable, Mapping
from xml.sax.saxutils import escape, quoteattr

from localeval.explain import explain

Row = Mapping[str, Any]


def verdict(row: Row, metric: str, threshold: float | None) -> str:
    """'error', 'nan', 'pass' or 'fail' for one sample and metric."""
    if metric in (row.get("errors") or {}) or "input" in (row.get("errors") or {}):
        return "error"
    value = (row.get("scores") or {}).get(metric)
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "nan"
    if threshold is None:
        return "pass"
    return "pass" if value >= threshold else "fail"


def _score_text(row: Row, metric: str) -> str:
    value = (row.get("scores") or {}).get(metric)
    return "null" if value is None else f"{value:.3f}"


def junit_xml(rows: Iterable[Row], summary: Mapping[str, Any]) -> str:
    """One <testcase> per sample and metric; a failure carries score, threshold and reason."""
    metrics = summary["metrics"]
    suites = {name: [] for name in metrics}  # type: dict[str, list[str]]
    counts = {name: {"tests": 0, "failures": 0, "errors": 0, "skipped": 0} for name in metrics}
    for row in rows:
        for name, figures in metrics.items():
            threshold = figures.get("threshold")
            state = verdict(row, name, threshold)
            reason = explain(row, name)
            case_name = quoteattr(f"{row.get('id')} (line {row.get('line')})")
            counts[name]["tests"] += 1
            body = ""
            if state == "fail":
                counts[name]["failures"] += 1
                message = f"score {_score_text(row, name)} < threshold {threshold}: {reason}"
                body = f"<failure message={quoteattr(message)} type=\"threshold\">{escape(message)}</failure>"
            elif state == "error":
                if threshold is not None:
                    counts[name]["failures"] += 1
                    body = f"<failure message={quoteattr('not scored: ' + reason)} type=\"error\">{escape(reason)}</failure>"
                else:
                    counts[name]["errors"] += 1
                    body = f"<error message={quoteattr(reason)} type=\"error\">{escape(reason)}</error>"
            elif state == "nan":
                counts[name]["skipped"] += 1
                body = f"<skipped message={quoteattr('score undefined (NaN): ' + reason)}/>"
            output = f"<system-out>{escape(f'score {_score_text(row, name)}: {reason}')}</system-out>"
            suites[name].append(f'    <testcase classname="localeval.{name}" name={case_name}>{body}{output}</testcase>')
    parts = ['<?xml version="1.0" encoding="UTF-8"?>', "<testsuites name=\"localeval\">"]
    for name, cases in suites.items():
        c = counts[name]
        parts.append(f'  <testsuite name="{name}" tests="{c["tests"]}" failures="{c["failures"]}" errors="{c["errors"]}" skipped="{c["skipped"]}">')
        parts.extend(cases)
        parts.append("  </testsuite>")
    parts.append("</testsuites>")
    return "\n".join(parts) + "\n"


def _md(text: Any) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")


def _fmt(value: Any) -> str:
    return "-" if value is None else f"{value:.3f}" if isinstance(value, float) else str(value)


def markdown(rows: Iterable[Row], summary: Mapping[str, Any], max_failures: int = 50) -> str:
    """A summary table and the failing samples with their reasons (a CI job summary)."""
    metrics = summary["metrics"]
    status = "passed" if summary["thresholds_met"] else "FAILED"
    lines = [f"## localeval: {status}", "", f"{summary['samples']} samples, {summary['input_errors']} unreadable lines.", ""]
    lines += ["| metric | mean | median | scored | NaN | errors | threshold | pass rate | min mean |", "|---|---|---|---|---|---|---|---|---|"]
    for name, m in metrics.items():
        min_mean = f"{m['min_mean']} ({'ok' if m['mean_ok'] else 'not met'})" if "min_mean" in m else "-"
        lines.append(
            f"| {name} | {_fmt(m['mean'])} | {_fmt(m['median'])} | {m['scored']} | {m['nan']} | {m['errors']} | "
            f"{_fmt(m.get('threshold'))} | {_fmt(m.get('pass_rate'))} | {min_mean} |"
        )
    failing = []
    for row in rows:
        for name, m in metrics.items():
            if "threshold" in m and verdict(row, name, m["threshold"]) in ("fail", "error"):
                failing.append(f"| {_md(row.get('id'))} | {row.get('line')} | {name} | {_score_text(row, name)} | {m['threshold']} | {_md(explain(row, name))} |")
    if failing:
        lines += ["", f"### Failing samples ({len(failing)})", "", "| id | line | metric | score | threshold | why |", "|---|---|---|---|---|---|"]
        lines += failing[:max_failures]
        if len(failing) > max_failures:
            lines.append(f"\n... and {len(failing) - max_failures} more; see the results file.")
    return "\n".join(lines) + "\n"
