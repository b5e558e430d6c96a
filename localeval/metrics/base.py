"""What every metric is: a name, the sample fields it needs, typed options, and a batch scorer.

A metric scores a batch rather than one sample so the string metrics can hand a
whole batch to rapidfuzz in one vectorised call; judge metrics simply loop.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, ClassVar, Sequence

from pydantic import BaseModel, ConfigDict

from localeval.judge import Judge
from localeval.samples import Sample


@dataclass(frozen=True)
class Score:
    """One metric's verdict on one sample.

    `value` is NaN when the metric is undefined for the sample (for example no
    reference contexts), and None when it could not be computed (`error` says why):
    an unscored sample is counted as such, never silently 0.
    """

    value: float | None
    details: dict[str, Any] = field(default_factory=dict)
    error: str | None = None
    usage: dict[str, float] | None = None

    @classmethod
    def failed(cls, error: str) -> "Score":
        return cls(value=None, error=error)


class NoParams(BaseModel):
    """Options of a metric that has none."""

    model_config = ConfigDict(extra="forbid", frozen=True)


class Metric:
    """Base class of the metrics. Subclasses set the class attributes and score_batch."""

    name: ClassVar[str]
    description: ClassVar[str]
    required_fields: ClassVar[tuple[str, ...]]
    needs_judge: ClassVar[bool] = False
    Params: ClassVar[type[BaseModel]] = NoParams

    def __init__(self, params: BaseModel | None = None) -> None:
        self.params = params if params is not None else self.Params()

    def missing_fields(self, sample: Sample) -> list[str]:
        """Required fields the sample does not have (an empty list is present, not missing)."""
        return [name for name in self.required_fields if getattr(sample, name) is None]

    def score_batch(self, samples: Sequence[Sample], judge: Judge | None) -> list[Score]:
        """Score samples that have every required field, in order."""
        raise NotImplementedError

    def describe_params(self) -> dict[str, Any]:
        """The options as they were set, recorded with the results for reproducibility."""
        return self.params.model_dump()
