"""Usage: what one judge call cost. A module of its own so that what wraps a judge (the verdict
cache, loaded from `localeval.judge.backends`) can make one without importing the package that
loads the backends."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Usage:
    """What one judge call cost. `prompt_evaluated` < `prompt_tokens` when a cached prefix was reused."""

    prompt_tokens: int
    prompt_evaluated: int
    completion_tokens: int
    seconds: float
    # True for an answer given again without a judge call (localeval.judge.shared): it costs nothing.
    reused: bool = False
    # True for an answer read from the verdict cache (localeval.judge.cache): `seconds` is the
    # lookup's, `saved_seconds` what the judge took when it first gave it.
    cached: bool = False
    saved_seconds: float = 0.0
