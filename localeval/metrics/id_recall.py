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


def ids_among(counted: Sequence[ContextId], others: Sequence[ContextId]) -> tuple[list[str], list[str]]:
    """The distinct ids of `counted` (distinct_ids) that are among `others` and those that are not,
    in their first order: what both id metrics count, recall the reference's and precision the
    retrieved ones."""
    pool = set(map(str, others))
    ids = distinct_ids(counted)
    return [i for i in ids if i in pool], [i for i in ids if i not in pool]


def listed_ids(ids: Sequence[str]) -> str:
    """Ids for an explanation: the first MAX_IDS, shortened, and how many more."""
    listed = ", ".join(shorten(i, 40) for i in ids[:MAX_IDS])
    return listed + (f" and {len(ids) - MAX_IDS} more" if len(ids) > MAX_IDS else "")


def id_recall(retrieved_ids: Sequence[ContextId], reference_ids: Sequence[ContextId]) -> Score:
    """Score one pair of id lists; NaN when there are no reference ids."""
    found, missing = ids_among(reference_ids, retrieved_ids)
    if not found and not missing:
        return Score(value=float("nan"), details={"found": [], "missing": []})
    return Score(value=len(found) / (len(found) + len(missing)), details={"found": found, "missing": missing})


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
        return f"missing ids: {listed_ids(details.missing)}"
