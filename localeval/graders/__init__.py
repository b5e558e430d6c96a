"""The graders: what decides the questions the judge metrics ask, and the shape of their answers.

Every judge metric asks one of two questions. Is this unit of the retrieved contexts needed to
answer the question (context_relevance)? Is this statement supported by this text
(context_recall and faithfulness against the retrieved contexts, factual_correctness against the
other answer; context_precision asks it of each context through the answer's statement that
context supports best, or as the judge's own usefulness question)? A `Grader` answers them for
one sample at a time, every unit or statement of it in one call, so an implementation can batch
(the judge rule orders its prompts so each chunk's prefix is evaluated once; the verifier reads a
sample's pairs in one forward pass per batch). Each answer carries its probability and the
evidence it rests on: the deciding chunk or window, the features the probability was computed
from, the statement's evidence sentences and missing words (localeval.graders.evidence).

The implementations: the judge rule (localeval.graders.judge_rule: chunks, log-odds, the
calibrated combination), the verifier (localeval.graders.verifier: windows, pieces, its own
calibration) and the stacked decision (localeval.graders.stacked: both, weighed by a model fitted
on validation rows). A metric receives the grader its `grader` option names (`JudgeMetric.grader`,
from `localeval.metrics.judging.GRADERS`) and never asks which one it is.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar

from localeval.calibration.combination import LogisticModel
from localeval.data.text import split_sentences
from localeval.graders.evidence import StatementEvidence
from localeval.judge import Judge
from localeval.judge.reading import UsageTally
from localeval.judge.rubric import Rubric


@dataclass(frozen=True)
class Unit:
    """What context_relevance counts: a sentence, line or whole context (its `unit` option), the
    retrieved context (passage) it is from, and whether it opens that context."""

    text: str
    passage: int
    opens_passage: bool


@dataclass(frozen=True)
class Support:
    """The answer to "is this statement supported by this text?": P(supported), the features it
    was computed from (in the order the details show them), the statement's evidence in the text
    (the sentences holding its words, the words the text never mentions), and the sentences that
    decided: the judge's deciding chunk, the verifier's best window (None: nothing was read, the
    whole text is the scope a reason quotes from)."""

    probability: float
    features: dict[str, float]
    evidence: StatementEvidence
    scope: range | None
    judge_log_odds: float | None = None  # the judge's own verdict on the deciding chunk
    pieces: int = 1  # a statement longer than the verifier reads at once: read in this many pieces, the least supported deciding
    decided_by: str | None = None  # where more than one rule could decide (the stacked grader): which did


@dataclass(frozen=True)
class Usefulness:
    """The answer to "is this context useful for arriving at this answer?" (context_precision):
    P(useful) and the reading it was computed from, under the name the details give it (the
    judge's `judge_log_odds`, the verifier's logit `verifier`)."""

    probability: float
    reading: dict[str, float]


# The units a reading selects at a threshold: (probabilities, features, threshold) -> indices.
SelectionRule = Callable[[Sequence[float], Sequence[Mapping[str, float]], float], list[int]]


def at_threshold(probabilities: Sequence[float], features: Sequence[Mapping[str, float]], threshold: float) -> list[int]:
    """The units whose probability reaches the threshold, no more: the selection of a grader
    whose features say nothing else about the selection."""
    return [i for i, p in enumerate(probabilities) if p >= threshold]


@dataclass(frozen=True)
class Needs:
    """The answer to "is this unit needed to answer the question?" for each unit of a sample:
    P(needed) and its features per unit, the rule that selects units at a threshold (the judge
    rule's also keeps the unit holding its short answer, and one unit where its choice said one
    answers), and what else the details say about how the sample was read (`notes`: the judge's
    short answer, its windows and unread contexts; the parts the verifier read a long unit in)."""

    probabilities: list[float]
    features: list[dict[str, float]]
    rule: SelectionRule = at_threshold
    notes: dict[str, Any] = field(default_factory=dict)

    def selected(self, threshold: float) -> list[int]:
        return self.rule(self.probabilities, self.features, threshold)


class Unanswerable(Exception):
    """This grader cannot answer for this sample (the verifier reads at most so many tokens of a
    question); the message is the sample's error, and the other samples are scored."""


class Grader:
    """Answers the judge metrics' questions for one sample at a time (see the module docstring).
    Built per batch by `JudgeMetric.grader` with the judge (None where no judge is loaded), the
    metric's calibrated combination for the judge (its `calibration_key`'s table), and the
    metric's `language` and `rubric` options; the options only one question has are arguments of
    its method."""

    # Whether answering calls the judge: a run loads one only then, and a metric that used a
    # judge reports its usage even where no call was needed.
    needs_judge: ClassVar[bool] = True

    def __init__(self, judge: Judge | None, calibration: LogisticModel, language: str = "en", rubric: Rubric | None = None) -> None:
        self.judge = judge
        self.calibration = calibration
        self.language = language
        self.rubric = rubric

    @classmethod
    def recorded(cls) -> dict[str, Any]:
        """What a results header records of this grader beside the metric's options (the
        verifier's file and SHA-256, so a resume with another one is refused)."""
        return {}

    @classmethod
    def check_tables(cls, tables: Mapping[str, Mapping[str, Any]]) -> None:
        """Refuse (ConfigError) a judge's calibration tables that this grader cannot read, before
        the first sample: what it reads beyond the metric's own table (the stacked model)."""

    def supported(self, statements: Sequence[str], sentences: Sequence[str], tally: UsageTally, chunks: int = 2) -> list[Support]:
        """Whether each statement is supported by the text `sentences` make; `chunks`: at most
        how many of the text's chunks the judge reads per statement."""
        raise NotImplementedError

    def needed(self, question: str, units: Sequence[Unit], passages: Sequence[str], tally: UsageTally, judged_contexts: int = 0, whole_contexts: bool = False) -> Needs:
        """Whether each unit (of `passages`, the retrieved contexts) is needed to answer
        `question`; `judged_contexts`: at most how many contexts the judge reads (0: all);
        `whole_contexts`: the units are whole contexts, with no parts to choose among."""
        raise NotImplementedError

    def useful(self, question: str, answer: str, contexts: Sequence[str], tally: UsageTally, answer_name: str = "answer") -> list[Usefulness | None]:
        """Whether each context is useful for arriving at `answer` (named `answer_name` in an
        error); None for a context without a sentence (not useful, nothing asked)."""
        raise NotImplementedError

    def each_context(self, contexts: Sequence[str], usefulness: Callable[[list[str]], Usefulness]) -> list[Usefulness | None]:
        """`usefulness` of each context's sentences, and None for a context without one: the rule
        of `useful` kept here once, so that no grader asks about a context with nothing to read."""
        answers: list[Usefulness | None] = []
        for context in contexts:
            sentences = split_sentences(context, self.language)
            answers.append(usefulness(sentences) if sentences else None)
        return answers
