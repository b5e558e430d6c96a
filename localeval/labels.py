"""Reading a labels file (`localeval calibrate`'s input, and `score --labels`'): JSON Lines, one of

    {"retrieved_contexts": [...], "statement": "...", "label": 1, "user_input": "..."}   # attribution (context_recall)
    {"user_input": "...", "retrieved_contexts": [...], "required": ["a sentence", ...]}  # relevance (context_relevance)
    {"retrieved_contexts": [...], "useful": [1, 0, ...]}                                 # usefulness (context_precision)

with an optional "id": the id of a scored sample the row labels (localeval.gold). An attribution
row labels a statement of the reference (context_recall) unless its "metric" says "faithfulness"
(a statement of the response); both are the same judgement, so `localeval calibrate` fits on both.
A usefulness row gives each retrieved context, in order, 1 (useful for arriving at the answer)
or 0; it labels a scored sample only (no usefulness calibration is fitted). Every line is
checked before anything is done with the file, and a problem names its file, line and field.
"""

from __future__ import annotations

from typing import Any

from pydantic_core import from_json

from localeval.errors import InputError
from localeval.io import STDIN, input_name, numbered_lines, open_binary

KINDS = ("statement", "required", "useful")
STATEMENT_METRICS = ("context_recall", "faithfulness")  # whose statement an attribution row labels (the first: by default)


def _strings(row: dict[str, Any], key: str, name: str, number: int) -> list[str]:
    value = row.get(key)
    if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
        raise InputError(name, number, key, "must be a list of strings")
    return value


def context_sentences(row: dict[str, Any]) -> list[str]:
    """A labelled row's retrieved contexts as the pysbd sentences `required` names."""
    from localeval.text import split_sentences

    return [s for context in row["retrieved_contexts"] for s in split_sentences(context)]


def _read_row(raw: bytes, name: str, number: int) -> dict[str, Any]:
    try:
        row = from_json(raw)  # pydantic's parser, as the input reader's: it refuses unpaired surrogates
    except (ValueError, RecursionError):
        raise InputError(name, number, None, "invalid JSON (or text no model can read, such as an unpaired surrogate)") from None
    if not isinstance(row, dict):
        raise InputError(name, number, None, "expected a JSON object")
    if sum(key in row for key in KINDS) != 1:
        raise InputError(name, number, None, "a labelled row has one of 'statement' and 'label' (attribution), 'required' (relevance) or 'useful' (usefulness)")
    _strings(row, "retrieved_contexts", name, number)
    if "id" in row and (isinstance(row["id"], bool) or not isinstance(row["id"], (str, int))):
        raise InputError(name, number, "id", "must be the id of a scored sample (a string or an integer)")
    if not isinstance(row.get("user_input", ""), str):
        raise InputError(name, number, "user_input", "must be a string")
    if "statement" in row:
        if not isinstance(row["statement"], str) or not row["statement"].strip():
            raise InputError(name, number, "statement", "must be a non-empty string")
        if row.get("label") not in (0, 1) or isinstance(row.get("label"), bool):
            raise InputError(name, number, "label", "must be 1 (attributable) or 0 (not)")
        if row.get("metric", STATEMENT_METRICS[0]) not in STATEMENT_METRICS:
            raise InputError(name, number, "metric", f"must be {' or '.join(STATEMENT_METRICS)} (whose statement it labels)")
    elif "required" in row:
        _strings(row, "required", name, number)
    else:
        useful = row["useful"]
        if not isinstance(useful, list) or not all(v in (0, 1) and not isinstance(v, bool) for v in useful):
            raise InputError(name, number, "useful", "must be a list of 1 (useful) and 0 (not), one per retrieved context")
        if len(useful) != len(row["retrieved_contexts"]):
            raise InputError(name, number, "useful", f"has {len(useful)} labels for {len(row['retrieved_contexts'])} retrieved contexts")
        if "id" not in row:
            raise InputError(name, number, "id", "a usefulness row labels a scored sample: give its id")
    return row


def read_labels(path: str) -> list[tuple[int, dict[str, Any]]]:
    """Every labelled row, checked before the first judge call: a bad line stops the command
    before it has spent minutes on the rows above it."""
    name = input_name(path)
    stream = open_binary(path)
    try:
        rows = []
        for number, raw in numbered_lines(stream):
            if raw is None:
                raise InputError(name, number, None, "line too long")
            rows.append((number, _read_row(raw, name, number)))
        return rows
    finally:
        if path != STDIN:
            stream.close()
