"""Whether a labels row describes the sample it names (localeval.gold joins them by id).

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
and case folded. The verdict is a (field, reason) pair, or None when the row agrees.
"""

from __future__ import annotations

from dataclasses import dataclass

from localeval.samples import Sample

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
