"""Average precision over a ranked list of relevance verdicts: ragas' context precision score.

ragas (LLMContextPrecisionWithReference, NonLLMContextPrecisionWithReference) scores the
retrieved contexts in their rank order: the sum over ranks k of precision@k x rel_k, divided by
the number of relevant contexts, so a relevant context ranked first weighs more than one ranked
last. ragas divides by (relevant + 1e-10) so that no relevant context gives 0 without a division
by zero; here the division is exact (a perfect ranking scores exactly 1.0, which a threshold of
1.0 then passes) and none relevant is 0 directly. The two differ by less than 1e-10.
"""

from __future__ import annotations

from collections.abc import Iterable


def average_precision(relevant: Iterable[bool]) -> float:
    """ragas' average precision of verdicts in rank order; 0.0 when none is relevant or the list is empty."""
    hits = 0
    total = 0.0
    for rank, is_relevant in enumerate(relevant, start=1):
        if is_relevant:
            hits += 1
            total += hits / rank
    return total / hits if hits else 0.0
