"""Context relevance: the share of the retrieved context that is absolutely required to answer.

ragas' ContextRelevancy and promptfoo's context-relevance; score = required units /
all units, capped at 1; no unit required ("insufficient information") scores 0.
The unit is a pysbd sentence of the joined contexts by default (ragas); `unit=line`
counts lines and `unit=chunk` counts retrieved contexts (what current promptfoo does
for multi-line and list contexts).

Every unit is scored, then a rule selects:

1. Evidence: how much of the question each unit and each retrieved context (passage)
   mentions, each word weighted by how rare it is among the passages (IDF); whether
   the unit opens its passage (the sentence that names what the others refer to);
   and a bridge: how strongly the best-matching passage mentions what another
   passage's opening unit names (a two-hop question's second passage).
2. The judge: the passages, with numbered units, and the question are one cached
   prefix; then one Yes/No question per passage, and per unit of the passages that
   look most relevant, each costing only its own tokens. Probabilities are read from
   the logits.
3. A logistic model over those features (fitted per judge on the dev set,
   models/catalog.toml) gives each unit P(required); units at or above `threshold`
   are selected. When none reaches it, nothing is selected and the score is 0.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Annotated, Any, Literal

from pydantic import AfterValidator, BaseModel, ConfigDict, Field

from localeval.calibration import LogisticModel
from localeval.evidence import content_words
from localeval.judge import Judge
from localeval.judge.prompts import PASSAGE_QUESTION, SENTENCE_QUESTION, passages_block, relevance_messages
from localeval.metrics.base import Metric, Score
from localeval.metrics.judging import UsageTally, yes_log_odds
from localeval.samples import Sample
from localeval.text import check_language, split_sentences

CALIBRATION_KEY = "relevance"
PROMPT_OVERHEAD = 200  # tokens of instructions, question and the Yes/No question around the passages
# For a judge without a fitted rule: the judge's sentence verdict, helped by the
# passage verdict and the question's words; round numbers of the fitted models' size.
DEFAULT_CALIBRATION = LogisticModel(intercept=-3.0, weights={"judge_unit": 0.8, "judge_passage": 0.4, "overlap": 2.0, "opens_passage": 0.5})
DEFAULT_THRESHOLD = 0.5


class RelevanceParams(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    unit: Literal["sentence", "line", "chunk"] = Field(
        "sentence", description="what is counted: pysbd sentences (ragas), lines, or whole retrieved contexts (promptfoo's units)"
    )
    threshold: float = Field(DEFAULT_THRESHOLD, ge=0.0, le=1.0, description="a unit is required when its calibrated probability reaches this")
    judged_passages: int = Field(3, ge=0, le=100, description="passages whose units the judge reads one by one (the most relevant by evidence and passage verdict)")
    language: Annotated[str, AfterValidator(check_language)] = Field(
        "en", description="language of the texts, for sentence splitting (any pysbd language) and the evidence's word list (English; other languages keep every word)"
    )


class RelevanceDetails(BaseModel):
    selected: list[int]
    selected_sentences: list[str]
    n_selected: int
    n_sentences: int
    probabilities: list[float] = Field(default_factory=list)
    features: list[dict[str, float]] = Field(default_factory=list)
    windows: int | None = None


@dataclass
class _Unit:
    text: str
    passage: int
    opens_passage: bool


def _units(sample: Sample, unit: str, language: str) -> list[_Unit]:
    """The sample's units, each with the retrieved context (passage) it came from."""
    units = []
    for passage, context in enumerate(sample.retrieved_contexts or []):
        if unit == "chunk":
            parts = [context.strip()] if context.strip() else []
        elif unit == "line":
            parts = [line.strip() for line in context.splitlines() if line.strip()]
        else:
            parts = split_sentences(context, language)
        units += [_Unit(text, passage, index == 0) for index, text in enumerate(parts)]
    return units


def _idf_overlap(question: str, units: Sequence[_Unit], passages: Sequence[str], language: str) -> tuple[list[float], list[float], list[float]]:
    """IDF-weighted share of the question's words in each unit and each passage, and each
    passage's bridge score (see the module docstring)."""
    passage_words = [set(content_words(p, language)) for p in passages]
    count = len(passages)

    def idf(word: str) -> float:
        return math.log((count + 1) / (1 + sum(word in words for words in passage_words)))

    asked = set(content_words(question, language))
    mass = sum(idf(w) for w in asked) or 1.0
    unit_overlap = [sum(idf(w) for w in asked & set(content_words(u.text, language))) / mass for u in units]
    passage_overlap = [sum(idf(w) for w in asked & words) / mass for words in passage_words]
    best = max(range(count), key=lambda p: (passage_overlap[p], -p)) if count else 0
    bridge = [0.0] * count
    for u in units:
        if u.opens_passage and u.passage != best:
            named = set(content_words(u.text, language))
            weight = sum(idf(w) for w in named) or 1.0
            bridge[u.passage] = sum(idf(w) for w in named & passage_words[best]) / weight
    return unit_overlap, passage_overlap, bridge


def calibration_for(judge: Judge) -> LogisticModel:
    table = judge.calibration.get(CALIBRATION_KEY)
    return LogisticModel.from_table(table, f"calibration '{CALIBRATION_KEY}'") if table else DEFAULT_CALIBRATION


def _relative(values: Sequence[float]) -> list[float]:
    top = max(values, default=0.0)
    return [v / top if top > 0 else 0.0 for v in values]


class ContextRelevance(Metric[RelevanceParams]):
    name = "context_relevance"
    description = "Share of the retrieved context's sentences that are absolutely required to answer the question."
    required_fields = ("user_input", "retrieved_contexts")
    needs_judge = True
    Params = RelevanceParams
    Details = RelevanceDetails

    def score_batch(self, samples: Sequence[Sample], judge: Judge | None) -> list[Score]:
        assert judge is not None
        return [self._score(sample, judge) for sample in samples]

    def _windows(self, units: Sequence[_Unit], judge: Judge, question: str) -> list[list[int]]:
        """Passages grouped so that each group's prompt fits the model; a passage too long
        for the window on its own is split between units (nothing is truncated)."""
        from localeval.metrics.judging import chunk_sentences

        budget = judge.context_size - PROMPT_OVERHEAD - judge.count_tokens(question)
        ranges = chunk_sentences([f"[{i + 1}] {u.text}" for i, u in enumerate(units)], judge.count_tokens, budget, budget)
        return [list(r) for r in ranges]

    def _score(self, sample: Sample, judge: Judge) -> Score:
        params = self.params
        question = sample.user_input or ""
        units = _units(sample, params.unit, params.language)
        if not units:
            return Score(value=0.0, details={"selected": [], "selected_sentences": [], "n_selected": 0, "n_sentences": 0})
        passages = [p for p in (sample.retrieved_contexts or [])]
        overlap, passage_overlap, bridge = _idf_overlap(question, units, passages, params.language)
        tally = UsageTally()
        judge_passage = [0.0] * len(passages)
        passage_judged: set[int] = set()
        judge_unit: dict[int, float] = {}
        windows = self._windows(units, judge, question)
        for window in windows:
            grouped: dict[int, list[tuple[int, str]]] = {}
            for i in window:
                grouped.setdefault(units[i].passage, []).append((i + 1, units[i].text))
            order = list(grouped)
            block = passages_block([grouped[p] for p in order])
            if len(passages) > 1:
                for number, passage in enumerate(order, start=1):
                    value, usage = yes_log_odds(judge, relevance_messages(block, question, PASSAGE_QUESTION.format(number=number)))
                    # a passage split over windows counts by its best part
                    judge_passage[passage] = max(judge_passage[passage], value) if passage in passage_judged else value
                    passage_judged.add(passage)
                    tally.add(usage)
            ranked = sorted(order, key=lambda p: (-(judge_passage[p] + 4 * passage_overlap[p]), p))[: params.judged_passages] if len(passages) > 1 else order
            for passage in ranked:
                for number, _ in grouped[passage]:
                    value, usage = yes_log_odds(judge, relevance_messages(block, question, SENTENCE_QUESTION.format(number=number)))
                    judge_unit[number - 1] = value
                    tally.add(usage)
        floor = min(judge_unit.values(), default=0.0)
        relative_overlap = _relative(overlap)
        features = [
            {
                "judge_unit": judge_unit.get(i, floor),
                "judge_passage": judge_passage[u.passage],
                "overlap": relative_overlap[i],
                "passage_overlap": passage_overlap[u.passage],
                "bridge": bridge[u.passage],
                "opens_passage": float(u.opens_passage),
                "unit_judged": float(i in judge_unit),
            }
            for i, u in enumerate(units)
        ]
        model = calibration_for(judge)
        probabilities = [model.probability(f) for f in features]
        selected = [i for i, p in enumerate(probabilities) if p >= params.threshold]
        details: dict[str, Any] = {
            "selected": selected,
            "selected_sentences": [units[i].text for i in selected],
            "n_selected": len(selected),
            "n_sentences": len(units),
            "probabilities": [round(p, 4) for p in probabilities],
            "features": [{k: round(v, 4) for k, v in f.items()} for f in features],
        }
        if len(windows) > 1:
            details["windows"] = len(windows)
        return Score(value=min(1.0, len(selected) / len(units)), details=details, usage=tally.as_dict())

    @classmethod
    def explain(cls, details: RelevanceDetails) -> str:
        insufficient = " (insufficient information)" if details.n_sentences and not details.n_selected else ""
        return f"{details.n_selected} of {details.n_sentences} context units required{insufficient}"
