"""A run whose every metric is one of the seven rank metrics, read line by line without the
per-sample pipeline.

Why: a retrieval run scores tens of thousands of rankings, and the rank figures take microseconds;
what cost the time was the pipeline every metric shares: pydantic validating each whole line into
a frozen Sample, and the checks a plugin's scores need. A line of the common shape (`common_sample`:
a JSON object with none but Sample's fields, each of its type, ids strings or integers) is read here with
json.loads and a few type checks, and its row is made by the same metric code from the same
ranking (`RankMetric.figure_of`), so it is the row the pipeline writes, byte for byte
(tests/test_rank_lines.py compares the two on lines of every shape). Any other line (a legacy name,
an unknown field, an id that is a float, anything invalid) goes through the pipeline
(`score_records`), so its row, and its error, are the pipeline's.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Container, Iterator, Sequence
from typing import Any

from localeval.data.jsonl import MAX_LINE_BYTES, input_lines, input_name, to_record
from localeval.data.results import ResultRow
from localeval.data.samples import GRADES_FIELD
from localeval.metrics import Metric
from localeval.metrics.rank_core import judge_ranking
from localeval.metrics.rank_metrics import RANK_METRICS, RankMetric, Reading
from localeval.run.runner import score_records

_INT64 = 1 << 63  # pydantic reads a JSON integer beyond 64 bits another way: such a line takes the pipeline
# A common line no longer than this cannot make a row longer than a results line may be (each byte
# of an id is written at most 6 bytes wide, an escape, in at most 25 places: the row's id, and in
# each of seven metrics' details the ranks, their numbers, missing and duplicates), so only a longer
# line's row is encoded to check (`ResultRow.writable`).
ROOMY_LINE_BYTES = MAX_LINE_BYTES // 256


def ranks_only(metrics: Sequence[Metric[Any]]) -> bool:
    """Whether every metric is one of localeval's own rank metrics (a subclass from another
    package is scored by the pipeline, which checks what it returns)."""
    return bool(metrics) and all(type(metric) in RANK_METRICS for metric in metrics)


def _own_id(value: Any) -> bool:
    return type(value) is str or type(value) is int and -_INT64 <= value < _INT64


def _text(value: Any) -> bool:
    return type(value) is str


def _texts(value: Any) -> bool:
    return type(value) is list and set(map(type, value)) <= {str}


def _ids(value: Any) -> bool:
    """Strings and 64-bit integers (a float, even 7.0, is read another way by the pipeline)."""
    if type(value) is not list:
        return False
    kinds = set(map(type, value))
    return kinds <= {str} or kinds <= {str, int} and all(-_INT64 <= item < _INT64 for item in value if type(item) is int)


def _grades(value: Any) -> bool:
    """Numbers (not true/false) of at least 0, below 2**63, finite (a sum that is not: the pipeline says which)."""
    return type(value) is list and set(map(type, value)) <= {int, float} and (not value or min(value) >= 0 and max(value) < _INT64 and math.isfinite(sum(value)))


# Each field of Sample, and what its value must be for the line to take this path (None aside).
FIELD_SHAPES: dict[str, Callable[[Any], bool]] = {
    "id": _own_id, "user_input": _text, "reference": _text, "response": _text,
    "retrieved_contexts": _texts, "reference_contexts": _texts,
    "retrieved_context_ids": _ids, "reference_context_ids": _ids, GRADES_FIELD: _grades,
}


def common_sample(raw: bytes) -> dict[str, Any] | None:
    """The line as a dict when it has the common shape a ranking has, and the pipeline would read
    it as the same sample: Sample's fields only (no legacy name, nothing passed through), texts
    strings, ids strings or 64-bit integers, grades finite numbers of at least 0 aligned with the
    reference ids, both id lists present. None for anything else."""
    if b"\\ud" in raw or b"\\uD" in raw:  # an escaped surrogate: json.loads takes a lone one, which pydantic refuses
        return None
    try:
        sample = json.loads(raw.decode("utf-8"))
    except (ValueError, RecursionError):  # invalid UTF-8 or JSON, said by the pipeline
        return None
    if type(sample) is not dict:
        return None
    for name, value in sample.items():
        shape = FIELD_SHAPES.get(name)
        if shape is None or value is not None and not shape(value):
            return None
    retrieved, reference, grades = sample.get("retrieved_context_ids"), sample.get("reference_context_ids"), sample.get(GRADES_FIELD)
    if retrieved is None or reference is None or grades is not None and len(grades) != len(reference):
        return None
    return sample


Figure = Callable[[Reading], tuple[float, dict[str, Any]]]  # a rank metric's figure_of


def rank_row(line: int, sample: dict[str, Any], figures: Sequence[tuple[str, Figure]]) -> ResultRow:
    """A common line's row: each metric's value and details for the ranking, read once (a rank
    figure has no error and no judge usage: its row holds scores and details alone). `figures`:
    each metric's name and its `figure_of`, looked up once a run, not once a line."""
    own = sample.get("id")
    row = ResultRow(line=line, id=own if own is not None else line)
    reading = Reading(judge_ranking(sample["retrieved_context_ids"], sample["reference_context_ids"], sample.get(GRADES_FIELD)))
    scores, details = row.scores, row.details
    for name, figure_of in figures:
        scores[name], details[name] = figure_of(reading)
    return row


def rank_rows(path: str, metrics: Sequence[Metric[Any]], *, done: Container[int], limit: int | None, strict: bool) -> Iterator[ResultRow]:
    """The rows of the input's lines not yet `done`, in line order, from its first `limit` bytes,
    each as writing it makes it (a row too long for a results line slimmed or failed, as
    `ResultRow.writable` does), so a run with nowhere to write counts what a results file would hold;
    with `strict`, the first line that cannot be read raises its InputError after the rows before
    it (a done line too, as the pipeline's reader does). Every metric is a rank metric (`ranks_only`)."""
    assert ranks_only(metrics)  # the caller's condition
    figures = [(metric.name, metric.figure_of) for metric in metrics if isinstance(metric, RankMetric)]
    name = input_name(path)
    for number, raw in input_lines(path, limit):
        if number in done and not strict:
            continue
        if raw is None or (sample := common_sample(raw)) is None:
            record = to_record(number, raw, name)
            if strict and record.error is not None:
                raise record.error
            if number not in done:
                yield from (row.writable()[0] for row in score_records([record], metrics, None))
        elif number not in done:
            row = rank_row(number, sample, figures)
            yield row if len(raw) <= ROOMY_LINE_BYTES else row.writable()[0]

