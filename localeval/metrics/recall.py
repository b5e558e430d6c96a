"""Statements attributed to the retrieved contexts: the engine of context_recall and faithfulness.

context_recall (ragas' LLMContextRecall) attributes the reference's statements, faithfulness
(localeval.metrics.faithfulness, ragas' Faithfulness) the response's; everything below is the
same for both (AttributedStatements), decided the way the strongest small checkers decide:

1. Evidence first: every context sentence is scored against the statement with
   signals that need no model (localeval.evidence): content-word coverage,
   similarity, numbers. They rank the context's chunks and explain the verdict.
2. Short evidence for the judge: the context is cut into chunks of about
   CHUNK_TOKENS tokens at sentence boundaries; the judge reads the best chunk by
   evidence (document first, statement last) and answers Yes or No in one token,
   read from the logits; only where it says No does it read the next best, up to
   `chunks`. The statement's judge score is the maximum log-odds over the chunks read.
3. A calibrated combination: P(attributed) = a logistic model over the judge's
   log-odds and the evidence features, fitted per judge on the human-labelled dev
   sets (models/catalog.toml; localeval.calibration). Attributed when P >= threshold.
4. Reasons that tell the truth: the reason names the evidence (the closest
   sentences, quoted) and the statement's words the context never mentions; it
   never claims the context says more than the quoted sentences do.

The sample's question never reaches a verdict (localeval.judge.prompts.ATTRIBUTION_USER): a
statement is supported by the contexts or not, whatever it answered. Only the `claims`
option's decomposition reads it, to resolve what a statement refers to.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar, Literal

from pydantic import BaseModel, Field

from localeval.calibration import LogisticModel
from localeval.errors import JudgeError
from localeval.evidence import StatementEvidence, question_overlap, statement_evidence
from localeval.judge import Judge
from localeval.judge.prompts import (
    ATTRIBUTION_PLACEHOLDERS,
    ATTRIBUTION_REQUIRED,
    attribution_messages,
    claims_messages,
)
from localeval.metrics.base import MAX_ITEMS, Score, ShareOption, shorten
from localeval.metrics.judging import JudgeMetric, JudgeParams, UsageTally, chunk_sentences, context_sentences, rubric_tokens, yes_log_odds
from localeval.rubric import JudgeTaskParams, Rubric
from localeval.samples import Sample
from localeval.text import split_sentences
from localeval.verifier import Verifier, load_verifier
from localeval.verifier.pairs import FIRST_TOKENS
from localeval.verifier.pieces import split_text

SUPPORTED_GATE = 0.0  # log-odds at which the judge found a statement supported (P(Yes) >= 0.5): no further chunk is read
# A chunk after the best is read only when one of its sentences holds at least this share of the
# statement's content words: where none does, the judge hardly ever finds the statement there, and
# the read only costs. On the dev sets (benchmarks/accuracy.py, docs/HISTORY.md) it keeps
# every verdict of the shipped calibration and cuts QAGS prompt tokens by a tenth.
NEXT_CHUNK_COVERAGE = 0.3
CHUNK_TOKENS = 300  # MiniCheck's chunks are about 400 tokens; shorter ones suit a 1.5B judge
MESSAGE_MARKERS = 8  # tokens a chat template puts around one message (Qwen's: 5)
PROMPT_OVERHEAD = 160  # tokens of instructions, topic and statement around a chunk (generous)
CLAIM_CHARS = 200
MAX_CLAIMS = 12
EVIDENCE_SENTENCES = 2  # sentences a reason quotes
EVIDENCE_COVERAGE = 0.5  # a sentence is evidence when it holds at least this share of the statement's words
CALIBRATION_KEY = "attribution"
# The verifier reads a statement against windows of consecutive context sentences that fit its
# input (it was trained on evidence of a sentence or a few); the statement's score is the best
# window's (a long statement's, its least supported piece's: verified_windows). Only the WINDOWS
# windows holding most of the statement's words are read, so the cost per statement is bounded
# whatever the context's length.
WINDOWS = 8
# The combination for a judge without a fitted one (a GGUF file that is not in the
# catalog): the judge's own log-odds, corrected by how much of the statement the
# context's closest sentence holds. The weights are round numbers of the fitted
# models' (models/catalog.toml); a fit for your judge is better
# (benchmarks/write_catalog.py --model PATH, for a catalog entry).
# The features every statement gets; a calibration must weigh each of them.
FEATURES = ("judge", "coverage", "best_coverage", "similarity", "number_coverage", "entity_coverage", "missing")
DEFAULT_CALIBRATION = LogisticModel(
    intercept=-1.3, weights={"judge": 0.8, "coverage": 0.0, "best_coverage": 1.5, "similarity": 0.0, "number_coverage": 0.0, "entity_coverage": 0.0, "missing": 0.0}
)
DEFAULT_THRESHOLD = 0.5  # the calibration is fitted with balanced classes: 0.5 is balanced accuracy's threshold


class Claims(BaseModel):
    claims: list[str] = Field(min_length=1, max_length=MAX_CLAIMS, json_schema_extra={"items": {"type": "string", "maxLength": CLAIM_CHARS}})


class RecallOptions(JudgeTaskParams):
    """context_recall's and faithfulness' own options (RecallParams adds the judge metrics' shared ones)."""

    statements: Literal["sentences", "claims"] = Field(
        "sentences", description="sentences: pysbd sentences of the text whose statements are checked (context_recall: the reference; faithfulness: the response); claims: the judge decomposes it first"
    )
    reasons: bool = Field(True, description="keep each verdict's evidence and reason in the details")
    threshold: ShareOption = Field(
        DEFAULT_THRESHOLD, description="a statement is attributed when its calibrated probability reaches this"
    )
    chunks: int = Field(2, ge=1, le=64, description="at most how many chunks of the context (the best by evidence) the judge reads per statement: the next only where it found the statement unsupported so far and one of that chunk's sentences holds 30%+ of the statement's words")


class RecallParams(JudgeParams, RecallOptions):
    rubric_allowed = ATTRIBUTION_PLACEHOLDERS
    rubric_required = ATTRIBUTION_REQUIRED
    option_help = {
        "rubric": "a file whose text replaces the judge's task ({placeholders}: {document}, {statement}); it must ask for Yes or No",
        "verifier": "decide with localeval's trained verifier (statement against windows of the context) instead of the judge: no judge needed and fast, but less accurate so far (docs/measured.md)",
    }


class StatementVerdict(BaseModel):
    statement: str
    attributed: Literal[0, 1]
    probability: float
    judge_log_odds: float | None = None
    evidence: list[int] = Field(default_factory=list)
    missing: list[str] = Field(default_factory=list)
    features: dict[str, float] = Field(default_factory=dict)
    reason: str | None = None
    pieces: int = 1  # with the verifier: a statement longer than it reads at once, read in this many pieces (the least supported decides)
    kept_sentence: bool = False  # statements=claims: a sentence the judge's claims could not cover, judged as it stands
    similarity_unmeasured: list[int] = Field(default_factory=list)  # context sentences too long for partial_ratio (evidence.SIMILARITY_MAX_WORK)


class RecallDetails(BaseModel):
    statements: list[StatementVerdict]
    claims_requests: int | None = None  # statements=claims: an answer reached MAX_CLAIMS, so the text was decomposed in parts, in this many requests


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


# A context sentence longer than the verifier's room is read as overlapping windows (the
# verifier.pieces module), each sharing about this share of its tokens with the one before, so a
# fact across a window's edge is whole in one of them.
LONG_SENTENCE_OVERLAP = 0.25


@dataclass(frozen=True)
class _Unit:
    """What one window of evidence is made of: a context sentence, or one overlapping part of a
    sentence too long for the verifier's room."""

    text: str
    sentence: int  # its sentence's index in the context
    tokens: int  # its tokens, and one for the space that joins it to the next (a window of one unit needs only its tokens)


def _units(sentences: Sequence[str], lengths: Sequence[int], room: int, encode: Callable[[str], list[int]]) -> list[_Unit]:
    """The context's sentences, each one over `room` tokens (what the verifier's input leaves
    beside the statement) replaced by its overlapping parts."""
    units: list[_Unit] = []
    for index, (sentence, length) in enumerate(zip(sentences, lengths)):
        if length - 1 <= room:
            units.append(_Unit(sentence, index, length))
            continue
        for part in split_text(sentence, encode, room, overlap=max(1, int(room * LONG_SENTENCE_OVERLAP))):
            units.append(_Unit(part, index, len(encode(part)) + 1))
    return units


def _windows(units: Sequence[_Unit], budget: int) -> list[range]:
    """For each unit, the longest run of units from it that fits `budget` tokens (at least the
    unit itself; never two overlapping parts of one sentence), dropping a run that another one
    contains."""
    windows: list[range] = []
    for start in range(len(units)):
        end, used = start + 1, units[start].tokens
        while end < len(units) and used + units[end].tokens <= budget and units[end].sentence != units[end - 1].sentence:
            used += units[end].tokens
            end += 1
        if not windows or end > windows[-1].stop:
            windows.append(range(start, end))
    return windows


def sentence_windows(sentences: Sequence[str], lengths: Sequence[int], budget: int) -> list[range]:
    """For each sentence, the longest run of sentences from it that fits `budget` tokens (at
    least the sentence itself), dropping a run that another one contains: the windows the
    verifier reads a context of whole sentences in. Public because training/prepare_split_data.py
    cuts its training rows' evidence the same way, so the verifier trains on the windows it reads."""
    return _windows([_Unit(sentence, index, length) for index, (sentence, length) in enumerate(zip(sentences, lengths))], budget)


@dataclass(frozen=True)
class VerifiedStatement:
    """The verifier's reading of one statement: its logit (the weakest piece's best window's),
    the context sentences of that window (None for an empty context: the logit is then the
    verifier's score against nothing), and how many pieces the statement was read in."""

    logit: float
    window: range | None
    pieces: int = 1


def verified_windows(verifier: Verifier, statements: Sequence[str], sentences: Sequence[str], language: str = "en") -> list[VerifiedStatement]:
    """Each statement read whole against the context's windows. A statement longer than the
    verifier reads at once (pairs.FIRST_TOKENS) is read in pieces, and is supported only as
    far as its least supported piece: its logit is the least of its pieces' logits, each piece's
    the best over its windows. A context sentence longer than a window is read in overlapping
    parts. Only the WINDOWS windows holding most of the piece's words are read, so the cost per
    piece is bounded whatever the context's length."""
    encode = verifier.caching_encode()
    lengths = [len(encode(sentence)) + 1 for sentence in sentences]
    budget = verifier.max_tokens["attribution"]
    units_by_room: dict[int, list[_Unit]] = {}
    pairs: list[tuple[str, str, str]] = []
    owners: list[tuple[int, int, range | None]] = []  # statement, piece, window of sentences
    pieces_of = [split_text(statement, encode, FIRST_TOKENS) for statement in statements]
    for number, pieces in enumerate(pieces_of):
        for piece_number, piece in enumerate(pieces):
            room = budget - len(encode(piece)) - 3
            if room not in units_by_room:
                units_by_room[room] = _units(sentences, lengths, room, encode)
            units = units_by_room[room]
            coverage = question_overlap(piece, [unit.text for unit in units], language)
            windows = _windows(units, room)
            best: list[range | None] = [*sorted(windows, key=lambda w: (-max(coverage[i] for i in w), w.start))[:WINDOWS]]
            for window in best or [None]:
                if window is None:
                    pairs.append((piece, "", ""))
                    owners.append((number, piece_number, None))
                else:
                    pairs.append((piece, " ".join(units[i].text for i in window), ""))
                    owners.append((number, piece_number, range(units[window.start].sentence, units[window[-1]].sentence + 1)))
    logits = verifier.logits("attribution", pairs, encode)
    best_of: dict[tuple[int, int], tuple[float, range | None]] = {}
    for (number, piece_number, read), logit in zip(owners, logits):
        if (number, piece_number) not in best_of or logit > best_of[(number, piece_number)][0]:
            best_of[(number, piece_number)] = (logit, read)
    results = []
    for number, pieces in enumerate(pieces_of):
        weakest, where = min((best_of[(number, p)] for p in range(len(pieces))), key=lambda found: found[0])
        results.append(VerifiedStatement(weakest, where, len(pieces)))
    return results


@dataclass(frozen=True)
class Decomposition:
    """A text's statements, and how the judge's claims were found when they were: the schema
    lets one answer hold at most MAX_CLAIMS claims, so an answer that reaches the limit may have
    left the text's end out, and the text is decomposed again in parts."""

    statements: list[str]
    requests: int = 1  # claims requests in all (more than one: the text was decomposed in parts)
    kept_sentences: tuple[int, ...] = ()  # statements that are the text's own sentences, whose claims the judge could not give

    def noted(self, score: Score) -> Score:
        """The score, its details saying how the statements were found where it was not one answer."""
        verdicts = score.details.get("statements") or []
        if self.requests > 1:
            score.details["claims_requests"] = self.requests
        for index in self.kept_sentences:
            if index < len(verdicts):
                verdicts[index]["kept_sentence"] = True
        return score


def decompose_claims(judge: Judge, question: str, text: str, language: str, tally: UsageTally) -> Decomposition:
    """The judge's claims for `text`, every part of it judged. An answer under MAX_CLAIMS claims
    is the whole decomposition (the judge stopped on its own). One that reaches the limit may
    have stopped before the text's end, so the text's sentences are decomposed again in two
    halves, each by the same rule; a single sentence whose claims still reach the limit, or
    whose answer has no claim, is kept as a statement itself. Nothing of the text goes unjudged."""
    sentences = split_sentences(text, language)
    statements: list[str] = []
    kept: list[int] = []
    requests = 0

    def ask(part: str) -> list[str] | None:
        """The part's claims, or None where the answer reached the limit or held no claim."""
        nonlocal requests
        answer, usage = judge.ask(claims_messages(question, part), Claims)
        tally.add(usage)
        requests += 1
        claims = [c.strip() for c in answer.claims if c.strip()]
        return claims if claims and len(answer.claims) < MAX_CLAIMS else None

    def decompose(first: int, stop: int, claims: list[str] | None) -> None:
        if claims is not None:
            statements.extend(claims)
        elif stop - first == 1:
            kept.append(len(statements))
            statements.append(sentences[first])
        else:
            middle = (first + stop) // 2
            for low, high in ((first, middle), (middle, stop)):
                decompose(low, high, ask(" ".join(sentences[low:high])))

    whole = ask(text)
    if whole is None and not sentences:
        return Decomposition([], requests)
    decompose(0, len(sentences), whole)
    return Decomposition(statements, requests, tuple(kept))


def _reason(verdict: bool, evidence: StatementEvidence, quoted: Sequence[int], sentences: Sequence[str]) -> str:
    """What the verdict rests on, in words that claim nothing the quoted sentences do not say."""
    quotes = "; ".join(f'sentence {i + 1}: "{shorten(sentences[i], 120)}"' for i in quoted)
    missing = ", ".join(f"'{word}'" for word in evidence.missing[:5])
    if verdict:
        return f"attributed; closest evidence: {quotes}" if quotes else "attributed"
    if missing:
        return f"not attributed; the context never mentions {missing}" + (f"; closest: {quotes}" if quotes else "")
    return f"not attributed; the closest sentences do not state it: {quotes}" if quotes else "not attributed; no sentence of the context is close"


def _note_unmeasured(verdict: dict[str, Any], evidence: StatementEvidence) -> None:
    """Name the context sentences whose similarity with the statement was too costly to measure
    (counted 0 in the features), so a verdict never rests on a silent shortcut."""
    if evidence.unmeasured:
        verdict["similarity_unmeasured"] = list(evidence.unmeasured)


class AttributedStatements(JudgeMetric[RecallParams]):
    """The statements of one text of the sample (`statements_field`), each attributed to the
    retrieved contexts or not; the score is the share attributed (NaN for a text without
    statements: ragas' LLMContextRecall and Faithfulness both return NaN there)."""

    statements_field: ClassVar[Literal["reference", "response"]]
    calibration_key = CALIBRATION_KEY
    calibration_features = FEATURES
    default_calibration = DEFAULT_CALIBRATION
    Params = RecallParams
    Details = RecallDetails

    def score_batch(self, samples: Sequence[Sample], judge: Judge | None) -> list[Score]:
        return [self._score(sample, judge) for sample in samples]

    def _score(self, sample: Sample, judge: Judge | None) -> Score:
        tally = UsageTally()
        found = self.decompose(sample, judge, tally)
        return found.noted(self.score_statements(sample, found.statements, judge, tally))

    def statements_of(self, sample: Sample, judge: Judge | None, tally: UsageTally) -> list[str]:
        """The statements of the sample's `statements_field`: its pysbd sentences, or with
        `statements=claims` the judge's decomposition (which alone reads the question)."""
        return self.decompose(sample, judge, tally).statements

    def decompose(self, sample: Sample, judge: Judge | None, tally: UsageTally) -> Decomposition:
        """statements_of, with how the statements were found (for the details)."""
        text = getattr(sample, self.statements_field) or ""
        if self.params.statements == "claims" and text.strip():
            assert judge is not None
            return decompose_claims(judge, sample.user_input or "", text, self.params.language, tally)
        return Decomposition(split_sentences(text, self.params.language))

    def score_statements(self, sample: Sample, statements: Sequence[str], judge: Judge | None, tally: UsageTally | None = None) -> Score:
        """Judge given statements against the sample's context (the accuracy benchmark feeds
        human-segmented statements here, through the same code as a normal run)."""
        tally = tally or UsageTally()
        if not statements:
            return Score(value=float("nan"), details={"statements": []})
        params = self.params
        if params.verifier:
            return self._score_verified(sample, statements, tally)
        assert judge is not None
        sentences = context_sentences(sample, params.language)
        room = (
            judge.context_size - PROMPT_OVERHEAD - rubric_tokens(judge, params.rubric) - _examples_tokens(judge, params.rubric)
            - judge.count_tokens(max(statements, key=len))
        )
        if room <= 0:
            raise JudgeError(f"the instructions, worked examples and longest statement leave no room for the context in the model's window of {judge.context_size} tokens; raise --n-ctx")
        chunks = chunk_sentences(sentences, judge.count_tokens, CHUNK_TOKENS, room)
        evidence = [statement_evidence(statement, sentences, params.language) for statement in statements]
        coverage = [_Coverage(found, len(sentences)) for found in evidence]
        wanted = [
            sorted(range(len(chunks)), key=lambda c: (-found.best_in(chunks[c]), c))[: params.chunks] for found in coverage
        ]
        log_odds: list[dict[int, float]] = [{} for _ in statements]
        # Round r reads each statement's r-th best chunk, only for statements the judge has not
        # found supported yet (SUPPORTED_GATE): a Yes on the best chunk is not overturned by
        # another chunk (the score is the maximum), so reading on would cost without changing it;
        # and after the best, only a chunk that mentions enough of the statement (NEXT_CHUNK_COVERAGE).
        # Within a round, chunk by chunk, so each chunk is evaluated once and every statement
        # after the first costs only its own tokens (llama.cpp's prefix cache).
        for round_ in range(params.chunks):
            pending = [
                n for n in range(len(statements))
                if round_ < len(wanted[n]) and max(log_odds[n].values(), default=-math.inf) < SUPPORTED_GATE
                and (round_ == 0 or coverage[n].best_in(chunks[wanted[n][round_]]) >= NEXT_CHUNK_COVERAGE)
            ]
            for chunk_index in sorted({wanted[n][round_] for n in pending}):
                document = " ".join(sentences[i] for i in chunks[chunk_index])
                for number in (n for n in pending if wanted[n][round_] == chunk_index):
                    value, usage = yes_log_odds(judge, attribution_messages(document, statements[number], params.rubric))
                    log_odds[number][chunk_index] = value
                    tally.add(usage)
        model = self.calibration_for(judge.calibration)
        verdicts = [
            self._verdict(statement, found, judged, chunks, sentences, model)
            for statement, found, judged in zip(statements, evidence, log_odds)
        ]
        attributed = sum(v["attributed"] for v in verdicts)
        return Score(value=attributed / len(verdicts), details={"statements": verdicts}, usage=tally.as_dict())

    def _score_verified(self, sample: Sample, statements: Sequence[str], tally: UsageTally) -> Score:
        """Each statement's P(attributed) from the verifier's best window; the reason quotes that
        window's closest sentences."""
        verifier = load_verifier()
        params = self.params
        sentences = context_sentences(sample, params.language)
        evidence = [statement_evidence(statement, sentences, params.language) for statement in statements]
        calibration = verifier.calibration["attribution"]
        verdicts = []
        for statement, found, read in zip(statements, evidence, verified_windows(verifier, statements, sentences, params.language)):
            probability = calibration.probability(read.logit)
            attributed = probability >= params.threshold
            verdict: dict[str, Any] = {"statement": statement, "attributed": int(attributed), "probability": round(probability, 4),
                                       "features": {"verifier": round(read.logit, 4), **{k: round(v, 4) for k, v in found.features().items()}}}
            if read.pieces > 1:
                verdict["pieces"] = read.pieces
            if params.reasons:
                quoted = self._quoted(found, read.window if read.window is not None else range(len(sentences)))
                verdict["evidence"] = quoted
                verdict["missing"] = list(found.missing)
                verdict["reason"] = _reason(attributed, found, quoted, sentences)
            _note_unmeasured(verdict, found)
            verdicts.append(verdict)
        attributed_count = sum(v["attributed"] for v in verdicts)
        return Score(value=attributed_count / len(verdicts), details={"statements": verdicts}, usage=tally.as_dict() if tally.calls else None)

    @staticmethod
    def _quoted(evidence: StatementEvidence, scope: range) -> list[int]:
        """The sentences a reason quotes: those of `scope` holding most of the statement's words,
        else the context's closest sentence."""
        quoted = [m.index for m in evidence.matches if m.index in scope and m.coverage >= EVIDENCE_COVERAGE][:EVIDENCE_SENTENCES]
        if not quoted and evidence.matches and evidence.matches[0].coverage > 0:
            quoted = [evidence.matches[0].index]
        return sorted(quoted)

    def _verdict(
        self, statement: str, evidence: StatementEvidence, judged: Mapping[int, float], chunks: Sequence[range], sentences: Sequence[str], model: LogisticModel
    ) -> dict[str, Any]:
        deciding = max(judged, key=lambda c: (judged[c], -c)) if judged else None
        features = {**evidence.features(), "judge": judged[deciding] if deciding is not None else 0.0}
        probability = model.probability(features)
        attributed = probability >= self.params.threshold
        verdict: dict[str, Any] = {"statement": statement, "attributed": int(attributed), "probability": round(probability, 4)}
        if deciding is not None:
            verdict["judge_log_odds"] = round(judged[deciding], 4)
        verdict["features"] = {k: round(v, 4) for k, v in features.items()}
        if self.params.reasons:
            quoted = self._quoted(evidence, chunks[deciding] if deciding is not None else range(len(sentences)))
            verdict["evidence"] = quoted
            verdict["missing"] = list(evidence.missing)
            verdict["reason"] = _reason(attributed, evidence, quoted, sentences)
        _note_unmeasured(verdict, evidence)
        return verdict

    @classmethod
    def explain(cls, details: RecallDetails) -> str:
        if not details.statements:
            return f"the {cls.statements_field} has no statements"
        missed = [s for s in details.statements if not s.attributed]
        if not missed:
            return "all statements attributed"
        parts = [f"'{shorten(s.statement)}'" + (f" ({shorten(s.reason)})" if s.reason else "") for s in missed[:MAX_ITEMS]]
        more = f" and {len(missed) - MAX_ITEMS} more" if len(missed) > MAX_ITEMS else ""
        return f"{len(missed)} of {len(details.statements)} statements not attributed: " + "; ".join(parts) + more


class ContextRecall(AttributedStatements):
    name = "context_recall"
    description = "Share of the reference's statements that the judge can attribute to the retrieved contexts."
    required_fields = ("user_input", "retrieved_contexts", "reference")
    statements_field = "reference"
