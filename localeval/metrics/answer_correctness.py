"""Answer correctness: factual correctness and semantic similarity, weighed together.

ragas' AnswerCorrectness (`answer_correctness`; fields response and reference): a weighted mean of
the F-beta of the response's statements against the reference's and the semantic similarity of
the two texts, with ragas' default weights 0.75 and 0.25 (`weights`) and beta 1 (`beta`):

    score = (w_f * F-beta(TP, FP, FN) + w_s * cosine) / (w_f + w_s)

- TP, FP and FN are factual_correctness' counts (localeval.metrics.factual_correctness), from its
  verdicts: the same statements, the same grader, the same prompts. Within a run that also scores
  factual_correctness with the same statement options, each verdict is asked once
  (localeval.judge.shared): answer_correctness adds no judge call to it. ragas' F-beta is not
  rounded here (factual_correctness rounds its own score to two decimals, as ragas does there),
  and where neither text has a statement it is 1, as ragas' AnswerCorrectness sets it.
- The cosine is semantic_similarity's (localeval.metrics.semantic_similarity: all-MiniLM-L6-v2 in
  numpy, an empty text embedded as " "), one embedding call for the two texts; none with a
  similarity weight of 0 (ragas computes no similarity then, and counts it 0). A cosine below 0
  counts 0, so the score stays in [0, 1] (ragas would report the negative part).
- With a factuality weight of 0 no statement is judged (ragas still asks its LLM, for a figure
  it then weighs 0): no judge is loaded, and the score is the similarity.

`--verifier` (`grader`) decides the statements; the embedding needs no judge.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Annotated, Any, Literal

from pydantic import BaseModel, BeforeValidator, Field

from localeval.data.samples import Sample
from localeval.graders.judge_rule import ATTRIBUTION_CALIBRATION, ATTRIBUTION_FEATURES, ATTRIBUTION_KEY
from localeval.judge import Judge
from localeval.metrics.base import MAX_ITEMS, Score, shorten
from localeval.metrics.factual_correctness import BetaOption, FactualCorrectness, FactualParams, fbeta_score
from localeval.metrics.judging import JudgeMetric
from localeval.metrics.recall import RecallParams, StatementVerdict
from localeval.metrics.semantic_similarity import cut_note, cut_texts, embedded_text, pair_cosines, with_embedding_model

DEFAULT_WEIGHTS = (0.75, 0.25)  # ragas' factuality and similarity weights


def _two_weights(value: Any) -> Any:
    """ragas' checks of `weights`, with its messages: two numbers, none negative, not both 0; a
    command line's "0.9,0.1" is read as the two numbers."""
    if isinstance(value, str):
        value = [part.strip() for part in value.strip().strip("[]()").split(",")]
    if not isinstance(value, (list, tuple)) or len(value) != 2:
        raise ValueError("expects a list of two weights: first for factuality, second for semantic similarity (e.g. 0.75,0.25)")
    numbers = []
    for item in value:
        if isinstance(item, bool):
            raise ValueError("a weight is a number, not true or false")
        try:
            number = float(item)
        except (TypeError, ValueError):
            raise ValueError(f"a weight is a number, not {item!r}") from None
        if not math.isfinite(number) or number < 0:
            raise ValueError(f"weights must be finite, non-negative numbers, not {item!r}")
        numbers.append(number)
    if not any(numbers):
        raise ValueError("at least one weight must be non-zero")
    return numbers


class CorrectnessParams(RecallParams):
    statements: Literal["sentences", "claims"] = Field(
        "sentences", description="sentences: pysbd sentences of the response and of the reference; claims: the judge decomposes each first (factual_correctness' statements)"
    )
    weights: Annotated[list[float], BeforeValidator(_two_weights)] = Field(
        list(DEFAULT_WEIGHTS), description="the weights of factual correctness (F-beta of the statements) and of semantic similarity (ragas' weights; on the command line 0.75,0.25)"
    )
    beta: BetaOption = Field(1.0, description="the F-beta weight: above 1 weighs recall more, below 1 precision (ragas' beta)")


class CorrectnessDetails(BaseModel):
    factuality: float | None = None  # F-beta of the counts (1 where neither text has a statement); None with a factuality weight of 0 (not judged)
    similarity: float | None = None  # the cosine; None with a similarity weight of 0 (not computed)
    weights: list[float]
    tp: int | None = None
    fp: int | None = None
    fn: int | None = None
    response_statements: list[StatementVerdict] = Field(default_factory=list)
    reference_statements: list[StatementVerdict] = Field(default_factory=list)
    cut: list[str] = Field(default_factory=list)  # texts the embedding read the beginning of (semantic_similarity's cut_texts)


def correctness_score(factuality: float, similarity: float, weights: Sequence[float]) -> float:
    """ragas' np.average([f1, similarity], weights=weights), the similarity held at 0 from below.
    The weights are divided by the larger first: only their ratio counts, and weights near the
    float's limits (1e308 twice) would otherwise overflow their sum into inf / inf, NaN."""
    largest = max(weights)
    factual_weight, similarity_weight = weights[0] / largest, weights[1] / largest
    return (factual_weight * factuality + similarity_weight * max(0.0, similarity)) / (factual_weight + similarity_weight)


class AnswerCorrectness(JudgeMetric[CorrectnessParams]):
    name = "answer_correctness"
    description = "Weighted mean of the F1 of the response's and the reference's statements (factual_correctness' verdicts) and their embeddings' cosine similarity (ragas' 0.75/0.25)."
    required_fields = ("response", "reference")
    by_default = False  # named to run: localeval.metrics.DEFAULT_METRICS says why
    calibration_key = ATTRIBUTION_KEY  # factual_correctness' verdicts, attributed as context_recall's are
    calibration_features = ATTRIBUTION_FEATURES
    default_calibration = ATTRIBUTION_CALIBRATION
    Params = CorrectnessParams
    Details = CorrectnessDetails

    def describe_params(self) -> dict[str, Any]:
        """The options, the grader's record, and the embedding model's SHA-256 where the similarity
        counts (loaded here, so a missing model stops a run before its first sample)."""
        described = super().describe_params()
        return with_embedding_model(described) if self.params.weights[1] else described

    def uses_judge(self) -> bool:
        """The statements' grader, unless factuality weighs 0: then no statement is judged (as no
        embedding is computed with a similarity weight of 0), and the score is the similarity."""
        return bool(self.params.weights[0]) and super().uses_judge()

    def _factual(self) -> FactualCorrectness:
        """factual_correctness in f1 mode with these statement options: the very prompts it asks."""
        shared = {key: getattr(self.params, key) for key in RecallParams.model_fields}
        return FactualCorrectness(FactualParams.model_construct(**shared, mode="f1", beta=self.params.beta))  # validated as these options

    def score_batch(self, samples: Sequence[Sample], judge: Judge | None) -> list[Score]:
        weights = self.params.weights
        factual = self._factual()
        counted = [factual.score_sample(sample, judge) if weights[0] else None for sample in samples]
        cosines: list[float | None] = [None] * len(samples)
        cut: list[list[str]] = [[] for _ in samples]
        if weights[1]:
            cosines = list(pair_cosines([embedded_text(s.response) for s in samples], [embedded_text(s.reference) for s in samples]))
            cut = [cut_texts(s.response, s.reference) for s in samples]
        return [self._combined(found, cosine, texts) for found, cosine, texts in zip(counted, cosines, cut)]

    def _combined(self, found: Score | None, cosine: float | None, cut: list[str]) -> Score:
        if found is None:  # factuality weighs 0: the similarity alone, nothing judged
            similarity = cosine if cosine is not None else 0.0
            alone: dict[str, Any] = {"weights": list(self.params.weights), "similarity": round(similarity, 4)}
            if cut:
                alone["cut"] = cut
            return Score(value=max(0.0, similarity), details=alone)
        counts = found.details
        tp, fp, fn = counts["tp"], counts["fp"], counts["fn"]
        response, reference = counts.get("response_statements", []), counts.get("reference_statements", [])
        factuality = 1.0 if not response and not reference else fbeta_score(tp, fp, fn, self.params.beta)
        weights = self.params.weights
        value = correctness_score(factuality, cosine if cosine is not None else 0.0, weights)
        details: dict[str, Any] = {
            "factuality": round(factuality, 4), "weights": list(weights), "tp": tp, "fp": fp, "fn": fn,
            "response_statements": response, "reference_statements": reference,
        }
        if cosine is not None:
            details["similarity"] = round(cosine, 4)
        if cut:
            details["cut"] = cut
        return Score(value=value, details=details, usage=found.usage)

    @classmethod
    def explain(cls, details: CorrectnessDetails) -> str:
        similarity = f"similarity {details.similarity:.2f}" if details.similarity is not None else "similarity not counted (weight 0)"
        if details.factuality is None or details.tp is None or details.fp is None:
            return f"factuality not counted (weight 0), {similarity}" + cut_note(details.cut)
        said = f"factuality {details.factuality:.2f} ({details.tp} of {details.tp + details.fp} response statements supported, {details.fn} reference statements missed), {similarity}"
        wrong = [f"unsupported '{shorten(s.statement)}'" for s in details.response_statements if not s.attributed]
        wrong += [f"missed '{shorten(s.statement)}'" for s in details.reference_statements if not s.attributed]
        return said + cut_note(details.cut) + (": " + "; ".join(wrong[:MAX_ITEMS]) if wrong else "")
