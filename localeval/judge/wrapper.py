"""A Judge that passes every call on to the judge it wraps.

The runner wraps the run's judge for a batch (SharedVerdicts) and for each metric of a sample
(CacheCounter); each wrapper changes how an answer is got or counted and nothing else, so the
rest of the protocol is this one pass-through, kept in one place so that a new member of the
protocol reaches every wrapper at once.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # cache.py, which the backends load, builds on this module: names for the types only
    from localeval.judge import Judge, Message, T, Usage


class WrappedJudge:
    """The wrapped judge's answers, sizes and description, unchanged."""

    def __init__(self, judge: Judge) -> None:
        self._judge = judge

    def choose(self, messages: list[Message], prefix: str, options: Sequence[str]) -> tuple[list[float], Usage]:
        return self._judge.choose(messages, prefix, options)

    def ask(self, messages: list[Message], schema: type[T], max_tokens: int = 512) -> tuple[T, Usage]:
        return self._judge.ask(messages, schema, max_tokens)

    def count_tokens(self, text: str) -> int:
        return self._judge.count_tokens(text)

    @property
    def context_size(self) -> int:
        return self._judge.context_size

    @property
    def calibration(self) -> Mapping[str, Mapping[str, Any]]:
        return self._judge.calibration

    @property
    def concurrency(self) -> int:
        return max(1, int(getattr(self._judge, "concurrency", 1)))

    def describe(self) -> dict[str, Any]:
        return self._judge.describe()

    def close(self) -> None:
        """The wrapped judge belongs to whoever passed it in (the run): it is not closed here."""
