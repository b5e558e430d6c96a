"""Reading a labels file (`localeval calibrate`'s input, and `score --labels`'): JSON Lines, one of

    {"retrieved_contexts": [...], "statement": "...", "label": 1, "user_input": "..."}   # attribution (context_recall)
    {"user_input": "...", "retrieved_contexts": [...], "required": ["a sentence", ...]}  # relevance (context_relevance)
    {"retrieved_contexts": [...], "useful": [1, 0, ...]}                                 # usefulness (context_precision)

with an optional "id": the id of a scored sample the row labels (localeval.stats.human_scores), read as the
input reader reads an id (3.0, as pandas writes an integer column with gaps, is the id 3). An attribution
row labels a statement of the reference (context_recall) unless its "metric" says "faithfulness"
(a statement of the response); both are the same judgement, so `localeval calibrate` fits on both.
A usefulness row gives each retrieved context, in order, 1 (useful for arriving at the answer)
or 0; it labels a scored sample only (no usefulness calibration is fitted). Every line is
checked before anything is done with the file, and a problem names its file, line and field.
A relevance row whose `required` names a sentence its contexts do not have is left out, by
line, with a notice, by `calibrate` and `score --labels` alike (`required_sentences`); a row
with an id that does not describe the sample it names is left out by `score --labels`
(localeval.stats.human_scores).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from pydantic_core import from_json

from localeval.data.jsonl import STDIN, input_name, numbered_lines, open_binary
from localeval.data.samples import integral_float_as_int
from localeval.errors import InputError

KINDS = ("statement", "required", "useful")
STATEMENT_METRICS = ("context_recall", "faithfulness")  # whose statement an attribution row labels (the first: by default)
# Every metric a row of the file can label: the attribution rows' two, the relevance rows' and the
# usefulness rows'. A metric outside it (answer_relevancy, factual_correctness, the ragas scorecard,
# the id and string metrics) has no row kind that holds its human score.
LABELLED_METRICS = (*STATEMENT_METRICS, "context_relevance", "context_precision")


def _strings(row: dict[str, Any], key: str, name: str, number: int) -> list[str]:
    value = row.get(key)
    if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
        raise InputError(name, number, key, "must be a list of strings")
    return value


class LeftOut(Exception):
    """A labelled row that is well formed but cannot be used; the message says why, by line."""


@dataclass(frozen=True)
class RequiredSentences:
    """A relevance row's contexts as pysbd sentences, the context each came from, and which of
    them the row's `required` names."""

    sentences: list[str]
    contexts: list[int]
    required: set[int]


def _same_sentence(unit: str, wanted: str) -> bool:
    """A required sentence matches a sentence verbatim, or when one contains the other (sentence
    splitters disagree on a few boundaries)."""
    a, b = unit.strip(), wanted.strip()
    return a == b or (len(b) > 20 and b in a) or (len(a) > 20 and a in b)


def required_sentences(row: dict[str, Any], name: str, number: int, language: str = "en") -> RequiredSentences:
    """The sentences of a relevance row (split for `language`, as the metric splits them) and the
    required ones. A `required` entry that is no sentence of the contexts raises LeftOut: the row
    would otherwise count a sentence nobody can find (three copies of it would make a human score of
    1.0), or teach a fit that nothing was required."""
    from localeval.data.text import split_sentences

    sentences: list[str] = []
    contexts: list[int] = []
    for index, context in enumerate(row["retrieved_contexts"]):
        found = split_sentences(context, language)
        sentences += found
        contexts += [index] * len(found)
    unmatched = [w for w in row["required"] if not any(_same_sentence(text, w) for text in sentences)]
    if unmatched:
        raise LeftOut(f"{name}:{number}: field 'required': {unmatched[0][:80]!r} is not a sentence of the retrieved contexts; the row is left out")
    required = {i for i, text in enumerate(sentences) if any(_same_sentence(text, w) for w in row["required"])}
    return RequiredSentences(sentences, contexts, required)


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
    if "id" in row:
        row["id"] = integral_float_as_int(row["id"])  # 3.0 (pandas) is the id 3, as the input reader reads it
    if "id" in row and (isinstance(row["id"], bool) or not isinstance(row["id"], (str, int))):
        raise InputError(name, number, "id", "must be the id of a scored sample (a string or an integer)")
    if not isinstance(row.get("user_input", ""), str):
        raise InputError(name, number, "user_input", "must be a string")
    if "statement" in row:
        if not isinstance(row["statement"], str) or not row["statement"].strip():
            raise InputError(name, number, "statement", "must be a non-empty string")
        if row.get("label") not in (0, 1) or isinstance(row.get("label"), bool):
            raise InputError(name, number, "label", "must be 1 (attributable) or 0 (not)")
        metric = row.get("metric", STATEMENT_METRICS[0])
        if metric not in STATEMENT_METRICS:
            other = f"; {metric} takes no labels: no row kind holds its human score (labels fit {', '.join(LABELLED_METRICS)})" if isinstance(metric, str) and metric not in LABELLED_METRICS else ""
            raise InputError(name, number, "metric", f"must be {' or '.join(STATEMENT_METRICS)} (whose statement it labels){other}")
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
