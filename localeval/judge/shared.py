"""One judge answer per exact prompt within a batch of samples, whichever metric asks.

context_recall and faithfulness ask the same question (the attribution prompt: a chunk of the
retrieved contexts, then a statement) about the same contexts; where the reference and the
response share a statement, both metrics ask the very same prompt. The runner wraps the judge
in SharedVerdicts for a batch scored by several judge metrics, so that prompt reaches the judge
once and the second metric reads the first one's answer. Keyed on the exact messages (and the
options or schema): a verdict is reused only where the judge would have read the same tokens,
so no score changes. The reused answer's Usage is marked `reused` and costs nothing in the
second metric's usage (UsageTally counts it apart). Dropped with the batch, so memory stays
bounded by one batch's prompts.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Sequence
from dataclasses import replace
from typing import Any

from localeval.judge import Judge, Message, T, Usage
from localeval.judge.wrapper import WrappedJudge


def _key(kind: str, messages: list[Message], extra: Any) -> str:
    return json.dumps([kind, messages, extra], ensure_ascii=False)


class SharedVerdicts(WrappedJudge):
    """A Judge that answers a prompt it has answered before from memory (see the module docstring)."""

    def __init__(self, judge: Judge) -> None:
        super().__init__(judge)
        self._answers: dict[str, tuple[Any, Usage]] = {}
        self._lock = threading.Lock()  # a server judge scores a batch's samples on several threads

    def _recall(self, key: str) -> tuple[Any, Usage] | None:
        with self._lock:
            found = self._answers.get(key)
        return None if found is None else (found[0], replace(found[1], reused=True))

    def _keep(self, key: str, answer: Any, usage: Usage) -> None:
        with self._lock:
            self._answers[key] = (answer, usage)

    def choose(self, messages: list[Message], prefix: str, options: Sequence[str]) -> tuple[list[float], Usage]:
        key = _key("choose", messages, [prefix, list(options)])
        found = self._recall(key)
        if found is not None:
            return list(found[0]), found[1]
        probabilities, usage = self._judge.choose(messages, prefix, options)
        self._keep(key, list(probabilities), usage)
        return probabilities, usage

    def ask(self, messages: list[Message], schema: type[T], max_tokens: int = 512) -> tuple[T, Usage]:
        key = _key("ask", messages, [f"{schema.__module__}.{schema.__qualname__}", max_tokens])
        found = self._recall(key)
        if found is not None:
            return schema.model_validate(found[0]), found[1]
        answer, usage = self._judge.ask(messages, schema, max_tokens)
        self._keep(key, answer.model_dump(), usage)
        return answer, usage
