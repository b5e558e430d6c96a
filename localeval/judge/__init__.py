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
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

from pydantic import BaseModel

from localeval.judge.usage import Usage as Usage  # re-exported: every backend and metric reads it from here

if TYPE_CHECKING:
    from localeval.judge.spec import JudgeSpec

T = TypeVar("T", bound=BaseModel)

Message = dict[str, str]


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


def load_judge(model: str | JudgeSpec | None = None, *, calibration: Any = None, **settings: Any) -> Judge:
    """A judge: `model` is a GGUF path or catalog name (else $LOCALEVAL_MODEL, else the
    default), or a whole JudgeSpec; `settings` are JudgeSpec's fields (n_ctx, threads, seed,
    gpu_layers, judge_url, judge_concurrency, backend_options, cache), checked as the CLI's are.
    The verdict cache is on unless `cache=False` (a path: that file): the judge is then loaded
    on the first prompt the cache has no answer for (localeval.judge.cache).
    `calibration` (a localeval.calibration.combination.CalibrationFile, from `localeval calibrate`)
    replaces the catalog's calibrations for the tasks it has.

    Imports the backend only now, so nothing pays for llama.cpp until a judge is needed.
    """
    from localeval.judge.backends import open_backend
    from localeval.judge.spec import JudgeSpec

    if isinstance(model, JudgeSpec):
        if settings:
            raise TypeError("load_judge: give a JudgeSpec or settings, not both")
        return open_backend(model, calibration)
    return open_backend(JudgeSpec.of({"model": model, **settings}, "load_judge"), calibration)
