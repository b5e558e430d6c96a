"""What every metric is: a name, the sample fields it needs, typed options, a batch scorer,
the shape of its details, and one line that explains them.

A metric scores a batch rather than one sample so the string metrics can hand a
whole batch to rapidfuzz in one vectorised call; judge metrics simply loop.
Everything a report says about a metric's details comes from the metric itself
(`explain`), so a new metric needs no edits anywhere else.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Annotated, Any, ClassVar, Generic, TypeVar, cast

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, ValidationError

from localeval.data.samples import Sample
from localeval.judge import Judge

MAX_ITEMS = 3  # items an explanation lists before "and N more"
MAX_CHARS = 160  # characters of quoted text an explanation shows


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
    usage: dict[str, int] | None = None

    @classmethod
    def failed(cls, error: str) -> Score:
        return cls(value=None, error=error)


class NoParams(BaseModel):
    """Options of a metric that has none."""

    model_config = ConfigDict(extra="forbid", frozen=True)


class OpenDetails(BaseModel):
    """Details of a metric that declares no shape: anything, explained as nothing."""

    model_config = ConfigDict(extra="allow")


P = TypeVar("P", bound=BaseModel)


def refuse_non_finite(value: Any, expected: str) -> None:
    """A number option given NaN or an infinity ("nan", "inf" from the command line, nan or inf in
    TOML) is refused naming what was given: its range check alone said "greater than 0"."""
    if isinstance(value, (int, float, str)) and not isinstance(value, bool):
        try:
            number = float(value)
        except ValueError:
            return  # not a number: the type check says so
        if not math.isfinite(number):
            raise ValueError(f"expected {expected}, not {value!r}")


def _not_a_bool(value: Any) -> Any:
    if isinstance(value, bool):
        raise ValueError("expected a number in [0, 1], not true or false")
    refuse_non_finite(value, "a number in [0, 1]")
    return value


# A metric option that is a share (a threshold): a number in [0, 1]; "0.7" from the command
# line converts, true/false from a config file does not (pydantic would read true as 1.0).
ShareOption = Annotated[float, BeforeValidator(_not_a_bool), Field(ge=0.0, le=1.0, allow_inf_nan=False)]


def shorten(text: str, limit: int = MAX_CHARS) -> str:
    return text if len(text) <= limit else text[: limit - 3] + "..."


class Metric(Generic[P]):
    """Base class of the metrics. Subclasses set the class attributes, `score_batch` and `explain`."""

    name: ClassVar[str]
    description: ClassVar[str]
    required_fields: ClassVar[tuple[str, ...]]
    # Whether the metric can use a judge at all (what `localeval metrics` lists); whether this
    # instance, with its options, calls one is `uses_judge()`.
    needs_judge: ClassVar[bool] = False
    # Whether a run that names no metric scores this one (a built-in's choice; see
    # localeval.metrics.DEFAULT_METRICS for why two are left out).
    by_default: ClassVar[bool] = True
    # Which way is better: False for a metric whose low scores are the good ones (noise_sensitivity),
    # so `localeval compare` calls a rise a regression, lists it among the samples that worsened,
    # and reads a --max-drop gate on the rise.
    higher_is_better: ClassVar[bool] = True
    # What the metric's mean is known as, when it has a name of its own (reciprocal_rank's is MRR):
    # the summary says so beside the table.
    mean_is: ClassVar[str | None] = None
    # The key of the calibration table the metric's judge rule weighs its features with (in the
    # catalog and in calibration files), or None for a metric without one.
    calibration_key: ClassVar[str | None] = None
    Params: ClassVar[type[BaseModel]] = NoParams
    # The shape of `Score.details`: results files are read back through it, so a
    # report never meets a detail it does not understand.
    Details: ClassVar[type[BaseModel]] = OpenDetails

    def __init__(self, params: P | None = None) -> None:
        self.params: P = params if params is not None else cast(P, self.Params())

    def uses_judge(self) -> bool:
        """Whether scoring with these options calls the judge (a run loads one only then)."""
        return self.needs_judge

    def refuses_verifier(self) -> str | None:
        """Why `--grader verifier` cannot cover this metric with these options, where it needs the
        judge to write text the verifier cannot (context_entity_recall's entities): the run stops
        with it before its first sample. None: the flag sets its grader, or it has none to set."""
        return None

    def missing_fields(self, sample: Sample) -> list[str]:
        """Required fields the sample does not have (an empty list is present, not missing)."""
        return [name for name in self.required_fields if getattr(sample, name) is None]

    def score_batch(self, samples: Sequence[Sample], judge: Judge | None) -> list[Score]:
        """Score samples that have every required field, in order."""
        raise NotImplementedError

    def check_calibration(self, tables: Mapping[str, Mapping[str, Any]]) -> None:
        """Raise ConfigError when the judge's calibration tables do not fit this metric (a judge
        metric's features); checked before the first sample, so a bad table never stops a run midway."""

    def describe_params(self) -> dict[str, Any]:
        """The options as they were set, recorded with the results for reproducibility (a judge
        metric adds what its grader records: localeval.metrics.judging)."""
        return self.params.model_dump()

    @classmethod
    def explain(cls, details: Any) -> str:
        """One line saying why a sample got its score; `details` is an instance of `Details`."""
        return ""

    @classmethod
    def explain_raw(cls, details: Mapping[str, Any]) -> str:
        """`explain` for details as a results file has them (validated here first)."""
        try:
            return cls.explain(cls.Details.model_validate(details))
        except ValidationError:
            return "details in an unknown shape"
