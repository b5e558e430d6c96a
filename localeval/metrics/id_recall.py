"""ID-based context recall: the share of reference context ids that were retrieved.

Same semantics as ragas' IDBasedContextRecall: ids compare as `str()` so 7 and "7"
match, duplicates count once.
"""

from __future__ import annotations

from collections.abc import Sequence

from pydantic import BaseModel, ConfigDict

from localeval.data.samples import ContextId, Sample
from localeval.judge import Judge
from localeval.metrics.base import Metric, NoParams, Score, shorten

MAX_IDS = 10  # ids an explanation lists


class IdRecallDetails(BaseModel):
    model_config = ConfigDict(extra="forbid")

    found: list[str]
    missing: list[str]


def distinct_ids(ids: Sequence[ContextId]) -> list[str]:
    """Ids as ragas compares them: as `str()`, each once, in their first order."""
    return list(dict.fromkeys(map(str, ids)))


def id_recall(retrieved_ids: Sequence[ContextId], reference_ids: Sequence[ContextId]) -> Score:
    """Score one pair of id lists; NaN when there are no reference ids."""
    reference = distinct_ids(reference_ids)
    if not reference:
        return Score(value=float("nan"), details={"found": [], "missing": []})
    retrieved = set(map(str, retrieved_ids))
    found = [i for i in reference if i in retrieved]
    missing = [i for i in reference if i not in retrieved]
    return Score(value=len(found) / len(reference), details={"found": found, "missing": missing})


class IdContextRecall(Metric[NoParams]):
    name = "id_context_recall"
    description = "Share of reference context ids found among the retrieved ids (ids compared as strings)."
    required_fields = ("retrieved_context_ids", "reference_context_ids")
    Details = IdRecallDetails

    def score_batch(self, samples: Sequence[Sample], judge: Judge | None) -> list[Score]:
        return [id_recall(s.retrieved_context_ids or [], s.reference_context_ids or []) for s in samples]

    @classmethod
    def explain(cls, details: IdRecallDetails) -> str:
        if not details.missing and not details.found:
            return "no reference ids"
        if not details.missing:
            return "all reference ids retrieved"
        listed = ", ".join(shorten(i, 40) for i in details.missing[:MAX_IDS])
        more = f" and {len(details.missing) - MAX_IDS} more" if len(details.missing) > MAX_IDS else ""
        return f"missing ids: {listed}{more}"
