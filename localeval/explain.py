"""One line that says why a sample got its score for a metric, for JUnit, Markdown and HTML.

A failing gate is only useful if the reader sees why without opening the results
file: the error, the statements the judge could not attribute (with its reasons),
the references that were not found, the ids that were missing.
"""

from __future__ import annotations

from typing import Any, Mapping

MAX_ITEMS = 3
MAX_CHARS = 160


def _short(text: str) -> str:
    return text if len(text) <= MAX_CHARS else text[: MAX_CHARS - 3] + "..."


def explain(row: Mapping[str, Any], metric: str) -> str:
    errors = row.get("errors") or {}
    if "input" in errors:
        return _short(errors["input"])
    if metric in errors:
        return _short(errors[metric])
    details = (row.get("details") or {}).get(metric) or {}
    if metric == "context_recall":
        missed = [s for s in details.get("statements", []) if not s.get("attributed")]
        if not details.get("statements"):
            return "the reference has no statements"
        parts = [f"'{_short(s['statement'])}'" + (f" ({_short(s['reason'])})" if s.get("reason") else "") for s in missed[:MAX_ITEMS]]
        more = f" and {len(missed) - MAX_ITEMS} more" if len(missed) > MAX_ITEMS else ""
        return f"{len(missed)} of {len(details['statements'])} statements not attributed: " + "; ".join(parts) + more if missed else "all statements attributed"
    if metric == "context_relevance":
        return f"{details.get('n_selected', 0)} of {details.get('n_sentences', 0)} context sentences required" + (
            " (insufficient information)" if details.get("n_sentences") and not details.get("n_selected") else ""
        )
    if metric == "nonllm_context_recall":
        references = details.get("references", [])
        missed = [(i, r) for i, r in enumerate(references) if not r.get("recalled")]
        if not references:
            return "no reference contexts"
        listed = ", ".join(f"#{i} (best similarity {r['similarity']:.2f})" for i, r in missed[:MAX_ITEMS])
        return f"{len(missed)} of {len(references)} reference contexts not recalled" + (f": {listed}" if listed else "")
    if metric == "id_context_recall":
        missing = details.get("missing", [])
        found = details.get("found", [])
        if not missing and not found:
            return "no reference ids"
        return f"missing ids: {', '.join(missing[:10])}" if missing else "all reference ids retrieved"
    return ""
