"""Context relevance: the share of context sentences the judge finds absolutely required.

ragas' ContextRelevancy and promptfoo's context-relevance: sentences are pysbd's
split of the retrieved contexts; the judge returns the numbers of the required
ones (its grammar admits only numbers that exist); score = selected / all, capped
at 1; an empty selection ("insufficient information") scores 0.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any, Literal, Sequence

from pydantic import BaseModel, ConfigDict, Field, create_model

from localeval.errors import JudgeError
from localeval.judge import Judge
from localeval.judge.prompts import CLASSIFY_TASK, RELEVANCE_TASK, context_block, messages
from localeval.metrics.base import Metric, Score
from localeval.metrics.judging import UsageTally, context_sentences, fit_windows
from localeval.samples import Sample

TOKENS_PER_INDEX = 4  # "12, " and friends: enough to bound the answer of a full selection
ANSWER_BASE_TOKENS = 16


class RelevanceParams(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    mode: Literal["select", "classify"] = Field(
        "select",
        description="select: the judge lists the required sentences (ragas); classify: a verdict per sentence (promptfoo)",
    )


@lru_cache(maxsize=256)
def selection_schema(numbers: tuple[int, ...]) -> type[BaseModel]:
    """{"sentences": [n, ...]} where each n is one of `numbers`, at most len(numbers) of them."""
    choice = Literal[numbers]  # type: ignore[valid-type]
    return create_model(
        "Selection",
        sentences=(list[choice], Field(max_length=len(numbers))),  # type: ignore[valid-type]
    )


@lru_cache(maxsize=256)
def verdicts_schema(count: int) -> type[BaseModel]:
    """{"relevant": [0 or 1, ...]} with exactly `count` verdicts."""
    return create_model(
        "Verdicts",
        relevant=(list[Literal[0, 1]], Field(min_length=count, max_length=count)),
    )


class RelevanceDetails(BaseModel):
    selected: list[int]
    selected_sentences: list[str]
    n_selected: int
    n_sentences: int
    windows: int | None = None


class ContextRelevance(Metric[RelevanceParams]):
    name = "context_relevance"
    description = "Share of the retrieved context's sentences that the judge finds absolutely required to answer the question."
    required_fields = ("user_input", "retrieved_contexts")
    needs_judge = True
    Params = RelevanceParams
    Details = RelevanceDetails

    def score_batch(self, samples: Sequence[Sample], judge: Judge | None) -> list[Score]:
        assert judge is not None
        return [self._score(sample, judge) for sample in samples]

    def _score(self, sample: Sample, judge: Judge) -> Score:
        sentences = context_sentences(sample)
        if not sentences:
            return Score(value=0.0, details={"selected": [], "selected_sentences": [], "n_selected": 0, "n_sentences": 0})
        classify = self.params.mode == "classify"
        task = (CLASSIFY_TASK if classify else RELEVANCE_TASK).format(question=sample.user_input)
        answer_tokens = ANSWER_BASE_TOKENS + TOKENS_PER_INDEX * len(sentences)
        tally = UsageTally()
        selected: set[int] = set()
        windows = fit_windows(sentences, judge, task, answer_tokens)
        for window in windows:
            block = context_block([(i + 1, sentences[i]) for i in window])
            if classify:
                answer, usage = judge.ask(messages(block, task), verdicts_schema(len(window)))
                selected.update(i for i, verdict in zip(window, answer.relevant) if verdict == 1)  # type: ignore[attr-defined]
            else:
                schema = selection_schema(tuple(i + 1 for i in window))
                answer, usage = judge.ask(messages(block, task), schema)
                picked = {n - 1 for n in answer.sentences}  # type: ignore[attr-defined]
                if not picked <= set(window):
                    raise JudgeError("the judge selected a sentence outside its window")
                selected.update(picked)
            tally.add(usage)
        ordered = sorted(selected)
        details: dict[str, Any] = {
            "selected": ordered,
            "selected_sentences": [sentences[i] for i in ordered],
            "n_selected": len(ordered),
            "n_sentences": len(sentences),
        }
        if len(windows) > 1:
            details["windows"] = len(windows)
        return Score(value=min(1.0, len(ordered) / len(sentences)), details=details, usage=tally.as_dict())

    @classmethod
    def explain(cls, details: RelevanceDetails) -> str:
        insufficient = " (insufficient information)" if details.n_sentences and not details.n_selected else ""
        return f"{details.n_selected} of {details.n_sentences} context sentences required{insufficient}"
