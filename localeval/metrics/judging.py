"""What the judge metrics share: their options and calibration lookup (JudgeParams, JudgeMetric),
the context's sentences, chunks that fit, Yes/No log-odds, usage totals."""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Annotated, Any, ClassVar, TypeVar

from pydantic import AfterValidator, Field, field_validator

from localeval.calibration import LogisticModel
from localeval.errors import JudgeError
from localeval.judge import Judge, Message, Usage
from localeval.judge.prompts import NO, YES
from localeval.metrics.base import Metric
from localeval.rubric import JudgeTaskParams, Rubric, rubric_validator
from localeval.samples import Sample
from localeval.text import check_language, split_sentences

PROBABILITY_FLOOR = 1e-6  # keeps log-odds finite: no verdict is read as certain


class JudgeParams(JudgeTaskParams):
    """The options every judge metric has, declared once: `language`, `rubric` (checked against
    the class's `rubric_allowed` and `rubric_required` placeholders) and `verifier`; `option_help`
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
    verifier: bool = Field(False, description="decide with localeval's trained verifier instead of the judge")

    @classmethod
    def __pydantic_init_subclass__(cls, **kwargs: Any) -> None:
        super().__pydantic_init_subclass__(**kwargs)
        for name, text in cls.option_help.items():  # each class holds its own copy of the fields
            cls.model_fields[name].description = text

    @field_validator("rubric", mode="before")
    @classmethod
    def _checked_rubric(cls, value: Any) -> Any:
        """A path becomes a checked Rubric (localeval.rubric), with this metric's placeholders."""
        return rubric_validator(cls.rubric_allowed, cls.rubric_required)(value)


JP = TypeVar("JP", bound=JudgeParams)


class JudgeMetric(Metric[JP]):
    """A metric the judge decides, or the verifier instead: its calibration table (found by
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

    def uses_judge(self) -> bool:
        """The judge decides unless the verifier does; with `statements=claims` it still writes
        the claims the verifier then reads."""
        return not self.params.verifier or getattr(self.params, "statements", None) == "claims"


def context_sentences(sample: Sample, language: str = "en") -> list[str]:
    """The ragas definition: pysbd over the retrieved contexts joined by newlines, blank ones dropped.
    Split once per sample however many judge metrics read it (context_recall and faithfulness
    both do): the last few contexts' sentences are kept."""
    return list(_split_once("\n".join(sample.retrieved_contexts or []), language))


@lru_cache(maxsize=16)
def _split_once(text: str, language: str) -> tuple[str, ...]:
    return tuple(split_sentences(text, language))


def chunk_sentences(sentences: Sequence[str], count_tokens: Callable[[str], int], budget: int, limit: int) -> list[range]:
    """Consecutive sentence ranges of at most `budget` tokens each, cut at sentence boundaries
    (MiniCheck's chunking). A sentence over `budget` is a chunk of its own; one over `limit`
    (what the model's window leaves) is an error for the sample: it is never truncated."""
    chunks: list[range] = []
    start, used = 0, 0
    for index, sentence in enumerate(sentences):
        cost = count_tokens(sentence) + 1
        if cost > limit:
            raise JudgeError(f"sentence {index + 1} of the context has about {cost} tokens, more than the {limit} the model's window leaves; raise --n-ctx")
        if index > start and used + cost > budget:
            chunks.append(range(start, index))
            start, used = index, 0
        used += cost
    if start < len(sentences):
        chunks.append(range(start, len(sentences)))
    return chunks


def rubric_tokens(judge: Judge, rubric: Rubric | None) -> int:
    """Tokens a user's rubric adds to every prompt (its text is counted in full, placeholders
    and all: an over-estimate by a few tokens), so chunks still fit the window."""
    return judge.count_tokens(rubric.text) if rubric is not None else 0


def check_probabilities(probabilities: Sequence[float]) -> None:
    """A probability that is not a number in [0, 1] (a model whose logits are NaN, a server's
    NaN) is an error for the sample: clamping it would read NaN as certainty."""
    if not all(math.isfinite(p) and 0.0 <= p <= 1.0 for p in probabilities):
        raise JudgeError(f"the judge's verdict probabilities are not numbers in [0, 1] ({list(probabilities)}); its answer cannot be read")


def yes_log_odds(judge: Judge, messages: list[Message]) -> tuple[float, Usage]:
    """log(P(Yes) / P(No)) for the judge's first answer token (checked: check_probabilities)."""
    (yes, no), usage = judge.choose(messages, "", (YES, NO))
    check_probabilities([yes, no])
    yes = min(max(yes, PROBABILITY_FLOOR), 1 - PROBABILITY_FLOOR)
    return math.log(yes / (1 - yes)), usage


@dataclass
class UsageTally:
    """Token counts summed over the calls one metric makes for one sample."""

    calls: int = 0
    prompt_tokens: int = 0
    prompt_evaluated: int = 0
    completion_tokens: int = 0
    reused: int = 0  # answers another metric of the same sample had already asked for (SharedVerdicts)

    def add(self, usage: Usage) -> None:
        if usage.reused:
            self.reused += 1
            return
        self.calls += 1
        self.prompt_tokens += usage.prompt_tokens
        self.prompt_evaluated += usage.prompt_evaluated
        self.completion_tokens += usage.completion_tokens

    def as_dict(self) -> dict[str, int]:
        counts = {
            "calls": self.calls,
            "prompt_tokens": self.prompt_tokens,
            "prompt_evaluated": self.prompt_evaluated,
            "completion_tokens": self.completion_tokens,
        }
        return {**counts, "reused": self.reused} if self.reused else counts
