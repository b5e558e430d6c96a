"""LLM context recall: the share of the reference's statements attributable to the retrieved context.

ragas' LLMContextRecall, one judge call per statement so that each call shares the
sample's cached prefix and each verdict comes with its own short reason.
"""

from __future__ import annotations

from typing import Any, Literal, Sequence

from pydantic import BaseModel, ConfigDict, Field

from localeval.judge import Judge
from localeval.judge.prompts import CLAIMS_TASK, RECALL_TASK, context_block, messages
from localeval.metrics.base import MAX_ITEMS, Metric, Score, shorten
from localeval.metrics.judging import UsageTally, context_sentences, fit_windows
from localeval.samples import Sample
from localeval.text import split_sentences

REASON_CHARS = 160  # bounds the reason so a weak model cannot ramble until max_tokens
CLAIM_CHARS = 200
MAX_CLAIMS = 12
REASON_TOKENS = REASON_CHARS // 2  # generous: a token is 3-4 characters of English
# The answer is {"attributed": 0 or 1, "reason": "..."}. The verdict is read as the
# probability of "1" at the verdict's position; the reason is then written for
# the verdict taken, under a string grammar.
VERDICT_KEY = "attributed"
VERDICT_PREFIX = '{"%s": ' % VERDICT_KEY
REASON_PREFIX = VERDICT_PREFIX + '%d, "reason": "'
DEFAULT_THRESHOLD = 0.5


class Claims(BaseModel):
    claims: list[str] = Field(min_length=1, max_length=MAX_CLAIMS, json_schema_extra={"items": {"type": "string", "maxLength": CLAIM_CHARS}})


class RecallParams(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    statements: Literal["sentences", "claims"] = Field(
        "sentences", description="sentences: pysbd sentences of the reference; claims: the judge decomposes it first"
    )
    reasons: bool = Field(True, description="ask the judge for a short reason with each verdict")
    threshold: float | None = Field(
        None,
        ge=0.0,
        le=1.0,
        description="a statement counts as attributed when the judge's probability of 'attributed' reaches this; "
        "default: the judge's threshold calibrated on the dev sets (models/catalog.toml), else 0.5",
    )


class StatementVerdict(BaseModel):
    statement: str
    attributed: Literal[0, 1]
    probability: float
    reason: str | None = None


class RecallDetails(BaseModel):
    statements: list[StatementVerdict]
    windows: int | None = None


def decision_threshold(params: RecallParams, judge: Judge) -> float:
    """The option if given, else the judge's calibrated threshold, else 0.5."""
    return params.threshold if params.threshold is not None else judge.thresholds.get(VERDICT_KEY, DEFAULT_THRESHOLD)


class ContextRecall(Metric[RecallParams]):
    name = "context_recall"
    description = "Share of the reference's statements that the judge can attribute to the retrieved contexts."
    required_fields = ("user_input", "retrieved_contexts", "reference")
    needs_judge = True
    Params = RecallParams
    Details = RecallDetails

    def score_batch(self, samples: Sequence[Sample], judge: Judge | None) -> list[Score]:
        assert judge is not None
        return [self._score(sample, judge) for sample in samples]

    def _score(self, sample: Sample, judge: Judge) -> Score:
        params = self.params
        sentences = context_sentences(sample)
        question = sample.user_input or ""
        reference = sample.reference or ""
        tally = UsageTally()
        if params.statements == "claims" and reference.strip():
            claims_task = CLAIMS_TASK.format(question=question, reference=reference)
            window = fit_windows(sentences, judge, claims_task, MAX_CLAIMS * CLAIM_CHARS // 3)[0]
            answer, usage = judge.ask(messages(context_block([(i + 1, sentences[i]) for i in window]), claims_task), Claims)
            tally.add(usage)
            statements = [c.strip() for c in answer.claims if c.strip()]
        else:
            statements = split_sentences(reference)
        return self.score_statements(sample, statements, judge, tally)

    def score_statements(self, sample: Sample, statements: Sequence[str], judge: Judge, tally: UsageTally | None = None) -> Score:
        """Judge given statements against the sample's context (the accuracy benchmark feeds
        human-segmented statements here, through the same prompts as a normal run)."""
        params = self.params
        tally = tally or UsageTally()
        if not statements:
            return Score(value=float("nan"), details={"statements": []})
        sentences = context_sentences(sample)
        question = sample.user_input or ""
        threshold = decision_threshold(params, judge)
        answer_tokens = 8 + (REASON_TOKENS if params.reasons else 0)
        longest = max(statements, key=len)
        windows = fit_windows(sentences, judge, RECALL_TASK.format(question=question, statement=longest), answer_tokens)
        blocks = [context_block([(i + 1, sentences[i]) for i in window]) for window in windows]
        verdicts: list[dict[str, Any]] = []
        for statement in statements:
            task = RECALL_TASK.format(question=question, statement=statement)
            probability, deciding = -1.0, messages(blocks[0], task)
            for block in blocks:  # attributed when any window supports it: the best window decides
                prompt = messages(block, task)
                (_, window_probability), usage = judge.choose(prompt, VERDICT_PREFIX, ("0", "1"))
                tally.add(usage)
                if window_probability > probability:
                    probability, deciding = window_probability, prompt
                if probability >= threshold:
                    break
            attributed = int(probability >= threshold)
            verdict: dict[str, Any] = {"statement": statement, "attributed": attributed, "probability": round(probability, 4)}
            if params.reasons:
                verdict["reason"], usage = judge.write_string(deciding, REASON_PREFIX % attributed, REASON_CHARS)
                tally.add(usage)
            verdicts.append(verdict)
        details: dict[str, Any] = {"statements": verdicts}
        if len(windows) > 1:
            details["windows"] = len(windows)
        attributed = sum(v["attributed"] for v in verdicts)
        return Score(value=attributed / len(verdicts), details=details, usage=tally.as_dict())

    @classmethod
    def explain(cls, details: RecallDetails) -> str:
        if not details.statements:
            return "the reference has no statements"
        missed = [s for s in details.statements if not s.attributed]
        if not missed:
            return "all statements attributed"
        parts = [f"'{shorten(s.statement)}'" + (f" ({shorten(s.reason)})" if s.reason else "") for s in missed[:MAX_ITEMS]]
        more = f" and {len(missed) - MAX_ITEMS} more" if len(missed) > MAX_ITEMS else ""
        return f"{len(missed)} of {len(details.statements)} statements not attributed: " + "; ".join(parts) + more
