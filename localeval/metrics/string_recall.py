"""Non-LLM context recall: is each reference context (nearly) among the retrieved ones?

Default semantics are ragas' NonLLMContextRecall: similarity = 1 - rapidfuzz's
normalised Levenshtein distance, a reference counts as recalled when its best
similarity over the retrieved contexts is strictly above 0.5. All pairs of a whole
batch go to rapidfuzz in one `cpdist` call instead of a Python double loop.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any, Literal

import numpy as np
from pydantic import BaseModel, ConfigDict, Field
from rapidfuzz import distance, fuzz, process

from localeval.judge import Judge
from localeval.metrics.base import MAX_ITEMS, Metric, Score
from localeval.samples import Sample

Measure = Literal["levenshtein", "hamming", "jaro", "jaro_winkler", "indel", "partial_ratio", "token_set_ratio"]

# name -> (rapidfuzz scorer, True when it returns a normalised distance in 0..1,
# False when it returns a similarity in 0..100). Distances become similarities as
# 1 - distance, exactly as ragas computes them, so scores agree to the last bit.
MEASURES: dict[str, tuple[Callable[..., float], bool]] = {
    "levenshtein": (distance.Levenshtein.normalized_distance, True),
    "hamming": (distance.Hamming.normalized_distance, True),
    "jaro": (distance.Jaro.normalized_distance, True),
    "jaro_winkler": (distance.JaroWinkler.normalized_distance, True),
    "indel": (distance.Indel.normalized_distance, True),
    # These two do not punish a long retrieved chunk that contains the reference
    # verbatim, which Levenshtein scores near 0.
    "partial_ratio": (fuzz.partial_ratio, False),
    "token_set_ratio": (fuzz.token_set_ratio, False),
}
# The kernel's cutoff is widened by this much (on the 0..1 scale): rapidfuzz turns a
# normalised cutoff into an integer one with its own rounding (Hamming 14/20 = 0.7 is
# dropped at a cutoff of 0.7 + 1e-9), and a pair exactly at the threshold must come
# back exact. Values returned are always exact; the margin only costs a little speed.
CUTOFF_MARGIN = 1e-3

RAGAS_THRESHOLD = 0.5  # ragas NonLLMContextRecall's default


class StringRecallParams(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    measure: Measure = Field("levenshtein", description="string similarity measure")
    threshold: float = Field(
        RAGAS_THRESHOLD, ge=0.0, le=1.0, description="a reference is recalled when its best similarity is > this"
    )
    exact_similarity: bool = Field(
        False,
        description="also report the exact best similarity of references that were not recalled "
        "(slower: the kernel cannot stop early at the threshold)",
    )


def _settled(retrieved: str, reference: str, measure: str) -> bool:
    """Pairs whose similarity is 1.0 without running the kernel: identical strings for every
    measure, and for partial_ratio a shorter string contained verbatim in the longer one
    (partial_ratio's slowest case on long chunks, and a common one)."""
    if retrieved == reference:
        return True
    if measure == "partial_ratio" and retrieved and reference:
        shorter, longer = sorted((retrieved, reference), key=len)
        return shorter in longer
    return False


def pair_similarities(retrieved: list[str], references: list[str], measure: str, threshold: float | None = None) -> np.ndarray:
    """Similarity of every (retrieved[i], references[i]) pair, in one vectorised call.

    With a `threshold`, rapidfuzz may stop early on pairs that cannot exceed it (its
    `score_cutoff`, several times faster); those pairs come back as NaN, meaning "at
    most the threshold". Every value that is returned is the exact similarity.
    """
    scorer, is_distance = MEASURES[measure]
    similarities = np.ones(len(retrieved), dtype=np.float64)
    todo = [i for i, (a, b) in enumerate(zip(retrieved, references)) if not _settled(a, b, measure)]
    if not todo:
        return similarities
    kwargs: dict[str, Any] = {}
    if threshold is not None:
        kwargs["score_cutoff"] = min(1.0, 1.0 - threshold + CUTOFF_MARGIN) if is_distance else max(0.0, 100.0 * (threshold - CUTOFF_MARGIN))
    raw = np.asarray(
        process.cpdist(
            [retrieved[i] for i in todo], [references[i] for i in todo], scorer=scorer, processor=None, dtype=np.float64, workers=-1, **kwargs
        ),
        dtype=np.float64,
    )
    values = 1.0 - raw if is_distance else raw / 100.0
    if threshold is not None:
        cut = raw > kwargs["score_cutoff"] if is_distance else raw < kwargs["score_cutoff"]
        values[cut] = np.nan
    similarities[todo] = values
    return similarities


class ReferenceMatch(BaseModel):
    """The best retrieved context for one reference context. `similarity` is None when it
    is known only to be at most the threshold (the kernel stopped early) or nothing was retrieved."""

    model_config = ConfigDict(extra="forbid")

    best_index: int | None
    similarity: float | None
    recalled: bool


class StringRecallDetails(BaseModel):
    model_config = ConfigDict(extra="forbid")

    references: list[ReferenceMatch]


class NonLlmContextRecall(Metric[StringRecallParams]):
    name = "nonllm_context_recall"
    description = (
        "Share of reference contexts whose best string similarity with a retrieved context "
        "is above the threshold (ragas NonLLMContextRecall by default)."
    )
    required_fields = ("retrieved_contexts", "reference_contexts")
    Params = StringRecallParams
    Details = StringRecallDetails

    def score_batch(self, samples: Sequence[Sample], judge: Judge | None) -> list[Score]:
        params = self.params
        left: list[str] = []
        right: list[str] = []
        for sample in samples:
            for reference in sample.reference_contexts or []:
                for retrieved in sample.retrieved_contexts or []:
                    left.append(retrieved)
                    right.append(reference)
        similarities = pair_similarities(left, right, params.measure, None if params.exact_similarity else params.threshold)
        # NaN (stopped early: at most the threshold) ranks below every known similarity.
        ranked = np.where(np.isnan(similarities), -np.inf, similarities)
        scores = []
        offset = 0
        for sample in samples:
            n_retrieved = len(sample.retrieved_contexts or [])
            n_references = len(sample.reference_contexts or [])
            block = ranked[offset : offset + n_retrieved * n_references].reshape(n_references, n_retrieved)
            offset += n_retrieved * n_references
            scores.append(_score_block(block, params.threshold))
        return scores

    @classmethod
    def explain(cls, details: StringRecallDetails) -> str:
        references = details.references
        if not references:
            return "no reference contexts"
        missed = [(i, r) for i, r in enumerate(references) if not r.recalled]
        listed = ", ".join(f"#{i} ({_similarity_text(r.similarity)})" for i, r in missed[:MAX_ITEMS])
        more = f" and {len(missed) - MAX_ITEMS} more" if len(missed) > MAX_ITEMS else ""
        return f"{len(missed)} of {len(references)} reference contexts not recalled" + (f": {listed}{more}" if listed else "")


def _similarity_text(similarity: float | None) -> str:
    return "no close match" if similarity is None else f"best similarity {similarity:.2f}"


def _score_block(block: np.ndarray, threshold: float) -> Score:
    """Score one sample from its references x retrieved similarity matrix (-inf: at most the threshold)."""
    n_references, n_retrieved = block.shape
    if n_references == 0:
        return Score(value=float("nan"), details={"references": []})
    if n_retrieved == 0:
        best, values = [None] * n_references, [-math.inf] * n_references
    else:  # two vectorised calls per sample, not several per reference
        best, values = block.argmax(axis=1).tolist(), block.max(axis=1).tolist()
    references: list[dict[str, Any]] = []
    for index, similarity in zip(best, values):
        if similarity == -math.inf:  # nothing retrieved, or every pair stopped early below the threshold
            references.append({"best_index": None, "similarity": None, "recalled": False})
        else:
            references.append({"best_index": index, "similarity": similarity, "recalled": similarity > threshold})
    recalled = sum(1 for r in references if r["recalled"])
    return Score(value=recalled / n_references, details={"references": references})
