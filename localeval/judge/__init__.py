"""The judge protocol: messages and a pydantic schema in, a validated object out.

Metrics depend on this protocol only; `localeval.judge.llama` is the one module
that imports llama_cpp, and it is imported only when a judge is actually needed.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping, Protocol, Sequence, TypeVar

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
    """Anything that answers a chat prompt with an object of the given schema."""

    def ask(self, messages: list[Message], schema: type[T], max_tokens: int = ...) -> tuple[T, Usage]: ...

    def choose(self, messages: list[Message], prefix: str, options: Sequence[str]) -> tuple[list[float], Usage]:
        """Probabilities of each single-token option right after the answer's `prefix`."""
        ...

    def write_string(self, messages: list[Message], prefix: str, max_chars: int) -> tuple[str, Usage]:
        """The decoded JSON string that the answer's `prefix` opens."""
        ...

    @property
    def thresholds(self) -> Mapping[str, float]:
        """Calibrated decision thresholds for verdict probabilities (empty when not calibrated)."""
        ...

    def count_tokens(self, text: str) -> int: ...

    @property
    def context_size(self) -> int: ...

    def describe(self) -> dict[str, object]: ...


def load_judge(
    model: str | None = None, *, n_ctx: int | None = None, n_threads: int | None = None, seed: int | None = None
) -> Judge:
    """Load a GGUF judge: `model` is a path or a catalog name, else $LOCALEVAL_MODEL, else the default.

    Imports llama_cpp only now, so nothing pays for it until a judge is really needed.
    """
    from localeval.judge.llama import DEFAULT_CONTEXT, DEFAULT_SEED, LlamaJudge
    from localeval.models import CATALOG, resolve_model

    path, catalog_name = resolve_model(model)
    return LlamaJudge(
        path,
        thresholds=CATALOG[catalog_name].thresholds if catalog_name else {},
        n_ctx=n_ctx or DEFAULT_CONTEXT,
        n_threads=n_threads,
        seed=DEFAULT_SEED if seed is None else seed,
        catalog_name=catalog_name,
    )
