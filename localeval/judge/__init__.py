"""The judge protocol: what a metric may ask a judge, and where judges come from.

Metrics depend on this protocol only. A judge answers in two ways: `choose` reads
the probabilities of single-token answers ("Yes"/"No") from the logits, which is
how every verdict is made; `ask` decodes an object of a pydantic schema under a
grammar, for the one metric option that writes (claims). Backends are named in
one registry (`localeval.judge.backends`), so a new backend is one module and one
line there; none is imported until a judge is loaded.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol, TypeVar

from pydantic import BaseModel

T = TypeVar("T", bound=BaseModel)

Message = dict[str, str]


@dataclass(frozen=True)
class Usage:
    """What one judge call cost. `prompt_evaluated` < `prompt_tokens` when a cached prefix was reused."""

    prompt_tokens: int
    prompt_evaluated: int
    completion_tokens: int
    seconds: float


class Judge(Protocol):
    """Anything that can read a verdict off a chat prompt."""

    def choose(self, messages: list[Message], prefix: str, options: Sequence[str]) -> tuple[list[float], Usage]:
        """Probabilities of each single-token option as the answer's next token after `prefix`
        (normalised over the options)."""
        ...

    def ask(self, messages: list[Message], schema: type[T], max_tokens: int = ...) -> tuple[T, Usage]:
        """An object of `schema`, decoded greedily under its grammar: it always parses."""
        ...

    def count_tokens(self, text: str) -> int: ...

    @property
    def context_size(self) -> int: ...

    @property
    def calibration(self) -> Mapping[str, Mapping[str, Any]]:
        """Fitted combinations per task (models/catalog.toml); empty when the judge has none."""
        ...

    def describe(self) -> dict[str, Any]:
        """Provenance: which weights, which settings."""
        ...

    def close(self) -> None:
        """Free what the judge holds (a model in memory, connections)."""
        ...


def load_judge(
    model: str | None = None,
    *,
    n_ctx: int | None = None,
    n_threads: int | None = None,
    seed: int | None = None,
    gpu_layers: int | None = None,
    judge_url: str | None = None,
    concurrency: int | None = None,
    calibration: Any = None,
) -> Judge:
    """A judge: `model` is a GGUF path or catalog name (else $LOCALEVAL_MODEL, else the
    default), or with `judge_url` the name of a model an OpenAI-compatible server serves.
    `calibration` (a localeval.calibration.CalibrationFile, from `localeval calibrate`)
    replaces the catalog's calibrations for the tasks it has.

    Imports the backend only now, so nothing pays for llama.cpp until a judge is needed.
    """
    from localeval.judge.backends import open_backend

    judge: Judge = open_backend(model, n_ctx=n_ctx, n_threads=n_threads, seed=seed, gpu_layers=gpu_layers, judge_url=judge_url, concurrency=concurrency, calibration=calibration)
    return judge
