"""Noise sensitivity: how often the response says something wrong that it took from the retrieved contexts.

ragas' NoiseSensitivity (`noise_sensitivity`, from RAGChecker; fields user_input, response,
reference, retrieved_contexts; lower is better), `mode` relevant (ragas' default) or irrelevant:

    score = share of the response's statements that are incorrect (the reference does not
            support them) and supported by a relevant retrieved context (`relevant`), or by an
            irrelevant one and by no relevant one (`irrelevant`)

where a retrieved context is relevant when it supports at least one of the reference's
statements. `noise_score` is ragas 0.4.3's `_compute_score` on the three verdict matrices
(statement x context, and the response's statements against the reference).

Every verdict comes from the statement engine (localeval.metrics.recall), with the metric's
options, in the very prompts other metrics ask (so within a run each is asked once,
localeval.judge.shared):

1. the response's statements against the reference: factual_correctness' verdicts (its
   precision half), the reference as the only context;
2. the incorrect ones against the retrieved contexts: faithfulness' verdicts, the same chunks
   and prompts (only the incorrect statements are asked: a correct one counts 0 whatever
   supports it);
3. the reference's statements against the retrieved contexts: context_recall's verdicts, asked
   only where step 2 found an incorrect statement supported (no context's relevance matters
   otherwise).

ragas asks each (statement, context) pair apart; the engine reads a statement against the best
chunks of the contexts joined, as faithfulness does. A statement the engine finds supported is
supported by the retrieved contexts that hold its evidence in the deciding chunk (or window):
the chunk's sentences holding most of its words (`EVIDENCE_COVERAGE`), else its closest sentences,
else every context the chunk spans. So a run of noise_sensitivity beside faithfulness and
context_recall (or factual_correctness) asks the judge nothing of its own, at the price of naming
the context that decided rather than every context that could. The details list each incorrect
statement with the context(s) it was taken from.

A response without statements (empty) and a reference without statements score NaN (ragas refuses
such a sample); so does a sample without retrieved contexts.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Literal

from pydantic import BaseModel, Field

from localeval.data.samples import Sample
from localeval.graders import Support
from localeval.graders.judge_rule import ATTRIBUTION_CALIBRATION, ATTRIBUTION_FEATURES, ATTRIBUTION_KEY
from localeval.judge import Judge
from localeval.judge.reading import UsageTally
from localeval.metrics.base import MAX_ITEMS, Score, shorten
from localeval.metrics.faithfulness import Faithfulness
from localeval.metrics.judging import JudgeMetric, context_sentences
from localeval.metrics.recall import EVIDENCE_COVERAGE, ContextRecall, RecallParams

Mode = Literal["relevant", "irrelevant"]


class NoiseParams(RecallParams):
    statements: Literal["sentences", "claims"] = Field(
        "sentences", description="sentences: pysbd sentences of the response and of the reference; claims: the judge decomposes each first (faithfulness' and context_recall's statements)"
    )
    mode: Mode = Field(
        "relevant", description="relevant: incorrect statements a relevant context supports (a context supporting one of the reference's statements); irrelevant: those only an irrelevant one supports (ragas' mode)"
    )


class NoisyStatement(BaseModel):
    statement: str
    correct: Literal[0, 1]  # the reference supports it
    probability: float  # P(supported by the reference)
    contexts: list[int] = Field(default_factory=list)  # 0-based retrieved contexts that support it (asked of incorrect statements only)
    counted: Literal[0, 1] = 0  # counted in the score
    reason: str | None = None


class NoiseDetails(BaseModel):
    mode: Mode
    statements: list[NoisyStatement] = Field(default_factory=list)
    relevant_contexts: list[int] | None = None  # None: not needed (no incorrect statement is supported by a context)
    note: str | None = None  # why the score is NaN


def counted_statements(incorrect: Sequence[bool], response_by_context: Sequence[Sequence[bool]], reference_by_context: Sequence[Sequence[bool]], mode: str) -> list[bool]:
    """Which response statements ragas' `_compute_score` counts: `incorrect[s]` (the reference does
    not support response statement s), `response_by_context[s][c]` and `reference_by_context[r][c]`
    (context c supports the statement); a context is relevant when it supports a reference statement."""
    contexts = len(response_by_context[0]) if response_by_context else 0
    relevant = [any(row[c] for row in reference_by_context) for c in range(contexts)]
    counted = []
    for wrong, supported_by in zip(incorrect, response_by_context):
        by_relevant = any(relevant[c] and supported_by[c] for c in range(contexts))
        if mode == "irrelevant":  # kept apart from the relevant ones, as ragas keeps them
            by_irrelevant = any(not relevant[c] and supported_by[c] for c in range(contexts))
            counted.append(bool(wrong and by_irrelevant and not by_relevant))
        else:
            counted.append(bool(wrong and by_relevant))
    return counted


def noise_score(incorrect: Sequence[bool], response_by_context: Sequence[Sequence[bool]], reference_by_context: Sequence[Sequence[bool]], mode: str) -> float:
    """ragas' `_compute_score`: the share of the response's statements counted; NaN without any
    (ragas' mean of nothing)."""
    counted = counted_statements(incorrect, response_by_context, reference_by_context, mode)
    return sum(counted) / len(counted) if counted else float("nan")


def sentence_contexts(contexts: Sequence[str], sentences: Sequence[str]) -> list[set[int]]:
    """The retrieved contexts each sentence of `context_sentences` (the contexts joined by
    newlines, then split) comes from: the contexts its characters span (a sentence pysbd ran
    across a newline spans two). Sentences are stripped pieces of the joined text, found in order."""
    starts, offset = [], 0
    for context in contexts:
        starts.append(offset)
        offset += len(context) + 1
    joined = "\n".join(contexts)
    found: list[set[int]] = []
    cursor = 0
    for sentence in sentences:
        at = joined.find(sentence, cursor)
        if at < 0:  # not found as it is (never for pysbd's pieces): the context the last one ended in
            found.append(set(found[-1]) if found else {0})
            continue
        end = at + len(sentence)
        found.append({c for c, start in enumerate(starts) if start < end and at < start + len(contexts[c]) + 1})
        cursor = end
    return found


def supporting_contexts(support: Support, by_sentence: Sequence[set[int]]) -> set[int]:
    """The contexts that led the grader to find a statement supported: those holding the deciding
    chunk's (or window's) evidence sentences (EVIDENCE_COVERAGE of the statement's words), else its
    closest sentences (every one at the best share), else every context the chunk spans."""
    scope = support.scope if support.scope is not None else range(len(by_sentence))
    inside = [m for m in support.evidence.matches if m.index in scope and m.index < len(by_sentence)]
    best = max((m.coverage for m in inside), default=0.0)
    chosen = [m.index for m in inside if best > 0 and m.coverage >= min(EVIDENCE_COVERAGE, best)]
    if not chosen:
        chosen = [i for i in scope if i < len(by_sentence)]
    return set().union(*(by_sentence[i] for i in chosen)) if chosen else set()


class NoiseSensitivity(JudgeMetric[NoiseParams]):
    name = "noise_sensitivity"
    description = "Share of the response's statements that the reference does not support and a relevant (or irrelevant) retrieved context does; lower is better."
    required_fields = ("user_input", "response", "reference", "retrieved_contexts")
    by_default = False  # named to run: localeval.metrics.DEFAULT_METRICS says why
    higher_is_better = False  # a share of wrong statements: compare calls a rise worse
    calibration_key = ATTRIBUTION_KEY  # the statement engine's verdicts
    calibration_features = ATTRIBUTION_FEATURES
    default_calibration = ATTRIBUTION_CALIBRATION
    Params = NoiseParams
    Details = NoiseDetails

    def score_batch(self, samples: Sequence[Sample], judge: Judge | None) -> list[Score]:
        return [self._score(sample, judge) for sample in samples]

    def _undefined(self, note: str) -> Score:
        return Score(value=float("nan"), details={"mode": self.params.mode, "note": note})

    def _score(self, sample: Sample, judge: Judge | None) -> Score:
        tally = UsageTally()
        # faithfulness' engine reads the response, context_recall's the reference: their options
        # are these, so their statements and prompts are those metrics' own.
        response_side, reference_side = Faithfulness(self.params), ContextRecall(self.params)
        contexts = sample.retrieved_contexts or []
        sentences = context_sentences(sample, self.params.language)
        if not sentences:
            return self._undefined("no retrieved context has a sentence")
        statements = response_side.statements_of(sample, judge, tally)
        if not statements:
            return self._undefined("the response has no statements")
        reference_statements = reference_side.statements_of(sample, judge, tally)
        if not reference_statements:
            return self._undefined("the reference has no statements")
        # 1. Against the reference: factual_correctness' precision verdicts.
        against_reference = sample.model_copy(update={"retrieved_contexts": [sample.reference or ""]})
        checked = response_side.score_statements(against_reference, statements, judge, tally, evidence_name="reference").details["statements"]
        incorrect = [n for n, verdict in enumerate(checked) if not verdict["attributed"]]
        grader = self.grader(judge)
        by_sentence = sentence_contexts(contexts, sentences)
        # 2. The incorrect statements against the retrieved contexts: faithfulness' verdicts.
        led: dict[int, set[int]] = {}
        if incorrect:
            answers = grader.supported([statements[n] for n in incorrect], sentences, tally, self.params.chunks)
            led = {n: supporting_contexts(a, by_sentence) for n, a in zip(incorrect, answers) if a.probability >= self.params.threshold}
        # 3. Which contexts are relevant, only where it matters: context_recall's verdicts.
        relevant: set[int] | None = None
        reference_by_context: list[list[bool]] = []
        if led:
            answers = grader.supported(reference_statements, sentences, tally, self.params.chunks)
            supporting = [supporting_contexts(a, by_sentence) if a.probability >= self.params.threshold else set() for a in answers]
            reference_by_context = [[c in found for c in range(len(contexts))] for found in supporting]
            relevant = set().union(*supporting)
        response_by_context = [[c in led.get(n, set()) for c in range(len(contexts))] for n in range(len(statements))]
        wrong = [not verdict["attributed"] for verdict in checked]
        counted = counted_statements(wrong, response_by_context, reference_by_context, self.params.mode)
        listed = []
        for n, verdict in enumerate(checked):
            row: dict[str, Any] = {"statement": verdict["statement"], "correct": verdict["attributed"], "probability": verdict["probability"], "contexts": sorted(led.get(n, set())), "counted": int(counted[n])}
            if verdict.get("reason"):
                row["reason"] = verdict["reason"]
            listed.append(row)
        details = {"mode": self.params.mode, "statements": listed, "relevant_contexts": None if relevant is None else sorted(relevant)}
        return Score(value=sum(counted) / len(counted), details=details, usage=self.usage(grader, tally))

    @classmethod
    def explain(cls, details: NoiseDetails) -> str:
        if details.note:
            return details.note
        counted = [s for s in details.statements if s.counted]
        kind = "a relevant" if details.mode == "relevant" else "only an irrelevant"
        said = f"{len(counted)} of {len(details.statements)} response statements are not supported by the reference yet {kind} retrieved context supports them"
        if not counted:
            return said
        parts = [f"'{shorten(s.statement)}' (context {', '.join(str(c + 1) for c in s.contexts)})" for s in counted[:MAX_ITEMS]]
        return said + ": " + "; ".join(parts)
