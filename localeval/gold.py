"""Human scores for some scored samples, from a labels file's rows that carry a sample's `id`.

The file is `localeval calibrate`'s (localeval.labels). Attribution rows (`statement`,
`label`) give context_recall (or, with `"metric": "faithfulness"`, faithfulness) the share of
the sample's labelled statements that are attributed; a usefulness row (`useful`) gives
context_precision the average precision of its labels; a relevance row (`required`) gives context_relevance the share of its context's
sentences that are required (pysbd sentences, the metric's default unit; [] is 0,
"insufficient information"). Rows without an `id` are calibration rows only. The summary sets
these beside the metric's own scores for a prediction-powered estimate
(localeval.summary.PredictionPowered).
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any

from localeval.errors import InputError
from localeval.io import input_name
from localeval.labels import STATEMENT_METRICS, context_sentences, read_labels
from localeval.metrics.precision import average_precision

RELEVANCE = "context_relevance"
PRECISION = "context_precision"


def _relevance_share(row: dict[str, Any], name: str, number: int) -> float:
    sentences = context_sentences(row)
    if row["required"] and not sentences:
        raise InputError(name, number, "retrieved_contexts", "has no sentence, but 'required' names some")
    return min(1.0, len(row["required"]) / len(sentences)) if sentences else 0.0


def read_gold(path: str) -> dict[str, dict[str, float]]:
    """Gold scores by sample id (as a string: results compare ids as strings) and metric name."""
    name = input_name(path)
    attributed: dict[tuple[str, str], list[int]] = defaultdict(list)
    gold: dict[str, dict[str, float]] = defaultdict(dict)
    for number, row in read_labels(path):
        if "id" not in row:
            continue
        sample = str(row["id"])
        if "required" in row or "useful" in row:
            metric, kind = (RELEVANCE, "relevance") if "required" in row else (PRECISION, "usefulness")
            if metric in gold[sample]:
                raise InputError(name, number, "id", f"sample {sample!r} has a {kind} row already")
            gold[sample][metric] = _relevance_share(row, name, number) if "required" in row else average_precision([bool(v) for v in row["useful"]])
        else:
            attributed[(sample, row.get("metric", STATEMENT_METRICS[0]))].append(int(row["label"]))
    for (sample, metric), labels in attributed.items():
        gold[sample][metric] = sum(labels) / len(labels)
    return {sample: dict(scores) for sample, scores in gold.items() if scores}
