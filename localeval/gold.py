"""Human scores for some scored samples, from a labels file's rows that carry a sample's `id`.

The file is `localeval calibrate`'s (localeval.labels). Attribution rows (`statement`,
`label`) give context_recall the share of the sample's labelled statements that are
attributed; a relevance row (`required`) gives context_relevance the share of its context's
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
from localeval.labels import context_sentences, read_labels

RECALL = "context_recall"
RELEVANCE = "context_relevance"


def _relevance_share(row: dict[str, Any], name: str, number: int) -> float:
    sentences = context_sentences(row)
    if row["required"] and not sentences:
        raise InputError(name, number, "retrieved_contexts", "has no sentence, but 'required' names some")
    return min(1.0, len(row["required"]) / len(sentences)) if sentences else 0.0


def read_gold(path: str) -> dict[str, dict[str, float]]:
    """Gold scores by sample id (as a string: results compare ids as strings) and metric name."""
    name = input_name(path)
    attributed: dict[str, list[int]] = defaultdict(list)
    gold: dict[str, dict[str, float]] = defaultdict(dict)
    for number, row in read_labels(path):
        if "id" not in row:
            continue
        sample = str(row["id"])
        if "required" in row:
            if RELEVANCE in gold[sample]:
                raise InputError(name, number, "id", f"sample {sample!r} has a relevance row already")
            gold[sample][RELEVANCE] = _relevance_share(row, name, number)
        else:
            attributed[sample].append(int(row["label"]))
    for sample, labels in attributed.items():
        gold[sample][RECALL] = sum(labels) / len(labels)
    return {sample: dict(scores) for sample, scores in gold.items() if scores}
