"""Human scores for some scored samples, from a labels file's rows that carry a sample's `id`.

The file is `localeval calibrate`'s (localeval.labels). Attribution rows (`statement`,
`label`) give context_recall (or, with `"metric": "faithfulness"`, faithfulness) the share of
the sample's labelled statements that are attributed; a usefulness row (`useful`) gives
context_precision the average precision of its labels; a relevance row (`required`) gives
context_relevance the share of its context's units that are required, counted in the metric's
own units and language (its `unit` and `language` options: the human figure and the metric's
are on one scale), [] being 0, "insufficient information". A relevance row whose required
sentences are not in its contexts is left out by line, as `calibrate` leaves it out. Rows
without an `id` are calibration rows only. The summary joins each id to at most one scored
sample and sets these beside the metric's own scores for a prediction-powered estimate
(localeval.ppi).
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any

from localeval.errors import ConfigError, InputError
from localeval.files import file_sha256
from localeval.io import input_name
from localeval.labels import STATEMENT_METRICS, LeftOut, RequiredSentences, read_labels, required_sentences
from localeval.metrics.ranking import average_precision

RELEVANCE = "context_relevance"
PRECISION = "context_precision"


@dataclass(frozen=True)
class RelevanceUnits:
    """How context_relevance counts, so the human share is on the metric's scale."""

    unit: str = "sentence"
    language: str = "en"


UNITS = ("sentence", "line", "chunk")


def relevance_units(options: Any, where: str) -> RelevanceUnits:
    """The unit and language of context_relevance's options (the metric's own, or a results
    header's, which is untrusted: an unknown unit or language is refused, naming `where`)."""
    from localeval.text import check_language

    options = options if isinstance(options, dict) else {}
    unit, language = options.get("unit", "sentence"), options.get("language", "en")
    if unit not in UNITS:
        raise ConfigError(f"{where}: context_relevance's unit {unit!r} is none of {', '.join(UNITS)}")
    try:
        check_language(language if isinstance(language, str) else "")
    except ValueError as error:
        raise ConfigError(f"{where}: context_relevance's language: {error}") from None
    return RelevanceUnits(unit, language)


@dataclass
class Gold:
    """Human scores by sample id (a string: results compare ids as strings) and metric; the file
    they came from; how many rows named a sample; and the rows left out, by line."""

    scores: dict[str, dict[str, float]]
    path: str
    sha256: str | None
    rows_with_id: int
    left_out: list[str] = field(default_factory=list)


def _lines(context: str) -> list[str]:
    return [line.strip() for line in context.splitlines() if line.strip()]


def _relevance_share(row: dict[str, Any], labelled: RequiredSentences, units: RelevanceUnits) -> float:
    """Required units / units, in the metric's unit: a chunk (a retrieved context) is required
    when one of its sentences is; a line when it holds a required sentence or is part of one."""
    contexts: list[str] = row["retrieved_contexts"]
    if units.unit == "chunk":
        total = sum(1 for context in contexts if context.strip())
        required = len({labelled.contexts[i] for i in labelled.required})
    elif units.unit == "line":
        wanted = [labelled.sentences[i] for i in labelled.required]
        lines = [line for context in contexts for line in _lines(context)]
        total = len(lines)
        required = sum(1 for line in lines if any(line in sentence or sentence in line for sentence in wanted))
    else:
        total, required = len(labelled.sentences), len(labelled.required)
    return required / total if total else 0.0


def read_gold(path: str, relevance: RelevanceUnits | None = None) -> Gold:
    """Gold scores from the labels file at `path`; `relevance` is the context_relevance metric's
    unit and language (its defaults when it is not selected: its scores are then not used)."""
    units = relevance or RelevanceUnits()
    name = input_name(path)
    attributed: dict[tuple[str, str], list[int]] = defaultdict(list)
    gold: dict[str, dict[str, float]] = defaultdict(dict)
    left_out: list[str] = []
    with_id = 0
    for number, row in read_labels(path):
        if "id" not in row:
            continue
        with_id += 1
        sample = str(row["id"])
        if "required" in row:
            if RELEVANCE in gold[sample]:
                raise InputError(name, number, "id", f"sample {sample!r} has a relevance row already")
            try:
                labelled = required_sentences(row, name, number, units.language)
            except LeftOut as problem:
                left_out.append(str(problem))
                continue
            gold[sample][RELEVANCE] = _relevance_share(row, labelled, units)
        elif "useful" in row:
            if PRECISION in gold[sample]:
                raise InputError(name, number, "id", f"sample {sample!r} has a usefulness row already")
            gold[sample][PRECISION] = average_precision([bool(v) for v in row["useful"]])
        else:
            attributed[(sample, row.get("metric", STATEMENT_METRICS[0]))].append(int(row["label"]))
    for (sample, metric), labels in attributed.items():
        gold[sample][metric] = sum(labels) / len(labels)
    return Gold({sample: dict(scores) for sample, scores in gold.items() if scores}, path, file_sha256(path), with_id, left_out)
