"""Factual correctness: the response's statements against the reference's, both ways.

ragas' FactualCorrectness (fields response and reference): the response's statements are
checked against the reference, and (for `recall` and `f1`) the reference's against the
response. With ragas' counts (ragas 0.4.3, `_single_turn_ascore`, and its docs):

    TP = response statements the reference supports     FP = response statements it does not
    FN = reference statements the response does not support
    precision = TP / (TP + FP)    recall = TP / (TP + FN)    f1 = F-beta(TP, FP, FN), beta 1

precision is the share of the response's statements attributed to the reference. recall counts
its TP on the response's side, as ragas does: where the two texts' statements pair up one to
one it is the share of the reference's statements the response supports (the details give
that share too, `reference_supported`). Each score is rounded to two decimals, as ragas rounds
it; precision and recall add ragas' 1e-8 to the denominator, so a response without statements
scores 0, never NaN, and F-beta is 0 when precision and recall are both 0 (ragas' fbeta_score).

Every part is faithfulness' and context_recall's (localeval.metrics.recall): the statements are
the ones those metrics take from the same text (pysbd sentences, or with `statements=claims`
the judge's decomposition, asked once per batch for a text several metrics decompose:
localeval.judge.shared), and each is decided by the same grader (the judge rule and its
"attribution" calibration, or `--verifier`) reading the other text as its evidence, with the
same evidence sentences and reasons. The question never reaches a verdict. A reason names the
other text (the reference for a response statement, the response for a reference one) where
context_recall's names the context; a blank one supports no statement.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Annotated, Any, Literal

from pydantic import BaseModel, BeforeValidator, Field

from localeval.data.samples import Sample
from localeval.graders.judge_rule import ATTRIBUTION_CALIBRATION, ATTRIBUTION_FEATURES, ATTRIBUTION_KEY
from localeval.judge import Judge
from localeval.judge.reading import UsageTally
from localeval.metrics.base import MAX_ITEMS, Score, refuse_non_finite, shorten
from localeval.metrics.faithfulness import Faithfulness
from localeval.metrics.judging import JudgeMetric
from localeval.metrics.recall import ContextRecall, RecallParams, StatementVerdict

EPSILON = 1e-8  # ragas' guard in precision and recall's denominators
DECIMALS = 2  # ragas rounds the score to two decimals


def _positive(value: Any) -> Any:
    if isinstance(value, bool):
        raise ValueError("expected a number above 0, not true or false")
    refuse_non_finite(value, "a number above 0 and at most 100")
    return value


# ragas' beta: F-beta's weight of recall over precision, a number above 0.
BetaOption = Annotated[float, BeforeValidator(_positive), Field(gt=0.0, le=100.0, allow_inf_nan=False)]


class FactualParams(RecallParams):
    statements: Literal["sentences", "claims"] = Field(
        "sentences", description="sentences: pysbd sentences of the response and of the reference; claims: the judge decomposes each first (the statements faithfulness and context_recall take from them)"
    )
    mode: Literal["precision", "recall", "f1"] = Field(
        "f1", description="precision: the response's statements supported by the reference; recall: against the reference's statements the response misses (ragas' counts); f1: both"
    )
    beta: BetaOption = Field(
        1.0, description="f1's F-beta weight: above 1 weighs recall more, below 1 precision (ragas' beta)"
    )


class FactualDetails(BaseModel):
    mode: Literal["precision", "recall", "f1"]
    tp: int
    fp: int
    fn: int | None = None  # not counted in precision mode (the reference is not decomposed)
    precision: float
    recall: float | None = None
    reference_supported: float | None = None  # share of the reference's statements the response supports
    response_statements: list[StatementVerdict] = Field(default_factory=list)
    reference_statements: list[StatementVerdict] = Field(default_factory=list)


def fbeta_score(tp: int, fp: int, fn: int, beta: float = 1.0) -> float:
    """ragas' fbeta_score: precision and recall 0 when their denominator is, and 0 when both are 0."""
    precision = tp / (tp + fp) if tp + fp else 0.0
    recall = tp / (tp + fn) if tp + fn else 0.0
    if precision == 0 and recall == 0:
        return 0.0
    return (1 + beta**2) * precision * recall / (beta**2 * precision + recall)


def factual_score(mode: str, tp: int, fp: int, fn: int, beta: float = 1.0) -> float:
    """ragas' score for the counts, rounded as ragas rounds it."""
    if mode == "precision":
        score = tp / (tp + fp + EPSILON)
    elif mode == "recall":
        score = tp / (tp + fn + EPSILON)
    else:
        score = fbeta_score(tp, fp, fn, beta)
    return round(score, DECIMALS)


def _as_evidence(sample: Sample, text: str) -> Sample:
    """The sample with `text` as its only retrieved context: what the attribution engine reads a
    statement against."""
    return sample.model_copy(update={"retrieved_contexts": [text]})


class FactualCorrectness(JudgeMetric[FactualParams]):
    name = "factual_correctness"
    description = "F1 (or precision, or recall) of the response's statements supported by the reference and the reference's supported by the response (ragas' counts)."
    required_fields = ("response", "reference")
    by_default = False  # named to run: localeval.metrics.DEFAULT_METRICS says why
    calibration_key = ATTRIBUTION_KEY  # its statements are attributed as context_recall's are
    calibration_features = ATTRIBUTION_FEATURES
    default_calibration = ATTRIBUTION_CALIBRATION
    Params = FactualParams
    Details = FactualDetails

    def score_batch(self, samples: Sequence[Sample], judge: Judge | None) -> list[Score]:
        return [self.score_sample(sample, judge) for sample in samples]

    def score_sample(self, sample: Sample, judge: Judge | None) -> Score:
        """One sample's counts and verdicts (answer_correctness reads them too)."""
        tally = UsageTally()
        response, reference = sample.response or "", sample.reference or ""
        # The engines of faithfulness (the response's statements) and context_recall (the
        # reference's), with these options: the same statements those metrics take.
        response_side, reference_side = Faithfulness(self.params), ContextRecall(self.params)
        statements = response_side.statements_of(sample, judge, tally)
        checked = response_side.score_statements(_as_evidence(sample, reference), statements, judge, tally, evidence_name="reference")
        response_verdicts = checked.details.get("statements", [])
        tp = sum(v["attributed"] for v in response_verdicts)
        fp = len(response_verdicts) - tp
        details: dict[str, Any] = {"mode": self.params.mode, "tp": tp, "fp": fp, "precision": round(tp / (tp + fp + EPSILON), 4), "response_statements": response_verdicts}
        fn = 0
        if self.params.mode != "precision":
            covered = reference_side.statements_of(sample, judge, tally)
            found = reference_side.score_statements(_as_evidence(sample, response), covered, judge, tally, evidence_name="response")
            reference_verdicts = found.details.get("statements", [])
            fn = sum(1 for v in reference_verdicts if not v["attributed"])
            supported = len(reference_verdicts) - fn
            details.update(fn=fn, recall=round(tp / (tp + fn + EPSILON), 4), reference_statements=reference_verdicts)
            if reference_verdicts:
                details["reference_supported"] = round(supported / len(reference_verdicts), 4)
        value = factual_score(self.params.mode, tp, fp, fn, self.params.beta)
        return Score(value=value, details=details, usage=tally.as_dict() if tally.calls or tally.reused else None)

    @classmethod
    def explain(cls, details: FactualDetails) -> str:
        counts = f"{details.tp} of {details.tp + details.fp} response statements supported by the reference"
        if details.fn is not None:
            counts += f", {details.fn} reference statements the response misses"
        unsupported = [s for s in details.response_statements if not s.attributed]
        missed = [s for s in details.reference_statements if not s.attributed]
        parts = [f"unsupported '{shorten(s.statement)}'" for s in unsupported[:MAX_ITEMS]]
        parts += [f"missed '{shorten(s.statement)}'" for s in missed[: max(0, MAX_ITEMS - len(parts))]]
        return counts + (": " + "; ".join(parts) if parts else "")
