"""What the judge metrics share: their options, calibration lookup and grader (JudgeParams,
JudgeMetric, GRADERS), and the context's sentences."""

from __future__ import annotations

from collections.abc import Mapping
from functools import lru_cache
from typing import Annotated, Any, ClassVar, Literal, TypeVar

from pydantic import AfterValidator, Field, TypeAdapter, ValidationError, field_validator, model_validator

from localeval.calibration.combination import LogisticModel
from localeval.data.samples import Sample
from localeval.data.text import check_language, split_sentences
from localeval.graders import Grader
from localeval.graders.judge_rule import JudgeRule
from localeval.graders.stacked import StackedGrader
from localeval.graders.verifier import VerifierGrader
from localeval.judge import Judge
from localeval.judge.reading import UsageTally
from localeval.judge.rubric import JudgeTaskParams, Rubric, rubric_validator
from localeval.metrics.base import Metric

# The graders a judge metric's `grader` option can name (localeval.graders): a new grader is its
# module, one line here and its name in GraderName.
GRADERS: dict[str, type[Grader]] = {"judge": JudgeRule, "verifier": VerifierGrader, "stacked": StackedGrader}
GraderName = Literal["judge", "verifier", "stacked"]


def grader_from_options(data: Any) -> Any:
    """A judge metric's raw options with 0.5's `verifier = true/false` read as the grader it named
    (true: "verifier", false: "judge"; an option file or script written for 0.5 keeps working;
    `--verifier/--no-verifier` set it), refused (ValueError) where it contradicts `grader`, or
    where a rubric goes with the verifier alone: the rubric replaces the judge's task, and the
    verifier reads none."""
    if not isinstance(data, dict):
        return data
    if "verifier" in data:
        data = dict(data)
        raw = data.pop("verifier")
        try:
            named = "verifier" if TypeAdapter(bool).validate_python(raw) else "judge"
        except ValidationError:
            raise ValueError(f"verifier must be true or false, not {raw!r} (or set grader to judge, verifier or stacked)") from None
        if data.get("grader") not in (None, named):
            raise ValueError(f"verifier={str(raw).lower()} names the grader {named!r}, and grader={data['grader']!r} another: set one of them")
        data["grader"] = named
    if data.get("rubric") not in (None, "") and data.get("grader") == "verifier":
        raise ValueError("a rubric replaces the judge's task, and the verifier reads no task: use grader=judge or grader=stacked (or leave it unset) with a rubric")
    return data


class JudgeParams(JudgeTaskParams):
    """The options every judge metric has, declared once: `language`, `rubric` (checked against
    the class's `rubric_allowed` and `rubric_required` placeholders) and `grader`; `option_help`
    gives a metric's own wording of their descriptions (what `localeval metrics` and
    docs/metrics.md show). A metric's Params is `class XParams(JudgeParams, XOptions)`, XOptions
    holding its own options: pydantic lists a base's fields first, so the shared ones come last,
    where `localeval metrics`, docs/metrics.md and results headers have always shown them."""

    rubric_allowed: ClassVar[frozenset[str]] = frozenset()
    rubric_required: ClassVar[frozenset[str]] = frozenset()
    option_help: ClassVar[dict[str, str]] = {}

    language: Annotated[str, AfterValidator(check_language)] = Field(
        "en", description="language of the texts, for sentence splitting (any pysbd language) and the evidence's word list (English; other languages keep every word)"
    )
    rubric: Rubric | None = Field(None, description="a file whose text replaces the judge's task; it must ask for Yes or No")
    grader: GraderName = Field(
        "judge",
        description="what decides: judge (the judge rule), verifier (localeval's trained verifier alone: no judge, fast, less accurate so far) "
        "or stacked (both, weighed by a model fitted for the default judge; the judge rule where none is fitted); verifier=true/false is grader=verifier/judge",
    )

    @model_validator(mode="before")
    @classmethod
    def _legacy_verifier_option(cls, data: Any) -> Any:
        return grader_from_options(data)

    @classmethod
    def __pydantic_init_subclass__(cls, **kwargs: Any) -> None:
        super().__pydantic_init_subclass__(**kwargs)
        for name, text in cls.option_help.items():  # each class holds its own copy of the fields
            cls.model_fields[name].description = text

    def grader_name(self) -> str:
        """The name of the grader these options choose, in GRADERS."""
        return self.grader

    @field_validator("rubric", mode="before")
    @classmethod
    def _checked_rubric(cls, value: Any) -> Any:
        """A path becomes a checked Rubric (localeval.judge.rubric), with this metric's placeholders."""
        return rubric_validator(cls.rubric_allowed, cls.rubric_required)(value)


JP = TypeVar("JP", bound=JudgeParams)


class JudgeMetric(Metric[JP]):
    """A metric whose verdicts a grader gives (localeval.graders: the judge rule, or the verifier
    instead), the one its options name: its calibration table for the judge (found by
    `calibration_key`, with `calibration_features`, else `default_calibration`), checked before
    the first sample, and whether these options call the judge."""

    needs_judge = True
    calibration_key: ClassVar[str | None]
    calibration_features: ClassVar[tuple[str, ...]]
    default_calibration: ClassVar[LogisticModel]

    @classmethod
    def calibration_for(cls, tables: Mapping[str, Mapping[str, Any]]) -> LogisticModel:
        """The judge's fitted combination from its tables (the catalog's, a calibration file's),
        else the documented default."""
        key = cls.calibration_key
        table = tables.get(key) if key else None
        return LogisticModel.from_table(table, f"calibration '{key}'", cls.calibration_features) if table else cls.default_calibration

    def check_calibration(self, tables: Mapping[str, Mapping[str, Any]]) -> None:
        self.calibration_for(tables)
        self.grader_class().check_tables(tables)

    def grader_class(self) -> type[Grader]:
        return GRADERS[self.params.grader_name()]

    def grader(self, judge: Judge | None) -> Grader:
        """The grader these options name, for a batch scored with `judge` (None: none loaded)."""
        calibration = self.calibration_for(judge.calibration) if judge is not None else self.default_calibration
        return self.grader_class()(judge, calibration, self.params.language, self.params.rubric)

    def uses_judge(self) -> bool:
        """The judge is loaded when the grader calls it; with `statements=claims` the judge
        also writes the claims the grader then reads."""
        return self.grader_class().needs_judge or getattr(self.params, "statements", None) == "claims"

    def describe_params(self) -> dict[str, Any]:
        """The options, and what the grader records of itself (the verifier's file and SHA-256:
        a resume with another verifier is refused)."""
        return {**super().describe_params(), **self.grader_class().recorded()}

    @staticmethod
    def usage(grader: Grader, tally: UsageTally) -> dict[str, int] | None:
        """A sample's usage: the judge's calls, whenever the grader calls the judge (none needed
        is still a count) or the judge wrote the statements; None for a sample no judge read."""
        return tally.as_dict() if grader.needs_judge or tally.calls else None


def context_sentences(sample: Sample, language: str = "en") -> list[str]:
    """The ragas definition: pysbd over the retrieved contexts joined by newlines, blank ones dropped.
    Split once per sample however many judge metrics read it (context_recall and faithfulness
    both do): the last few contexts' sentences are kept."""
    return list(_split_once("\n".join(sample.retrieved_contexts or []), language))


@lru_cache(maxsize=16)
def _split_once(text: str, language: str) -> tuple[str, ...]:
    return tuple(split_sentences(text, language))
