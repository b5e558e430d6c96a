"""Non-LLM context precision: are the retrieved contexts that match a reference ranked first?

ragas' NonLLMContextPrecisionWithReference: a retrieved context is relevant when its best
similarity with any reference context reaches the threshold (>=, where recall needs >), and the
score is the average precision of those verdicts in retrieval order (`ranking.py`). The
similarity measures, their options and the batch kernel are nonllm_context_recall's
(`string_recall.py`), with the search turned round: each retrieved context seeks its best
reference.

Where ragas has no score: with no reference contexts ragas raises (the max of an empty list);
here every retrieved context is then not relevant and the score is 0, what ragas' formula gives
when nothing is relevant, as id_context_precision gives for no reference ids. Nothing retrieved
scores 0, as in ragas.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from pydantic import BaseModel, ConfigDict, Field

from localeval.metrics.base import MAX_ITEMS, Score, ShareOption
from localeval.metrics.ranking import average_precision
from localeval.metrics.string_recall import RAGAS_THRESHOLD, StringMatchMetric, StringRecallParams, best_matches, similarity_text

if TYPE_CHECKING:
    import numpy as np


class StringPrecisionParams(StringRecallParams):
    """nonllm_context_recall's options, said of retrieved contexts (and >= where recall has >)."""

    threshold: ShareOption = Field(
        RAGAS_THRESHOLD, description="a retrieved context is relevant when its best similarity with a reference context is >= this"
    )
    exact_similarity: bool = Field(
        False,
        description="also report the exact best similarity of retrieved contexts that are not relevant "
        "(slower: the kernel cannot stop early at the threshold)",
    )


class RetrievedMatch(BaseModel):
    """The best reference context for one retrieved context. `similarity` (and `best_reference`)
    is None when there is no reference context, or when the context is not relevant and some
    pair is known only to be below the threshold: then only that is known."""

    model_config = ConfigDict(extra="forbid")

    best_reference: int | None
    similarity: float | None
    relevant: bool


class StringPrecisionDetails(BaseModel):
    model_config = ConfigDict(extra="forbid")

    retrieved: list[RetrievedMatch]


class NonLlmContextPrecision(StringMatchMetric):
    name = "nonllm_context_precision"
    description = (
        "Average precision of the retrieved contexts in their order, a context relevant when its best "
        "string similarity with a reference context reaches the threshold (ragas NonLLMContextPrecisionWithReference by default)."
    )
    Params = StringPrecisionParams
    Details = StringPrecisionDetails
    per_retrieved = True
    inclusive = True

    def _score_block(self, block: np.ndarray, unknown: np.ndarray) -> Score:
        """Score one sample from its retrieved x references matrix."""
        matches = best_matches(block, unknown, self.params.threshold, inclusive=True)
        retrieved = [{"best_reference": index, "similarity": similarity, "relevant": relevant} for index, similarity, relevant in matches]
        return Score(value=average_precision(relevant for _, _, relevant in matches), details={"retrieved": retrieved})

    @classmethod
    def explain(cls, details: StringPrecisionDetails) -> str:
        retrieved = details.retrieved
        if not retrieved:
            return "nothing retrieved"
        relevant = [(i, r) for i, r in enumerate(retrieved) if r.relevant]
        other = [(i, r) for i, r in enumerate(retrieved) if not r.relevant]
        if not relevant:
            return f"none of the {len(retrieved)} retrieved contexts relevant: {_listed(other)}"
        line = f"{len(relevant)} of {len(retrieved)} retrieved contexts relevant: {_listed(relevant)}"
        return line + (f"; not relevant: {_listed(other)}" if other else "")


def _listed(matches: list[tuple[int, RetrievedMatch]]) -> str:
    """The first few retrieved contexts with their closest reference (relevant ones) or best similarity."""
    listed = ", ".join(
        f"#{i} (reference #{m.best_reference}, {m.similarity:.2f})" if m.relevant else f"#{i} ({similarity_text(m.similarity)})" for i, m in matches[:MAX_ITEMS]
    )
    return listed + (f" and {len(matches) - MAX_ITEMS} more" if len(matches) > MAX_ITEMS else "")

