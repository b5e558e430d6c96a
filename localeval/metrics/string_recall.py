"""Non-LLM context recall: is each reference context (nearly) among the retrieved ones?

Default semantics are ragas' NonLLMContextRecall: similarity = 1 - rapidfuzz's
normalised Levenshtein distance, a reference counts as recalled when its best
similarity over the retrieved contexts is strictly above 0.5. All pairs of a whole
batch go to rapidfuzz in one `cpdist` call instead of a Python double loop.
"""

from __future__ import annotations

from typing import Any, Callable, Literal, Sequence

import numpy as np
from pydantic import BaseModel, ConfigDict, Field
from rapidfuzz import distance, fuzz, process

from localeval.judge import Judge
from localeval.metrics.base import Metric, Score
from localeval.samples import Sample

Measure = Literal["levenshtein", "hamming", "jaro", "jaro_winkler", "indel", "partial_ratio", "token_set_ratio"]

# name -> (rapidfuzz scorer, how its raw output becomes a similarity in 0..1).
# The distance measures are turned into similarities as 1 - normalised distance,
# exactly as ragas does, so scores agree to the last bit.
_FROM_DISTANCE: Callable[[np.ndarray], np.ndarray] = lambda raw: 1.0 - raw  # noqa: E731
_FROM_PERCENT: Callable[[np.ndarray], np.ndarray] = lambda raw: raw / 100.0  # noqa: E731
MEASURES: dict[str, tuple[Callable[..., float], Callable[[np.ndarray], np.ndarray]]] = {
    "levenshtein": (distance.Levenshtein.normalized_distance, _FROM_DISTANCE),
    "hamming": (distance.Hamming.normalized_distance, _FROM_DISTANCE),
    "jaro": (distance.Jaro.normalized_distance, _FROM_DISTANCE),
    "jaro_winkler": (distance.JaroWinkler.normalized_distance, _FROM_DISTANCE),
    "indel": (distance.Indel.normalized_distance, _FROM_DISTANCE),
    # These two do not punish a long retrieved chunk that contains the reference
    # verbatim, which Levenshtein scores near 0.
    "partial_ratio": (fuzz.partial_ratio, _FROM_PERCENT),
    "token_set_ratio": (fuzz.token_set_ratio, _FROM_PERCENT),
}

RAGAS_THRESHOLD = 0.5  # ragas NonLLMContextRecall's default


class StringRecallParams(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    measure: Measure = Field("levenshtein", description="string similarity measure")
    threshold: float = Field(
        RAGAS_THRESHOLD, ge=0.0, le=1.0, description="a reference is recalled when its best similarity is > this"
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


def pair_similarities(retrieved: list[str], references: list[str], measure: str) -> np.ndarray:
    """Similarity of every (retrieved[i], references[i]) pair, in one vectorised call."""
    scorer, to_similarity = MEASURES[measure]
    similarities = np.ones(len(retrieved), dtype=np.float64)
    todo = [i for i, (a, b) in enumerate(zip(retrieved, references)) if not _settled(a, b, measure)]
    if todo:
        raw = process.cpdist([retrieved[i] for i in todo], [references[i] for i in todo], scorer=scorer, processor=None, dtype=np.float64)
        similarities[todo] = to_similarity(np.asarray(raw, dtype=np.float64))
    return similarities


class NonLlmContextRecall(Metric):
    name = "nonllm_context_recall"
    description = (
        "Share of reference contexts whose best string similarity with a retrieved context "
        "is above the threshold (ragas NonLLMContextRecall by default)."
    )
    required_fields = ("retrieved_contexts", "reference_contexts")
    Params = StringRecallParams

    def score_batch(self, samples: Sequence[Sample], judge: Judge | None) -> list[Score]:
        params: StringRecallParams = self.params  # type: ignore[assignment]
        left: list[str] = []
        right: list[str] = []
        for sample in samples:
            for reference in sample.reference_contexts or []:
                for retrieved in sample.retrieved_contexts or []:
                    left.append(retrieved)
                    right.append(reference)
        similarities = pair_similarities(left, right, params.measure)
        scores = []
        offset = 0
        for sample in samples:
            n_retrieved = len(sample.retrieved_contexts or [])
            n_references = len(sample.reference_contexts or [])
            block = similarities[offset : offset + n_retrieved * n_references].reshape(n_references, n_retrieved)
            offset += n_retrieved * n_references
            scores.append(_score_block(block, params.threshold))
        return scores


def _score_block(block: np.ndarray, threshold: float) -> Score:
    """Score one sample from its references x retrieved similarity matrix."""
    n_references, n_retrieved = block.shape
    if n_references == 0:
        return Score(value=float("nan"), details={"references": []})
    references: list[dict[str, Any]] = []
    if n_retrieved == 0:
        references = [{"best_index": None, "similarity": 0.0, "recalled": False} for _ in range(n_references)]
    else:
        best = block.argmax(axis=1)
        for row, index in enumerate(best.tolist()):
            similarity = float(block[row, index])
            references.append({"best_index": index, "similarity": similarity, "recalled": similarity > threshold})
    recalled = sum(1 for r in references if r["recalled"])
    return Score(value=recalled / n_references, details={"references": references})
