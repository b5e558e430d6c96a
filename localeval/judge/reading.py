"""What the judge rule reads off a judge: its Yes/No log-odds (checked), chunks of sentences
that fit its window, the tokens a rubric adds, and the usage totals of one metric's calls for
one sample. Shared by the judge rule's questions (localeval.graders.judge_rule) and the metrics
that ask the judge to write (claims, answer_relevancy's questions)."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from localeval.errors import JudgeError
from localeval.judge import Judge, Message, Usage
from localeval.judge.prompts import NO, YES
from localeval.judge.rubric import Rubric

PROBABILITY_FLOOR = 1e-6  # keeps log-odds finite: no verdict is read as certain


def chunk_sentences(sentences: Sequence[str], count_tokens: Callable[[str], int], budget: int, limit: int, text: str = "the context") -> list[range]:
    """Consecutive sentence ranges of at most `budget` tokens each, cut at sentence boundaries
    (MiniCheck's chunking). A sentence over `budget` is a chunk of its own; one over `limit`
    (what the model's window leaves) is an error for the sample naming the `text` it is in: it
    is never truncated."""
    chunks: list[range] = []
    start, used = 0, 0
    for index, sentence in enumerate(sentences):
        cost = count_tokens(sentence) + 1
        if cost > limit:
            raise JudgeError(f"sentence {index + 1} of {text} has about {cost} tokens, more than the {limit} the model's window leaves; raise --n-ctx")
        if index > start and used + cost > budget:
            chunks.append(range(start, index))
            start, used = index, 0
        used += cost
    if start < len(sentences):
        chunks.append(range(start, len(sentences)))
    return chunks


def rubric_tokens(judge: Judge, rubric: Rubric | None) -> int:
    """Tokens a user's rubric adds to every prompt (its text is counted in full, placeholders
    and all: an over-estimate by a few tokens), so chunks still fit the window."""
    return judge.count_tokens(rubric.text) if rubric is not None else 0


def check_probabilities(probabilities: Sequence[float]) -> None:
    """A probability that is not a number in [0, 1] (a model whose logits are NaN, a server's
    NaN) is an error for the sample: clamping it would read NaN as certainty."""
    if not all(math.isfinite(p) and 0.0 <= p <= 1.0 for p in probabilities):
        raise JudgeError(f"the judge's verdict probabilities are not numbers in [0, 1] ({list(probabilities)}); its answer cannot be read")


def yes_log_odds(judge: Judge, messages: list[Message]) -> tuple[float, Usage]:
    """log(P(Yes) / P(No)) for the judge's first answer token (checked: check_probabilities)."""
    (yes, no), usage = judge.choose(messages, "", (YES, NO))
    check_probabilities([yes, no])
    yes = min(max(yes, PROBABILITY_FLOOR), 1 - PROBABILITY_FLOOR)
    return math.log(yes / (1 - yes)), usage


@dataclass
class UsageTally:
    """Token counts summed over the calls one metric makes for one sample."""

    calls: int = 0
    prompt_tokens: int = 0
    prompt_evaluated: int = 0
    completion_tokens: int = 0
    reused: int = 0  # answers another metric of the same sample had already asked for (SharedVerdicts)

    def add(self, usage: Usage) -> None:
        if usage.reused:
            self.reused += 1
            return
        self.calls += 1
        self.prompt_tokens += usage.prompt_tokens
        self.prompt_evaluated += usage.prompt_evaluated
        self.completion_tokens += usage.completion_tokens

    def as_dict(self) -> dict[str, int]:
        counts = {
            "calls": self.calls,
            "prompt_tokens": self.prompt_tokens,
            "prompt_evaluated": self.prompt_evaluated,
            "completion_tokens": self.completion_tokens,
        }
        return {**counts, "reused": self.reused} if self.reused else counts
