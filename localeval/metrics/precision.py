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

The verdict is one token, Yes or No, read from the logits (localeval.judge.prompts.USEFULNESS_USER:
question and answer first, so every context of a sample reuses their cached prefix); a context
too long for the window is judged in pieces and counts by its best piece. P(useful) is the
calibration "usefulness" over the judge's log-odds, and a context is useful when P reaches
`threshold`. The default judge says Yes to almost every paragraph (P(Yes) >= 0.5 for 97% of
HotpotQA's ten paragraphs, where a quarter hold a supporting fact) but ranks them well (AUC
0.83): its P(Yes) read as is made almost every context useful. The catalog's table for it is
fitted on the paragraphs of 8 HotpotQA dev questions (`benchmarks/faithfulness_accuracy.py
--fit-usefulness 8`, the half its figures never score): useful from P(Yes) of about 0.72.

With `verifier`: no judge; a context is useful when the reference's (or response's) statement
it best supports is attributed to it by the verifier (context_recall's verifier verdict, the
best over the answer's statements): an answer is arrived at from a context that states part of
it. A sample whose answer is blank scores NaN: there is nothing to arrive at.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any, Literal

from pydantic import BaseModel, Field

from localeval.calibration import LogisticModel
from localeval.errors import JudgeError
from localeval.judge import Judge
from localeval.judge.prompts import USEFULNESS_PLACEHOLDERS, USEFULNESS_REQUIRED, usefulness_messages
from localeval.metrics.base import MAX_ITEMS, Score, ShareOption
from localeval.metrics.judging import JudgeMetric, JudgeParams, UsageTally, chunk_sentences, rubric_tokens, yes_log_odds
from localeval.metrics.ranking import average_precision
from localeval.metrics.recall import verified_windows
from localeval.rubric import JudgeTaskParams
from localeval.samples import Sample
from localeval.text import split_sentences
from localeval.verifier import load_verifier

CALIBRATION_KEY = "usefulness"
FEATURES = ("judge",)
# For a judge without a fitted table (a GGUF file not in the catalog): round numbers of the
# default judge's (localeval/catalog.toml): a small judge's Yes is cheap, so a context is useful
# from P(Yes) of about 0.72; a calibration file's "usefulness" table (intercept, judge) replaces it.
DEFAULT_CALIBRATION = LogisticModel(intercept=-2.4, weights={"judge": 2.5})
DEFAULT_THRESHOLD = 0.5
PROMPT_OVERHEAD = 120  # tokens of instructions and wording around question, answer and paragraph


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
        "verifier": "decide with localeval's trained verifier instead of the judge: a context is useful when it supports one of the answer's statements (context_recall's verifier verdict)",
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
        if not answer:
            return Score(value=float("nan"), details={"against": self.params.against, "contexts": [], "blank_answer": True})
        contexts = list(sample.retrieved_contexts or [])
        if self.params.verifier:
            verdicts, usage = self._verified(contexts, answer), None
        else:
            assert judge is not None
            tally = UsageTally()
            verdicts, usage = self._judged(contexts, sample.user_input or "", answer, judge, tally), tally.as_dict()
        value = average_precision([bool(v["useful"]) for v in verdicts])
        return Score(value=value, details={"against": self.params.against, "contexts": verdicts}, usage=usage)

    def _judged(self, contexts: Sequence[str], question: str, answer: str, judge: Judge, tally: UsageTally) -> list[dict[str, Any]]:
        """Each context's P(useful) from the judge's log-odds (its best piece's, for a context read
        in pieces); a blank context is not useful, without a judge call."""
        params = self.params
        budget = judge.context_size - PROMPT_OVERHEAD - rubric_tokens(judge, params.rubric) - judge.count_tokens(question) - judge.count_tokens(answer)
        if budget <= 0:
            raise JudgeError(f"the instructions, question and {params.against} leave no room for a context in the model's window of {judge.context_size} tokens; raise --n-ctx")
        model = self.calibration_for(judge.calibration)
        verdicts = []
        for context in contexts:
            sentences = split_sentences(context, params.language)
            if not sentences:
                verdicts.append({"useful": 0, "probability": 0.0})
                continue
            best = -math.inf
            for piece in chunk_sentences(sentences, judge.count_tokens, budget, budget):
                value, usage = yes_log_odds(judge, usefulness_messages(" ".join(sentences[i] for i in piece), question, answer, params.rubric))
                tally.add(usage)
                best = max(best, value)
            probability = model.probability({"judge": best})
            verdicts.append({"useful": int(probability >= params.threshold), "probability": round(probability, 4), "judge_log_odds": round(best, 4)})
        return verdicts

    def _verified(self, contexts: Sequence[str], answer: str) -> list[dict[str, Any]]:
        """Each context's P(useful): the verifier's calibrated attribution probability of the
        answer's statement it supports best (context_recall's verifier verdict per statement)."""
        verifier = load_verifier()
        calibration = verifier.calibration["attribution"]
        statements = split_sentences(answer, self.params.language)
        verdicts = []
        for context in contexts:
            sentences = split_sentences(context, self.params.language)
            if not sentences:
                verdicts.append({"useful": 0, "probability": 0.0})
                continue
            logit = max(read.logit for read in verified_windows(verifier, statements, sentences, self.params.language))
            probability = calibration.probability(logit)
            verdicts.append({"useful": int(probability >= self.params.threshold), "probability": round(probability, 4), "verifier": round(logit, 4)})
        return verdicts

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
