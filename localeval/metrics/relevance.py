"""Context relevance: the share of the retrieved context that is absolutely required to answer.

ragas' ContextRelevancy and promptfoo's context-relevance; score = required units /
all units, capped at 1; no unit required ("insufficient information") scores 0.
The unit is a pysbd sentence by default (ragas), split within each retrieved
context so that every sentence belongs to one; `unit=line` counts lines and
`unit=chunk` counts retrieved contexts (what current promptfoo does for
multi-line and list contexts).

Every unit is scored by the grader the options name (localeval.graders): the judge rule
(localeval.graders.judge_units: the judge's verdict on each passage, its choice and short answer
on the passage it finds most needed, the evidence features, a calibrated combination), the
verifier (the question, the unit and its context, one pair each), or both (localeval.graders.stacked:
the judge rule's features beside the verifier's logits, weighed by a fitted model). Units at or above `threshold`
are selected (the judge rule's selection adds the unit holding its short answer, and the most
probable unit where its choice said one answers); none selected is "insufficient information".
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Literal

from pydantic import BaseModel, Field

from localeval.data.samples import Sample
from localeval.data.text import is_blank, split_sentences
from localeval.graders import Grader, Unanswerable, Unit
from localeval.graders.judge_units import RELEVANCE_CALIBRATION as DEFAULT_CALIBRATION
from localeval.graders.judge_units import RELEVANCE_FEATURES as FEATURES
from localeval.graders.judge_units import RELEVANCE_KEY as CALIBRATION_KEY
from localeval.judge import Judge
from localeval.judge.prompts import RELEVANCE_PLACEHOLDERS, RELEVANCE_REQUIRED
from localeval.judge.reading import UsageTally
from localeval.judge.rubric import JudgeTaskParams
from localeval.metrics.base import Score, ShareOption
from localeval.metrics.judging import JudgeMetric, JudgeParams

DEFAULT_THRESHOLD = 0.5
# Without a question no unit is needed for anything, and a grader asked anyway reads every unit
# as needed (the verifier gave a blank question's units 1.0): the sample's error, for every grader.
BLANK_QUESTION = "the question (user_input) is blank: context relevance asks which units are needed to answer it, and there is nothing to answer"
JUDGED_CONTEXTS = 3  # the judge reads at most this many passages (those that mention most of the question)


def _no_units() -> Score:
    """A sample whose retrieved contexts have no unit: nothing is required, whichever rule decides."""
    return Score(value=0.0, details={"selected": [], "selected_sentences": [], "n_selected": 0, "n_sentences": 0})


class RelevanceOptions(JudgeTaskParams):
    """context_relevance's own options (RelevanceParams adds the judge metrics' shared ones)."""

    unit: Literal["sentence", "line", "chunk"] = Field(
        "sentence", description="what is counted: pysbd sentences (ragas), lines, or whole retrieved contexts (promptfoo's units)"
    )
    threshold: ShareOption = Field(
        DEFAULT_THRESHOLD, description="a unit is required when its calibrated probability reaches this (when none does, the most probable one is, if the judge's choice said a unit answers)"
    )
    judged_contexts: int = Field(
        JUDGED_CONTEXTS, ge=0, le=1_000_000, description="the judge reads at most this many retrieved contexts, those that mention most of the question (0: all of them)"
    )


class RelevanceParams(JudgeParams, RelevanceOptions):
    rubric_allowed = RELEVANCE_PLACEHOLDERS
    rubric_required = RELEVANCE_REQUIRED
    option_help = {
        "rubric": "a file whose text replaces the judge's task ({placeholders}: {question}, {paragraph}); it must ask for Yes or No",
        "grader": "what decides: judge (the judge rule), verifier (localeval's trained verifier reads question, unit and its context: no judge, fast, less accurate so far) or stacked (both, weighed by a model fitted for the default judge on validation rows; the judge rule where none is fitted); verifier=true/false is grader=verifier/judge (docs/measured.md)",
    }


class RelevanceDetails(BaseModel):
    selected: list[int]
    selected_sentences: list[str]
    n_selected: int
    n_sentences: int
    probabilities: list[float] = Field(default_factory=list)
    features: list[dict[str, float]] = Field(default_factory=list)
    windows: int | None = None
    unread_contexts: list[int] = Field(default_factory=list)
    answer: str | None = None
    unit_parts: list[int] = Field(default_factory=list)  # with the verifier, where a unit was too long to read at once: the parts each unit was read in
    decided_by: str | None = None  # with grader=stacked: "stacked", or the judge rule and why (no stacked model for this judge, a question too long for the verifier)


def _units(sample: Sample, unit: str, language: str) -> list[Unit]:
    """The sample's units, each with the retrieved context (passage) it came from."""
    units = []
    for passage, context in enumerate(sample.retrieved_contexts or []):
        if unit == "chunk":
            parts = [] if is_blank(context) else [context.strip()]
        elif unit == "line":
            parts = [line.strip() for line in context.splitlines() if not is_blank(line)]
        else:
            parts = split_sentences(context, language)
        units += [Unit(text, passage, index == 0) for index, text in enumerate(parts)]
    return units


def _selection_details(units: Sequence[Unit], selected: list[int], probabilities: Sequence[float], features: Sequence[Mapping[str, float]]) -> dict[str, Any]:
    """What a sample's details say about a selection, whichever rule made it."""
    return {
        "selected": selected,
        "selected_sentences": [units[i].text for i in selected],
        "n_selected": len(selected),
        "n_sentences": len(units),
        "probabilities": [round(p, 4) for p in probabilities],
        "features": [{k: round(v, 4) for k, v in f.items()} for f in features],
    }


class ContextRelevance(JudgeMetric[RelevanceParams]):
    name = "context_relevance"
    description = "Share of the retrieved context's sentences that are absolutely required to answer the question."
    required_fields = ("user_input", "retrieved_contexts")
    calibration_key = CALIBRATION_KEY
    calibration_features = FEATURES
    default_calibration = DEFAULT_CALIBRATION
    Params = RelevanceParams
    Details = RelevanceDetails

    def score_batch(self, samples: Sequence[Sample], judge: Judge | None) -> list[Score]:
        grader = self.grader(judge)
        return [self._score(sample, grader) for sample in samples]

    def _score(self, sample: Sample, grader: Grader) -> Score:
        """Each unit's P(required) from the grader; the units its rule selects at the threshold."""
        params = self.params
        if is_blank(sample.user_input or ""):
            return Score.failed(BLANK_QUESTION)
        units = _units(sample, params.unit, params.language)
        if not units:
            return _no_units()
        tally = UsageTally()
        try:
            needs = grader.needed(sample.user_input or "", units, list(sample.retrieved_contexts or []), tally, params.judged_contexts, params.unit == "chunk")
        except Unanswerable as refusal:
            return Score.failed(str(refusal))
        selected = needs.selected(params.threshold)
        details = {**_selection_details(units, selected, needs.probabilities, needs.features), **needs.notes}
        return Score(value=min(1.0, len(selected) / len(units)), details=details, usage=self.usage(grader, tally))

    @classmethod
    def explain(cls, details: RelevanceDetails) -> str:
        insufficient = " (insufficient information)" if details.n_sentences and not details.n_selected else ""
        return f"{details.n_selected} of {details.n_sentences} context units required{insufficient}"
