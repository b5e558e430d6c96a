"""Answer relevancy: does the response address the question that was asked?

ragas' ResponseRelevancy (`answer_relevancy`; fields user_input and response, legacy question and
answer): questions are written from the response alone, and the score is the mean cosine
similarity of their embeddings to the embedding of the user's question, times 0 when the
response is noncommittal ("I don't know", "I cannot say"). A response that answers the question
lets a reader reconstruct the question; an evasive or off-topic one does not.

- The judge writes the noncommittal flag, all `strictness` questions (ragas' default 3) and,
  for a noncommittal response, a short reason, in one JSON answer under a grammar
  (localeval.judge.prompts.QUESTIONS_SYSTEM): every answer parses, and a sample costs one judge
  call (ragas asks `strictness` times). It reads the response only, never the question. A
  committal verdict's reason is built from the questions instead (the one closest to the
  user's question, and how close): the judge's written tokens are most of the metric's cost.
- The embeddings are all-MiniLM-L6-v2's (localeval.models.embedding: the catalog model, pulled and
  checked by SHA-256, run in numpy), one forward pass for the question and the generated ones.
- Score = mean cosine(question, generated question) x (1 - noncommittal), as ragas 0.4.3's
  `_calculate_score`: NaN when every generated question is blank. Cosine similarity can be
  negative; ragas then reports a negative score, localeval's scores are in [0, 1]: a mean below
  0 scores 0 (the details keep the mean). An empty response answers nothing: 0, noncommittal,
  without a judge call.

The trained verifier cannot score this metric: it reads a pair of texts and gives a number, and
answer_relevancy needs text written (the questions); `--verifier` leaves it to the judge.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import cache
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, RootModel, create_model

from localeval.data.samples import Sample
from localeval.data.text import is_blank
from localeval.judge import Judge
from localeval.judge.prompts import questions_messages
from localeval.judge.reading import UsageTally
from localeval.metrics.base import Metric, Score, shorten
from localeval.metrics.semantic_similarity import with_embedding_model

QUESTION_CHARS = 150  # a generated question is cut off by the grammar here
REASON_CHARS = 150
MAX_STRICTNESS = 10
# A blank question is like no question generated from a response: nothing to compare with (its
# embedding gave about 0.02, a score that looks like an off-topic answer): the sample's error.
BLANK_QUESTION = "the question (user_input) is blank: answer relevancy compares questions written from the response with it"


class Committal(BaseModel):
    """The judge's answer for a response that answers: the flag (ragas' 0), then the questions."""

    noncommittal: Literal[0]
    questions: list[str]


class Noncommittal(BaseModel):
    """The judge's answer for an evasive one: the flag (1), the questions, and why it is noncommittal."""

    noncommittal: Literal[1]
    questions: list[str]
    reason: str = Field(max_length=REASON_CHARS)


class GeneratedQuestions(RootModel[Committal | Noncommittal]):
    """The judge's answer, one of the two: the grammar holds a reason to noncommittal answers
    (a reason in a committal one, a scripted judge's, is ignored). The fields are in the order
    the judge writes them, the flag first (localeval.judge.prompts says why)."""


@cache
def questions_schema(count: int) -> type[GeneratedQuestions]:
    """The answer's schema with exactly `count` questions, for the grammar (one class per count,
    so the judge builds its grammar once)."""
    items: dict[str, Any] = {"items": {"type": "string", "maxLength": QUESTION_CHARS}}
    field: Any = (list[str], Field(min_length=count, max_length=count, json_schema_extra=items))
    committal = create_model(f"Committal{count}", __base__=Committal, questions=field)
    noncommittal = create_model(f"Noncommittal{count}", __base__=Noncommittal, questions=field)
    root: Any = (committal | noncommittal, ...)
    return create_model(f"GeneratedQuestions{count}", __base__=GeneratedQuestions, root=root)


def answer_tokens(count: int) -> int:
    """A ceiling on the answer's tokens that the grammar's bounds cannot reach (a token holds at
    least one byte, a character at most 4; JSON's keys and quotes around them): it never cuts an
    answer. Held to half the judge's window: a server refuses a request the window cannot hold."""
    return 64 + count * (4 * QUESTION_CHARS + 4) + 4 * REASON_CHARS


class AnswerRelevancyParams(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    strictness: int = Field(3, ge=1, le=MAX_STRICTNESS, description="how many questions the judge writes from the response (ragas' strictness)")


class ScoredQuestion(BaseModel):
    question: str
    similarity: float | None = None  # None: not compared (every question was blank)


class RelevancyDetails(BaseModel):
    questions: list[ScoredQuestion] = Field(default_factory=list)
    mean_similarity: float | None = None
    noncommittal: Literal[0, 1]
    reason: str


def cosine_scores(question: Any, generated: Any) -> list[float]:
    """ragas' calculate_similarity: each generated question's cosine similarity to the question
    (the dot product over the product of the norms; the embeddings are unit vectors already),
    in float64 and held to [-1, 1]: float32 vectors of one text give 1 + 1e-7."""
    import numpy as np

    question, generated = np.asarray(question, dtype=np.float64), np.asarray(generated, dtype=np.float64)
    norms = np.linalg.norm(generated, axis=1) * np.linalg.norm(question)
    return [min(1.0, max(-1.0, float(v))) for v in (generated @ question) / norms]


def committal_reason(questions: Sequence[str], similarities: Sequence[float]) -> str:
    """Why a committal response scores what it does, from what the judge wrote: the question it
    answers that is closest to the user's (a blank one never), and how close. The judge writes a
    reason for a noncommittal response only: for the others it would be most of the tokens it
    writes, and the questions already say what the response answers."""
    written = [(similarity, question) for question, similarity in zip(questions, similarities) if question]
    similarity, closest = max(written, key=lambda pair: pair[0])
    return f"committal: it answers '{shorten(closest)}', {similarity:.2f} similar to the question asked"


class AnswerRelevancy(Metric[AnswerRelevancyParams]):
    name = "answer_relevancy"
    description = "Mean cosine similarity of the user's question to questions the judge writes from the response; 0 for a noncommittal response."
    required_fields = ("user_input", "response")
    needs_judge = True
    by_default = False  # named to run: localeval.metrics.DEFAULT_METRICS says why
    Params = AnswerRelevancyParams
    Details = RelevancyDetails

    def describe_params(self) -> dict[str, Any]:
        """The options, and the embedding model (a missing one stops the run before its first sample)."""
        return with_embedding_model(super().describe_params())

    def score_batch(self, samples: Sequence[Sample], judge: Judge | None) -> list[Score]:
        return [self._score(sample, judge) for sample in samples]

    def _score(self, sample: Sample, judge: Judge | None) -> Score:
        response = sample.response or ""
        if is_blank(sample.user_input or ""):
            return Score.failed(BLANK_QUESTION)
        if is_blank(response):
            return Score(value=0.0, details={"questions": [], "noncommittal": 1, "reason": "the response is empty"})
        assert judge is not None
        count = self.params.strictness
        answer, usage = judge.ask(questions_messages(response, count), questions_schema(count), max_tokens=min(answer_tokens(count), judge.context_size // 2))
        tally = UsageTally()
        tally.add(usage)
        verdict = answer.root
        questions = [question.strip() for question in verdict.questions]
        reason = verdict.reason.strip() if isinstance(verdict, Noncommittal) else None
        if all(not question for question in questions):  # ragas: no question generated, no score
            details = {"noncommittal": verdict.noncommittal, "reason": reason or "no question could be written from the response", "questions": [{"question": q} for q in questions]}
            return Score(value=float("nan"), details=details, usage=tally.as_dict())
        return self._from_questions(sample.user_input or "", questions, verdict.noncommittal, reason, tally)

    @staticmethod
    def _from_questions(question: str, questions: Sequence[str], noncommittal: int, reason: str | None, tally: UsageTally) -> Score:
        """The score of the generated questions against the user's question: ragas' mean cosine
        similarity, 0 when noncommittal or below 0. A committal verdict's reason is the question
        closest to the user's and its similarity (`committal_reason`)."""
        from localeval.models.embedding import load_embedder

        vectors = load_embedder().embed([question, *questions])
        similarities = cosine_scores(vectors[0], vectors[1:])
        mean = sum(similarities) / len(similarities)
        value = 0.0 if noncommittal else max(0.0, mean)
        scored = [{"question": q, "similarity": round(s, 4)} for q, s in zip(questions, similarities)]
        if reason is None:
            reason = committal_reason(questions, similarities)
        details = {"questions": scored, "mean_similarity": round(mean, 4), "noncommittal": noncommittal, "reason": reason}
        return Score(value=value, details=details, usage=tally.as_dict())

    @classmethod
    def explain(cls, details: RelevancyDetails) -> str:
        if details.noncommittal:
            return f"noncommittal: {shorten(details.reason)}"
        if not details.questions or details.mean_similarity is None:
            return "no question could be written from the response"
        least = min(details.questions, key=lambda q: q.similarity if q.similarity is not None else 1.0)
        return f"mean similarity {details.mean_similarity:.2f} of {len(details.questions)} questions the response answers; least similar: '{shorten(least.question)}' ({least.similarity or 0.0:.2f})"
