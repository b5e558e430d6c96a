"""What the judge metrics share: the context's sentences, windows that fit the model, usage totals."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

from localeval.errors import JudgeError
from localeval.judge import Judge, Usage
from localeval.judge.prompts import SYSTEM, context_block
from localeval.samples import Sample
from localeval.text import split_sentences

TEMPLATE_SLACK = 32  # tokens the chat template adds around the messages
COUNT_MARGIN = 1.05  # sentence token counts are summed separately; joined text may tokenise slightly longer


def context_sentences(sample: Sample) -> list[str]:
    """The ragas definition: pysbd over the retrieved contexts joined by newlines, blank ones dropped."""
    return split_sentences("\n".join(sample.retrieved_contexts or []))


def fit_windows(sentences: Sequence[str], judge: Judge, fixed_text: str, answer_tokens: int) -> list[list[int]]:
    """Split sentence indices (0-based) into consecutive windows whose prompt fits the model.

    Nothing is ever truncated: a prompt that is too long is judged window by window.
    A single sentence that cannot fit on its own is an error for the sample.
    """
    overhead = judge.count_tokens(SYSTEM) + judge.count_tokens(fixed_text) + TEMPLATE_SLACK + answer_tokens
    budget = judge.context_size - overhead
    costs = [int(judge.count_tokens(context_block([(i + 1, s)]) + "\n") * COUNT_MARGIN) + 1 for i, s in enumerate(sentences)]
    if sum(costs) <= budget:
        return [list(range(len(sentences)))]
    windows: list[list[int]] = []
    current: list[int] = []
    used = 0
    for index, cost in enumerate(costs):
        if cost > budget:
            raise JudgeError(
                f"sentence {index + 1} of the context has about {cost} tokens, more than the {max(budget, 0)} "
                f"the model's window of {judge.context_size} leaves for context; raise --n-ctx"
            )
        if used + cost > budget and current:
            windows.append(current)
            current, used = [], 0
        current.append(index)
        used += cost
    windows.append(current)
    return windows


@dataclass
class UsageTally:
    """Token counts summed over the calls one metric makes for one sample."""

    calls: int = 0
    prompt_tokens: int = 0
    prompt_evaluated: int = 0
    completion_tokens: int = 0

    def add(self, usage: Usage) -> None:
        self.calls += 1
        self.prompt_tokens += usage.prompt_tokens
        self.prompt_evaluated += usage.prompt_evaluated
        self.completion_tokens += usage.completion_tokens

    def as_dict(self) -> dict[str, float]:
        return {
            "calls": self.calls,
            "prompt_tokens": self.prompt_tokens,
            "prompt_evaluated": self.prompt_evaluated,
            "completion_tokens": self.completion_tokens,
        }
