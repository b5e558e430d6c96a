"""The samples a run scored, read back from the input its header records: the question text that
each pair must share, and the contexts that entered or left a sample.

A results row keeps scores and details, not the sample, so these come from the input file, and
only when it is here as it was scored (its SHA-256, the header's field map): a file changed since
would pair one question's results with another's text. Otherwise the comparison says the
questions were not checked, and why.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from localeval.data.files import file_sha256
from localeval.data.jsonl import STDIN, read_records

# The fields that say which question a sample is (what a pipeline is given, not what it made):
# two lines with the same ones are the same sample, whatever the pipelines retrieved or answered.
GOLD_FIELDS = ("user_input", "reference", "reference_contexts", "reference_context_ids")


@dataclass(frozen=True)
class ScoredSample:
    """What a comparison reads of one input line: its question, retrieved contexts and response,
    and its GOLD_FIELDS (None where the sample has none), which confirm a pairing by line."""

    question: str | None
    contexts: tuple[str, ...]
    response: str | None = None
    gold: tuple[Any, ...] = ()


@dataclass(frozen=True)
class RecordedInput:
    """The samples of a run's input by line, or None with the reason they could not be read, and
    whether any of them has an id of its own (ids 1..n are ids, not line numbers: None when unread)."""

    samples: dict[int, ScoredSample] | None
    note: str | None
    with_ids: bool | None = None


def recorded_input_path(run: dict[str, Any]) -> str:
    """The input file the header `run` (untrusted) records ("" for none, or standard input)."""
    recorded = run.get("input")
    path = recorded.get("path") if isinstance(recorded, dict) else None
    return path if isinstance(path, str) and path != STDIN else ""


def read_recorded_input(run: dict[str, Any], results_path: str) -> RecordedInput:
    """The input the header `run` (untrusted) records, when that file is here unchanged."""
    recorded, field_map = run.get("input"), run.get("map")
    recorded = recorded if isinstance(recorded, dict) else {}
    field_map = field_map if isinstance(field_map, dict) and all(isinstance(k, str) and isinstance(v, str) for k, v in field_map.items()) else None
    path, sha256 = recorded.get("path"), recorded.get("sha256")
    if "read_from" in recorded:  # localeval score RUN --qrels: the samples were read from a run file, not kept
        return RecordedInput(None, f"{results_path}: it scored the queries of a run and qrels file ({str(path)[:200]}), which are not samples to read back")
    if not isinstance(path, str) or not isinstance(sha256, str) or path == STDIN or not Path(path).is_file():
        return RecordedInput(None, f"{results_path}: its input {str(path)[:200]!r} is not a file here")
    if field_map is None:
        return RecordedInput(None, f"{results_path}: its header's field map is not one")
    if file_sha256(path) != sha256:
        return RecordedInput(None, f"{results_path}: {path} is not the input it scored (another SHA-256)")
    samples = {}
    with_ids = False
    for record in read_records(path, field_map=field_map):
        if record.sample is not None:
            gold = tuple(value if not isinstance(value := getattr(record.sample, name), list) else tuple(value) for name in GOLD_FIELDS)
            samples[record.line] = ScoredSample(record.sample.user_input, tuple(record.sample.retrieved_contexts or ()), record.sample.response, gold)
            with_ids = with_ids or record.sample.id is not None
    return RecordedInput(samples, None, with_ids)
