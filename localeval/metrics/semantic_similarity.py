"""Semantic similarity: how close the response's meaning is to the reference's.

ragas' SemanticSimilarity (`semantic_similarity`; fields response and reference): the cosine
similarity of the two texts' embeddings, made 0 or 1 by an optional `threshold` (1 where the
cosine reaches it). The embeddings are all-MiniLM-L6-v2's (localeval.models.embedding, the model
answer_relevancy reads, run in numpy): no judge. A batch of samples is embedded in one call, each
sample's two texts as one forward pass of their own (so its score never depends on its batch), the
passes spread over the cores (benchmarks/rag_scorecard.py measures the rate).

As ragas 0.4.3's `_ascore`: an empty text is embedded as " ", and a threshold of 0 is no threshold
there (`if self.threshold:`), so localeval refuses 0 rather than read it two ways. Cosine similarity
can be negative; ragas then reports a negative score, localeval's scores are in [0, 1]: a cosine
below 0 scores 0 (the details keep the cosine), as answer_relevancy's mean does. The threshold
reads the cosine the details show (four decimals): identical texts, 0.99999999999997 in float64
from float32 embeddings, reach a threshold of 1.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, field_validator

from localeval.data.samples import Sample
from localeval.judge import Judge
from localeval.metrics.base import Metric, Score

# The decimals of the cosine the details show, and the threshold reads: the embeddings are float32,
# and identical texts give a cosine of 0.99999999999997, which missed a threshold of 1 (scored 0
# under "cosine similarity 1.00"); deciding on the figure shown keeps the score and its
# explanation in step.
COSINE_DECIMALS = 4


class SimilarityParams(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    threshold: float | None = Field(
        None, gt=0.0, le=1.0, allow_inf_nan=False,
        description="when set, the score is 1 where the cosine reaches it and 0 below (ragas' threshold; above 0: ragas reads 0 as none)",
    )

    @field_validator("threshold", mode="before")
    @classmethod
    def _not_a_bool(cls, value: Any) -> Any:
        if isinstance(value, bool):
            raise ValueError("expected a number in (0, 1], not true or false")
        return value


class SimilarityDetails(BaseModel):
    cosine: float
    threshold: float | None = None
    cut: list[str] = Field(default_factory=list)  # the texts longer than the model reads (cut_texts)


def embedded_text(text: str | None) -> str:
    """What ragas embeds for a text: an empty one as a space."""
    return text or " "


def pair_cosines(left: Sequence[str], right: Sequence[str]) -> list[float]:
    """The cosine similarity of each left text's embedding with its right text's; in float64 and
    held to [-1, 1] (localeval.metrics.answer_relevancy's cosine_scores: float32 vectors of one text
    give 1 + 1e-7). Each pair is embedded as a group of its own, all pairs in one call
    (Embedder.embed_groups): a pair's cosine is then the same bits however the runner batched its
    sample, where one batch of every text made it move in the last bits with the batch's size."""
    import numpy as np

    from localeval.models.embedding import load_embedder

    cosines = []
    for vectors in load_embedder().embed_groups([[a, b] for a, b in zip(left, right)]):
        first, second = np.asarray(vectors, dtype=np.float64)
        cosine = float(first @ second) / float(np.linalg.norm(first) * np.linalg.norm(second))
        cosines.append(min(1.0, max(-1.0, cosine)))
    return cosines


def reaches(cosine: float, threshold: float) -> bool:
    """ragas' `score >= threshold`, on the cosine as the details show it (COSINE_DECIMALS)."""
    return round(cosine, COSINE_DECIMALS) >= threshold


def cut_texts(response: str | None, reference: str | None) -> list[str]:
    """Which of the two texts ("response", "reference") the embedding model reads only the
    beginning of (its first 254 word pieces, as sentence-transformers cuts them for ragas): a
    cosine of 1 there says nothing about what follows, so the details name them."""
    from localeval.models.embedding import load_embedder

    embedder = load_embedder()
    return [name for name, text in (("response", response), ("reference", reference)) if embedder.is_cut(embedded_text(text))]


def cut_note(cut: Sequence[str]) -> str:
    """What `explain` adds for the texts `cut_texts` named."""
    if not cut:
        return ""
    from localeval.models.embedding import MAX_TOKENS

    return f"; only the first {MAX_TOKENS - 2} word pieces of the {' and the '.join(cut)} were read (the embedding model's limit)"


def with_embedding_model(described: dict[str, Any]) -> dict[str, Any]:
    """A metric's `describe_params` with the embedding model's SHA-256 (the model loaded here, so a
    missing one stops a run before its first sample): every metric that reads embeddings records
    which model it read, under one name."""
    from localeval.models.embedding import load_embedder

    return {**described, "embedding_model": load_embedder().describe()}


class SemanticSimilarity(Metric[SimilarityParams]):
    name = "semantic_similarity"
    description = "Cosine similarity of the response's and the reference's embeddings (all-MiniLM-L6-v2, in numpy; no judge); 0/1 with a threshold."
    required_fields = ("response", "reference")
    by_default = False  # named to run: localeval.metrics.DEFAULT_METRICS says why
    Params = SimilarityParams
    Details = SimilarityDetails

    def describe_params(self) -> dict[str, Any]:
        """The options, and the embedding model (a missing one stops the run before its first sample)."""
        return with_embedding_model(super().describe_params())

    def score_batch(self, samples: Sequence[Sample], judge: Judge | None) -> list[Score]:
        cosines = pair_cosines([embedded_text(s.response) for s in samples], [embedded_text(s.reference) for s in samples])
        return [self.score_cosine(cosine, cut_texts(s.response, s.reference)) for s, cosine in zip(samples, cosines)]

    def score_cosine(self, cosine: float, cut: Sequence[str] = ()) -> Score:
        """ragas' score for a cosine: the cosine (held at 0 from below), or 1/0 at the threshold;
        the details name the texts the embedding read only the beginning of (`cut`)."""
        threshold = self.params.threshold
        value = max(0.0, cosine) if threshold is None else float(reaches(cosine, threshold))
        details: dict[str, Any] = {"cosine": round(cosine, COSINE_DECIMALS)}
        if threshold is not None:
            details["threshold"] = threshold
        if cut:
            details["cut"] = list(cut)
        return Score(value=value, details=details)

    @classmethod
    def explain(cls, details: SimilarityDetails) -> str:
        said = f"the response's and the reference's embeddings have cosine similarity {details.cosine:.2f}"
        if details.threshold is not None:
            said += (" (at least " if reaches(details.cosine, details.threshold) else " (below ") + f"the threshold {details.threshold:g})"
        return said + cut_note(details.cut)
