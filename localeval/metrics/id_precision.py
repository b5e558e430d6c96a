"""ID-based context precision: the share of the retrieved context ids that are reference ids.

Same semantics as ragas' IDBasedContextPrecision: ids compare as `str()` (7 and "7" match) and
each retrieved id counts once (ragas takes the set), so retrieving a relevant id twice does not
raise the score. Nothing retrieved is NaN (ragas: "cannot calculate precision"); no reference
ids with something retrieved is 0, as in ragas.
"""

from __future__ import annotations

from collections.abc import Sequence

from pydantic import BaseModel, ConfigDict

from localeval.data.samples import ContextId, Sample
from localeval.judge import Judge
from localeval.metrics.base import Metric, NoParams, Score
from localeval.metrics.id_recall import ids_among, listed_ids


class IdPrecisionDetails(BaseModel):
    model_config = ConfigDict(extra="forbid")

    relevant: list[str]
    not_relevant: list[str]


def id_precision(retrieved_ids: Sequence[ContextId], reference_ids: Sequence[ContextId]) -> Score:
    """Score one pair of id lists; NaN when nothing was retrieved."""
    relevant, not_relevant = ids_among(retrieved_ids, reference_ids)
    if not relevant and not not_relevant:
        return Score(value=float("nan"), details={"relevant": [], "not_relevant": []})
    return Score(value=len(relevant) / (len(relevant) + len(not_relevant)), details={"relevant": relevant, "not_relevant": not_relevant})


class IdContextPrecision(Metric[NoParams]):
    name = "id_context_precision"
    description = "Share of the retrieved context ids found among the reference ids (ids compared as strings, each once)."
    required_fields = ("retrieved_context_ids", "reference_context_ids")
    Details = IdPrecisionDetails

    def score_batch(self, samples: Sequence[Sample], judge: Judge | None) -> list[Score]:
        return [id_precision(s.retrieved_context_ids or [], s.reference_context_ids or []) for s in samples]

    @classmethod
    def explain(cls, details: IdPrecisionDetails) -> str:
        if not details.relevant and not details.not_relevant:
            return "no retrieved ids"
        if not details.not_relevant:
            return "every retrieved id is a reference id"
        return f"{len(details.not_relevant)} of {len(details.relevant) + len(details.not_relevant)} retrieved ids not among the reference ids: {listed_ids(details.not_relevant)}"
