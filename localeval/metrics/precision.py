"""LLM context precision: are the retrieved contexts that help arrive at the answer ranked first?

ragas' LLMContextPrecisionWithReference (and, with `against=response`,
LLMContextPrecisionWithoutReference): each retrieved context is judged useful or not for
arriving at the answer (the reference, or the response) to the question, then the verdicts in
retrieval order give ragas' average precision:

    score = sum over the useful ranks k of (useful contexts among the first k) / k,
            divided by the number of useful contexts; 0 when none is useful (and for no context).

ragas divides by (useful contexts + 1e-10), so its scores fall short of the exact figure by at
most 1e-10 of it (a perfect ranking gives it 0.9999999999); localeval divides by the count, so a
perfect ranking is 1.0 and meets a threshold of 1.

Each context is decided by the grader the options name (localeval.graders). The judge rule:
one token, Yes or No, read from the logits (localeval.judge.prompts.USEFULNESS_USER: question
and answer first, so every context of a sample reuses their cached prefix); a context too long
for the window is judged in pieces and counts by its best piece. P(useful) is the calibration
"usefulness" over the judge's log-odds, and a context is useful when P reaches `threshold`. The
default judge says Yes to almost every paragraph (P(Yes) >= 0.5 for 97% of HotpotQA's ten
paragraphs, where a quarter hold a supporting fact) but ranks them well (AUC 0.83): its P(Yes)
read as is made almost every context useful. The catalog's table for it is fitted on the
paragraphs of 8 HotpotQA dev questions (`benchmarks/faithfulness_accuracy.py --fit-usefulness
8`, the half its figures never score): useful from P(Yes) of about 0.72.

With `grader=verifier`: no judge; a context is useful when the reference's (or response's) statement
it best supports is attributed to it by the verifier (context_recall's verifier verdict, the
best over the answer's statements): an answer is arrived at from a context that states part of
it. A sample whose answer is blank scores NaN: there is nothing to arrive at.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Literal

from pydantic import BaseModel, Field

from localeval.data.samples import Sample
from localeval.data.text import is_blank
from localeval.graders import Usefulness
from localeval.graders.judge_rule import USEFULNESS_CALIBRATION as DEFAULT_CALIBRATION
from localeval.graders.judge_rule import USEFULNESS_FEATURES as FEATURES
from localeval.graders.judge_rule import USEFULNESS_KEY as CALIBRATION_KEY
from localeval.judge import Judge
from localeval.judge.prompts import USEFULNESS_PLACEHOLDERS, USEFULNESS_REQUIRED
from localeval.judge.reading import UsageTally
from localeval.judge.rubric import JudgeTaskParams
from localeval.metrics.base import MAX_ITEMS, Score, ShareOption
from localeval.metrics.judging import JudgeMetric, JudgeParams
from localeval.metrics.ranking import average_precision

DEFAULT_THRESHOLD = 0.5


class PrecisionOptions(JudgeTaskParams):
    """context_precision's own options (PrecisionParams adds the judge metrics' shared ones)."""

    against: Literal["reference", "response"] = Field(
        "reference", description="the answer a context must help arrive at: the reference (ragas' LLMContextPrecisionWithReference) or, for samples without one, the response (LLMContextPrecisionWithoutReference)"
    )
    threshold: ShareOption = Field(
        DEFAULT_THRESHOLD, description="a context is useful when its calibrated probability reaches this"
    )


class PrecisionParams(JudgeParams, PrecisionOptions):
    rubric_allowed = USEFULNESS_PLACEHOLDERS
    rubric_required = USEFULNESS_REQUIRED
    option_help = {
        "language": "language of the texts, for sentence splitting (any pysbd language)",
        "rubric": "a file whose text replaces the judge's task ({placeholders}: {question}, {answer}, {paragraph}); it must ask for Yes or No",
        "grader": "what decides: judge (the judge's usefulness verdict), verifier (localeval's trained verifier alone: a context is useful when it supports one of the answer's statements, context_recall's verifier verdict) or stacked (the judge's verdict: no labelled rows fit a stacked model of usefulness); verifier=true/false is grader=verifier/judge",
    }


class ContextVerdict(BaseModel):
    useful: Literal[0, 1]
    probability: float
    judge_log_odds: float | None = None
    verifier: float | None = None


class PrecisionDetails(BaseModel):
    against: Literal["reference", "response"] = "reference"
    contexts: list[ContextVerdict] = Field(default_factory=list)
    blank_answer: bool = False


class ContextPrecision(JudgeMetric[PrecisionParams]):
    name = "context_precision"
    description = "Average precision of the retrieved contexts' ranking, each judged useful or not for arriving at the reference (or the response)."
    required_fields = ("user_input", "retrieved_contexts", "reference")
    calibration_key = CALIBRATION_KEY
    calibration_features = FEATURES
    default_calibration = DEFAULT_CALIBRATION
    Params = PrecisionParams
    Details = PrecisionDetails

    def missing_fields(self, sample: Sample) -> list[str]:
        """The question, the contexts and the answer `against` names (the response, with
        against=response: a sample without a reference is scored then)."""
        wanted = ("user_input", "retrieved_contexts", self.params.against)
        return [name for name in wanted if getattr(sample, name) is None]

    def score_batch(self, samples: Sequence[Sample], judge: Judge | None) -> list[Score]:
        return [self._score(sample, judge) for sample in samples]

    def _score(self, sample: Sample, judge: Judge | None) -> Score:
        answer = (getattr(sample, self.params.against) or "").strip()
        if is_blank(answer):
            return Score(value=float("nan"), details={"against": self.params.against, "contexts": [], "blank_answer": True})
        grader, tally = self.grader(judge), UsageTally()
        found = grader.useful(sample.user_input or "", answer, list(sample.retrieved_contexts or []), tally, self.params.against)
        verdicts = [self._verdict(usefulness) for usefulness in found]
        value = average_precision([bool(v["useful"]) for v in verdicts])
        return Score(value=value, details={"against": self.params.against, "contexts": verdicts}, usage=self.usage(grader, tally))

    def _verdict(self, usefulness: Usefulness | None) -> dict[str, Any]:
        """A context's verdict in the details: useful at the threshold, P(useful) and the grader's
        reading; a blank context is not useful (nothing was asked)."""
        if usefulness is None:
            return {"useful": 0, "probability": 0.0}
        return {
            "useful": int(usefulness.probability >= self.params.threshold),
            "probability": round(usefulness.probability, 4),
            **{name: round(value, 4) for name, value in usefulness.reading.items()},
        }

    @classmethod
    def explain(cls, details: PrecisionDetails) -> str:
        if details.blank_answer:
            return f"the {details.against} is blank: there is no answer to arrive at"
        if not details.contexts:
            return "no retrieved context"
        ranks = [str(rank) for rank, verdict in enumerate(details.contexts, start=1) if verdict.useful]
        if not ranks:
            return f"none of the {len(details.contexts)} contexts is useful for arriving at the {details.against}"
        shown = ", ".join(ranks[:MAX_ITEMS]) + (f" and {len(ranks) - MAX_ITEMS} more" if len(ranks) > MAX_ITEMS else "")
        return f"useful for arriving at the {details.against}: context{'s' if len(ranks) > 1 else ''} at rank {shown} of {len(details.contexts)}"
