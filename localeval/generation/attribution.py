"""The checks that need the judge: the reference attributed to its contexts by the statement
engine (context_recall's, under the default judge rule), and a two-context reference that
neither context supports alone.

A reference is attributed when every one of its statements (pysbd sentences) is: one statement
the contexts do not support makes the row a wrong test, whatever the others say. A two-context
reference that one context supports alone is a single-context question in disguise, refused
so that the two-context rows a run reports are ones that need both.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from localeval.data.samples import Sample
from localeval.errors import JudgeError
from localeval.judge import Judge
from localeval.metrics import create_metric
from localeval.metrics.base import Metric

NOT_ATTRIBUTED = "reference_not_attributed"
ONE_CONTEXT_SUFFICES = "one_context_suffices"
UNJUDGED = "judge_error"


class Attribution:
    """context_recall's statement engine with its default options (the judge rule), asked of a
    reference against given contexts."""

    def __init__(self, judge: Judge) -> None:
        self._judge = judge
        self._metric: Metric[Any] = create_metric("context_recall", {"reasons": False})

    def share(self, question: str, reference: str, contexts: Sequence[str]) -> float | None:
        """The share of the reference's statements attributed to `contexts` (None: not judged,
        the prompt did not fit the judge's window)."""
        sample = Sample(user_input=question, reference=reference, retrieved_contexts=list(contexts))
        try:
            score = self._metric.score_batch([sample], self._judge)[0]
        except JudgeError:
            return None
        return score.value if score.error is None and score.value == score.value else None

    def refusal(self, question: str, reference: str, contexts: Sequence[str]) -> str | None:
        together = self.share(question, reference, contexts)
        if together is None:
            return UNJUDGED
        if together < 1.0:
            return NOT_ATTRIBUTED
        if len(contexts) > 1:
            for context in contexts:
                alone = self.share(question, reference, [context])
                if alone is not None and alone >= 1.0:
                    return ONE_CONTEXT_SUFFICES
        return None
