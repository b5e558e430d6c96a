"""The judge rule: the GGUF judge's Yes/No log-odds, read on short evidence, combined with the
evidence features by a calibrated logistic model (localeval.calibration.combination).

Is a statement supported by a text (context_recall, faithfulness, factual_correctness)? The
way the strongest small checkers decide:

1. Evidence first: every sentence of the text is scored against the statement with signals
   that need no model (localeval.graders.evidence): content-word coverage, similarity, numbers. They
   rank the text's chunks and explain the verdict.
2. Short evidence for the judge: the text is cut into chunks of about CHUNK_TOKENS tokens at
   sentence boundaries; the judge reads the best chunk by evidence (document first, statement
   last) and answers Yes or No in one token, read from the logits; only where it says No does
   it read the next best, up to the metric's `chunks`. The statement's judge score is the
   maximum log-odds over the chunks read.
3. A calibrated combination: P(attributed) = a logistic model over the judge's log-odds and
   the evidence features (ATTRIBUTION_FEATURES), fitted per judge on the human-labelled dev
   sets (models/catalog.toml, table "attribution"), else ATTRIBUTION_CALIBRATION.

Is a context useful for arriving at an answer (context_precision)? The judge's Yes/No on the
usefulness prompt (question and answer first, so every context of a sample reuses their cached
prefix), a context too long for the window read in pieces and counted by its best piece, under
the table "usefulness" (else USEFULNESS_CALIBRATION). Is a unit needed to answer the question
(context_relevance)? localeval.graders.judge_units.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

from localeval.calibration.combination import LogisticModel
from localeval.errors import JudgeError
from localeval.graders import Grader, Needs, Support, Unit, Usefulness
from localeval.graders.evidence import StatementEvidence, statement_evidence
from localeval.graders.judge_units import judge_needs
from localeval.judge import Judge
from localeval.judge.prompts import attribution_messages, usefulness_messages
from localeval.judge.reading import UsageTally, chunk_sentences, rubric_tokens, yes_log_odds
from localeval.judge.rubric import Rubric

ATTRIBUTION_KEY = "attribution"
# The features every statement gets; a calibration must weigh each of them.
ATTRIBUTION_FEATURES = ("judge", "coverage", "best_coverage", "similarity", "number_coverage", "entity_coverage", "missing")
# The combination for a judge without a fitted one (a GGUF file that is not in the
# catalog): the judge's own log-odds, corrected by how much of the statement the
# context's closest sentence holds. The weights are round numbers of the fitted
# models' (models/catalog.toml); a fit for your judge is better
# (benchmarks/write_catalog.py --model PATH, for a catalog entry).
ATTRIBUTION_CALIBRATION = LogisticModel(
    intercept=-1.3, weights={"judge": 0.8, "coverage": 0.0, "best_coverage": 1.5, "similarity": 0.0, "number_coverage": 0.0, "entity_coverage": 0.0, "missing": 0.0}
)
SUPPORTED_GATE = 0.0  # log-odds at which the judge found a statement supported (P(Yes) >= 0.5): no further chunk is read
# A chunk after the best is read only when one of its sentences holds at least this share of the
# statement's content words: where none does, the judge hardly ever finds the statement there, and
# the read only costs. On the dev sets (benchmarks/accuracy.py, docs/HISTORY.md) it keeps
# every verdict of the shipped calibration and cuts QAGS prompt tokens by a tenth.
NEXT_CHUNK_COVERAGE = 0.3
CHUNK_TOKENS = 300  # MiniCheck's chunks are about 400 tokens; shorter ones suit a 1.5B judge
MESSAGE_MARKERS = 8  # tokens a chat template puts around one message (Qwen's: 5)
ATTRIBUTION_OVERHEAD = 160  # tokens of instructions, topic and statement around a chunk (generous)

USEFULNESS_KEY = "usefulness"
USEFULNESS_FEATURES = ("judge",)
# For a judge without a fitted table (a GGUF file not in the catalog): round numbers of the
# default judge's (localeval/catalog.toml): a small judge's Yes is cheap, so a context is useful
# from P(Yes) of about 0.72; a calibration file's "usefulness" table (intercept, judge) replaces it.
USEFULNESS_CALIBRATION = LogisticModel(intercept=-2.4, weights={"judge": 2.5})
USEFULNESS_OVERHEAD = 120  # tokens of instructions and wording around question, answer and paragraph


def _examples_tokens(judge: Judge, rubric: Rubric | None) -> int:
    """Tokens the worked examples add to every prompt (the turns between the system message and
    the question; none with a rubric), with each turn's chat markers (generous)."""
    examples = attribution_messages("", "", rubric)[1:-1]
    return sum(judge.count_tokens(message["content"]) + MESSAGE_MARKERS for message in examples)


class _Coverage:
    """Share of a statement's words in each context sentence (0 for a sentence with none), so a
    chunk's best sentence is found by looking at its own sentences: linear in the context, where
    scanning every match for every chunk grew with its square."""

    def __init__(self, evidence: StatementEvidence, sentences: int) -> None:
        self.by_sentence = [0.0] * sentences
        for match in evidence.matches:
            if 0 <= match.index < sentences:
                self.by_sentence[match.index] = max(self.by_sentence[match.index], match.coverage)

    def best_in(self, chunk: range) -> float:
        """Share of the statement's words in the chunk's best sentence: what ranks chunks."""
        return max((self.by_sentence[i] for i in chunk), default=0.0)


class JudgeRule(Grader):
    """The judge decides, on short evidence, weighed with the evidence features by the metric's
    calibrated combination (the module docstring)."""

    needs_judge = True

    def _judge(self) -> Judge:
        if self.judge is None:
            raise JudgeError("the judge rule needs a judge, and none is loaded")
        return self.judge

    def supported(self, statements: Sequence[str], sentences: Sequence[str], tally: UsageTally, chunks: int = 2) -> list[Support]:
        judge = self._judge()
        room = (
            judge.context_size - ATTRIBUTION_OVERHEAD - rubric_tokens(judge, self.rubric) - _examples_tokens(judge, self.rubric)
            - judge.count_tokens(max(statements, key=len))
        )
        if room <= 0:
            raise JudgeError(f"the instructions, worked examples and longest statement leave no room for the context in the model's window of {judge.context_size} tokens; raise --n-ctx")
        ranges = chunk_sentences(sentences, judge.count_tokens, CHUNK_TOKENS, room)
        evidence = [statement_evidence(statement, sentences, self.language) for statement in statements]
        coverage = [_Coverage(found, len(sentences)) for found in evidence]
        wanted = [sorted(range(len(ranges)), key=lambda c: (-found.best_in(ranges[c]), c))[:chunks] for found in coverage]
        log_odds: list[dict[int, float]] = [{} for _ in statements]
        # Round r reads each statement's r-th best chunk, only for statements the judge has not
        # found supported yet (SUPPORTED_GATE): a Yes on the best chunk is not overturned by
        # another chunk (the score is the maximum), so reading on would cost without changing it;
        # and after the best, only a chunk that mentions enough of the statement (NEXT_CHUNK_COVERAGE).
        # Within a round, chunk by chunk, so each chunk is evaluated once and every statement
        # after the first costs only its own tokens (llama.cpp's prefix cache).
        for round_ in range(chunks):
            pending = [
                n for n in range(len(statements))
                if round_ < len(wanted[n]) and max(log_odds[n].values(), default=-math.inf) < SUPPORTED_GATE
                and (round_ == 0 or coverage[n].best_in(ranges[wanted[n][round_]]) >= NEXT_CHUNK_COVERAGE)
            ]
            for chunk_index in sorted({wanted[n][round_] for n in pending}):
                document = " ".join(sentences[i] for i in ranges[chunk_index])
                for number in (n for n in pending if wanted[n][round_] == chunk_index):
                    value, usage = yes_log_odds(judge, attribution_messages(document, statements[number], self.rubric))
                    log_odds[number][chunk_index] = value
                    tally.add(usage)
        return [self._support(found, judged, ranges) for found, judged in zip(evidence, log_odds)]

    def _support(self, evidence: StatementEvidence, judged: Mapping[int, float], ranges: Sequence[range]) -> Support:
        """The calibrated combination over the evidence features and the judge's best chunk."""
        deciding = max(judged, key=lambda c: (judged[c], -c)) if judged else None
        features = {**evidence.features(), "judge": judged[deciding] if deciding is not None else 0.0}
        if deciding is None:
            return Support(self.calibration.probability(features), features, evidence, None)
        return Support(self.calibration.probability(features), features, evidence, ranges[deciding], judged[deciding])

    def needed(self, question: str, units: Sequence[Unit], passages: Sequence[str], tally: UsageTally, judged_contexts: int = 0, whole_contexts: bool = False) -> Needs:
        return judge_needs(self._judge(), self.calibration, question, units, passages, tally, self.language, self.rubric, judged_contexts, whole_contexts)

    def useful(self, question: str, answer: str, contexts: Sequence[str], tally: UsageTally, answer_name: str = "answer") -> list[Usefulness | None]:
        judge = self._judge()
        budget = judge.context_size - USEFULNESS_OVERHEAD - rubric_tokens(judge, self.rubric) - judge.count_tokens(question) - judge.count_tokens(answer)
        if budget <= 0:
            raise JudgeError(f"the instructions, question and {answer_name} leave no room for a context in the model's window of {judge.context_size} tokens; raise --n-ctx")

        def usefulness(sentences: list[str]) -> Usefulness:
            best = -math.inf
            for piece in chunk_sentences(sentences, judge.count_tokens, budget, budget):
                value, usage = yes_log_odds(judge, usefulness_messages(" ".join(sentences[i] for i in piece), question, answer, self.rubric))
                tally.add(usage)
                best = max(best, value)
            return Usefulness(self.calibration.probability({"judge": best}), {"judge_log_odds": best})

        return self.each_context(contexts, usefulness)
