"""Human scores for some scored samples, from a labels file's rows that carry a sample's `id`.

The file is `localeval calibrate`'s (localeval.data.labels). Attribution rows (`statement`,
`label`) give context_recall (or, with `"metric": "faithfulness"`, faithfulness) the share of
the sample's labelled statements that are attributed; a usefulness row (`useful`) gives
context_precision the average precision of its labels; a relevance row (`required`) gives
context_relevance the share of its context's units that are required (a line, when it holds a
required sentence or a part of one, by position), counted in the metric's
own units and language (its `unit` and `language` options: the human figure and the metric's
are on one scale), [] being 0, "insufficient information". A relevance row whose required
sentences are not in its contexts is left out by line, as `calibrate` leaves it out. Rows
without an `id` are calibration rows only. The summary joins each id to at most one scored
sample and sets these beside the metric's own scores for a prediction-powered estimate
(localeval.stats.ppi).

Whether a row describes the sample it names (the join's check):

A person labelled what the row shows: its retrieved contexts and, for an attribution row, a
statement. A sample with the same id but other contexts (the pipeline retrieved again, or the
ids were reused) is not what the person judged, so the label would correct the metric with a
judgement about something else. A row is used only when

- a usefulness row's contexts are the sample's, in the same order (average precision reads ranks);
- an attribution or relevance row's contexts are the sample's, in any order (attribution to a set
  of contexts and a share of their units do not depend on the order);
- an attribution row's statement is not found in the other field's text alone: a statement of the
  response in a row without `"metric": "faithfulness"` (so it labels context_recall, whose
  statements come from the reference) would correct the wrong metric, and the other way round.
  A statement found in neither (a paraphrase, a claim) is taken as the person wrote it.

Contexts compare with surrounding whitespace stripped; statements with whitespace runs collapsed
and case folded. `disagreement` gives a (field, reason) pair, or None when the row agrees.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from localeval.data.files import file_sha256
from localeval.data.jsonl import STDIN, Record, input_name, read_records
from localeval.data.labels import STATEMENT_METRICS, LeftOut, RequiredSentences, read_labels, required_sentences
from localeval.data.samples import Sample
from localeval.errors import ConfigError, InputError
from localeval.metrics.ranking import average_precision

PRECISION = "context_precision"
STATEMENT_FIELDS = {"context_recall": "reference", "faithfulness": "response"}  # whose statement an attribution row labels


@dataclass(frozen=True)
class LabelRow:
    """One labels row with an id: the metric it labels, the human score it gives (an attribution
    label, a usefulness row's average precision, a relevance row's share), and what it says about
    its sample."""

    line: int
    metric: str
    value: float
    contexts: tuple[str, ...]
    statement: str | None = None


def _plain(text: str) -> str:
    return " ".join(text.split()).casefold()


def _contexts_problem(row: LabelRow, sample: Sample) -> str | None:
    ours = [c.strip() for c in row.contexts]
    theirs = [c.strip() for c in sample.retrieved_contexts or []]
    if ours == theirs:
        return None
    if row.metric != PRECISION and sorted(ours) == sorted(theirs):
        return None
    if sorted(ours) == sorted(theirs):
        return "the sample's retrieved contexts in another order (a usefulness label belongs to a rank)"
    if len(ours) != len(theirs):
        return f"{len(ours)} retrieved contexts where the sample has {len(theirs)}"
    first = next((i for i, (a, b) in enumerate(zip(ours, theirs)) if a != b), 0)
    return f"retrieved context {first + 1} is not the sample's"


def _statement_problem(row: LabelRow, sample: Sample) -> str | None:
    if row.statement is None or row.metric not in STATEMENT_FIELDS:
        return None
    wanted = STATEMENT_FIELDS[row.metric]
    other = next(name for name in STATEMENT_FIELDS.values() if name != wanted)
    statement = _plain(row.statement)
    in_wanted = statement in _plain(getattr(sample, wanted) or "")
    if in_wanted or statement not in _plain(getattr(sample, other) or ""):
        return None
    if row.metric == "context_recall":
        return 'the statement is in the sample\'s response, not its reference: a faithfulness label needs "metric": "faithfulness"'
    return 'the statement is in the sample\'s reference, not its response: a context_recall label leaves "metric" out'


def disagreement(row: LabelRow, sample: Sample) -> tuple[str, str] | None:
    """The field of `row` that says something else about `sample` than the sample does, and how;
    None when the row describes the sample."""
    contexts = _contexts_problem(row, sample)
    if contexts is not None:
        return "retrieved_contexts", contexts
    statement = _statement_problem(row, sample)
    if statement is not None:
        return "metric", statement
    return None


RELEVANCE = "context_relevance"


@dataclass(frozen=True)
class RelevanceUnits:
    """How context_relevance counts, so the human share is on the metric's scale."""

    unit: str = "sentence"
    language: str = "en"


UNITS = ("sentence", "line", "chunk")


def relevance_units(options: Any, where: str) -> RelevanceUnits:
    """The unit and language of context_relevance's options (the metric's own, or a results
    header's, which is untrusted: an unknown unit or language is refused, naming `where`)."""
    from localeval.data.text import check_language

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
    """Human scores by sample id (a string: results compare ids as strings) and metric, from the
    rows (by id) that describe their sample; the file they came from; how many rows named a
    sample; and the rows left out, by line.

    `check` each sample a label names before its scores are joined: a row that says something
    else about its sample than the sample says (`disagreement`) is left out, by line."""

    rows: dict[str, list[LabelRow]]
    path: str
    sha256: str | None
    rows_with_id: int
    left_out: list[str] = field(default_factory=list)
    scores: dict[str, dict[str, float]] = field(init=False)

    def __post_init__(self) -> None:
        self.scores = _scores(self.rows)

    def check(self, sample: Sample, line: int) -> None:
        """Leave out the rows for this sample's id (its `id`, else its `line`) that do not describe it."""
        key = str(sample.id if sample.id is not None else line)
        rows = self.rows.get(key)
        if not rows:
            return
        kept = []
        for row in rows:
            problem = disagreement(row, sample)
            if problem is None:
                kept.append(row)
            else:
                self.left_out.append(f"{input_name(self.path)}:{row.line}: field '{problem[0]}': {problem[1]} (sample {key!r}, input line {line}); the row is left out")
        if len(kept) < len(rows):
            self.rows[key] = kept
            self.scores = _scores(self.rows)

    def check_records(self, records: Iterable[Record]) -> None:
        """`check` every readable sample of `records` (a second reading of the input)."""
        for record in records:
            if record.sample is not None:
                self.check(record.sample, record.line)


def _scores(rows: dict[str, list[LabelRow]]) -> dict[str, dict[str, float]]:
    """Each id's human score per metric: the share of its attribution labels that are 1, or its
    one usefulness or relevance row's figure."""
    scores: dict[str, dict[str, float]] = {}
    for sample, labelled in rows.items():
        by_metric: dict[str, list[float]] = defaultdict(list)
        for row in labelled:
            by_metric[row.metric].append(row.value)
        if by_metric:
            scores[sample] = {metric: sum(values) / len(values) for metric, values in by_metric.items()}
    return scores


def _line_spans(context: str) -> list[tuple[int, int]]:
    """Where each non-blank line of `context` stands (its stripped text), as the metric's line units."""
    spans, start = [], 0
    for line in context.splitlines(keepends=True):
        text = line.strip()
        if text:
            offset = start + line.index(text)
            spans.append((offset, offset + len(text)))
        start += len(line)
    return spans


def _sentence_spans(context: str, sentences: list[str]) -> list[tuple[int, int] | None]:
    """Where each of the context's sentences (in order) stands in it; the splitter may have changed
    the whitespace inside a sentence, so a sentence is found as its words with any whitespace between
    them, from where the one before it ended. None for one that cannot be found there (a line
that holds it then counts)."""
    spans: list[tuple[int, int] | None] = []
    cursor = 0
    for sentence in sentences:
        found = re.compile(r"\s+".join(re.escape(word) for word in sentence.split())).search(context, cursor)
        if found is None:
            spans.append(None)
            continue
        spans.append(found.span())
        cursor = found.end()
    return spans


def _required_lines(contexts: list[str], labelled: RequiredSentences) -> int:
    """The lines that hold a required sentence or a part of one, found by where they stand: a
    line whose text merely occurs inside a required sentence ("Dresden", "1901" above the
    sentence) is another line, and not required."""
    required = 0
    for index, context in enumerate(contexts):
        ours = [i for i, c in enumerate(labelled.contexts) if c == index]
        spans = _sentence_spans(context, [labelled.sentences[i] for i in ours])
        wanted = [span for i, span in zip(ours, spans) if i in labelled.required and span is not None]
        unplaced = [labelled.sentences[i] for i, span in zip(ours, spans) if i in labelled.required and span is None]
        required += sum(
            1 for start, end in _line_spans(context)
            if any(start < stop and begin < end for begin, stop in wanted) or any(sentence in context[start:end] for sentence in unplaced)
        )
    return required


def _relevance_share(row: dict[str, Any], labelled: RequiredSentences, units: RelevanceUnits) -> float:
    """Required units / units, in the metric's unit: a chunk (a retrieved context) is required
    when one of its sentences is; a line when it holds a required sentence or a part of one."""
    contexts: list[str] = row["retrieved_contexts"]
    if units.unit == "chunk":
        total = sum(1 for context in contexts if context.strip())
        required = len({labelled.contexts[i] for i in labelled.required})
    elif units.unit == "line":
        total = sum(len(_line_spans(context)) for context in contexts)
        required = _required_lines(contexts, labelled)
    else:
        total, required = len(labelled.sentences), len(labelled.required)
    return required / total if total else 0.0


def read_gold(path: str, relevance: RelevanceUnits | None = None) -> Gold:
    """Gold scores from the labels file at `path`; `relevance` is the context_relevance metric's
    unit and language (its defaults when it is not selected: its scores are then not used)."""
    units = relevance or RelevanceUnits()
    name = input_name(path)
    rows: dict[str, list[LabelRow]] = defaultdict(list)
    left_out: list[str] = []
    with_id = 0
    for number, row in read_labels(path):
        if "id" not in row:
            continue
        with_id += 1
        sample = str(row["id"])
        contexts = tuple(row["retrieved_contexts"])
        if "required" in row:
            if any(r.metric == RELEVANCE for r in rows[sample]):
                raise InputError(name, number, "id", f"sample {sample!r} has a relevance row already")
            try:
                labelled = required_sentences(row, name, number, units.language)
            except LeftOut as problem:
                left_out.append(str(problem))
                continue
            rows[sample].append(LabelRow(number, RELEVANCE, _relevance_share(row, labelled, units), contexts))
        elif "useful" in row:
            if any(r.metric == PRECISION for r in rows[sample]):
                raise InputError(name, number, "id", f"sample {sample!r} has a usefulness row already")
            rows[sample].append(LabelRow(number, PRECISION, average_precision([bool(v) for v in row["useful"]]), contexts))
        else:
            rows[sample].append(LabelRow(number, row.get("metric", STATEMENT_METRICS[0]), float(row["label"]), contexts, row["statement"]))
    return Gold({sample: labelled for sample, labelled in rows.items() if labelled}, path, file_sha256(path), with_id, left_out)


def check_recorded_input(gold: Gold, run: dict[str, Any]) -> str | None:
    """`report --labels`: check the labels against the samples of the input a results header
    records (`run`, untrusted), when that file is here as it was scored (its SHA-256); else a
    notice that they are not checked, and why."""
    recorded, field_map = run.get("input"), run.get("map")
    recorded = recorded if isinstance(recorded, dict) else {}
    field_map = field_map if isinstance(field_map, dict) else {}
    path, sha256 = recorded.get("path"), recorded.get("sha256")
    if not isinstance(path, str) or not isinstance(sha256, str) or path == STDIN or not Path(path).is_file():
        return f"the labels are not checked against the samples they name: the run's input {path!r} is not a file here"
    if not all(isinstance(k, str) and isinstance(v, str) for k, v in field_map.items()) or file_sha256(path) != sha256:
        return f"the labels are not checked against the samples they name: {path} is not the input the run scored (another SHA-256)"
    gold.check_records(read_records(path, field_map=field_map))
    return None
