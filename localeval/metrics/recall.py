"""Statements attributed to the retrieved contexts: the engine of context_recall and faithfulness.

context_recall (ragas' LLMContextRecall) attributes the reference's statements, faithfulness
(localeval.metrics.faithfulness, ragas' Faithfulness) the response's; everything below is the
same for both (AttributedStatements): each statement is decided by the grader the options name
(localeval.graders: the judge rule's calibrated combination of its Yes/No log-odds on the best
chunks with the evidence features, or the verifier's best window), and the reason names the
evidence: the closest sentences of the deciding chunk or window, quoted, and the statement's
words the context never mentions; it never claims the context says more than the quoted
sentences do.

The sample's question never reaches a verdict (localeval.judge.prompts.ATTRIBUTION_USER): a
statement is supported by the contexts or not, whatever it answered. Only the `claims`
option's decomposition reads it, to resolve what a statement refers to.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, ClassVar, Literal

from pydantic import BaseModel, Field

from localeval.data.samples import Sample
from localeval.data.text import is_blank, split_sentences
from localeval.graders import Support
from localeval.graders.evidence import StatementEvidence, statement_evidence
from localeval.graders.judge_rule import ATTRIBUTION_CALIBRATION as DEFAULT_CALIBRATION
from localeval.graders.judge_rule import ATTRIBUTION_FEATURES as FEATURES
from localeval.graders.judge_rule import ATTRIBUTION_KEY as CALIBRATION_KEY
from localeval.judge import Judge
from localeval.judge.prompts import ATTRIBUTION_PLACEHOLDERS, ATTRIBUTION_REQUIRED, claims_messages
from localeval.judge.reading import UsageTally
from localeval.judge.rubric import JudgeTaskParams
from localeval.metrics.base import MAX_ITEMS, Score, ShareOption, shorten
from localeval.metrics.judging import JudgeMetric, JudgeParams, context_sentences

CLAIM_CHARS = 200
MAX_CLAIMS = 12
EVIDENCE_SENTENCES = 2  # sentences a reason quotes
EVIDENCE_COVERAGE = 0.5  # a sentence is evidence when it holds at least this share of the statement's words
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
        "grader": "what decides: judge (the judge rule), verifier (localeval's trained verifier reads the statement against windows of the context: no judge, fast, less accurate so far) or stacked (both: a model fitted for the default judge on validation rows weighs them, or a cascade band asks the judge only where the verifier is unsure; the judge rule where neither is fitted, as for the shipped statements); verifier=true/false is grader=verifier/judge (docs/measured.md)",
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
    decided_by: str | None = None  # grader=stacked: the stacked model, or the cascade's verifier or judge rule
    kept_sentence: bool = False  # statements=claims: a sentence the judge's claims could not cover, judged as it stands
    similarity_unmeasured: list[int] = Field(default_factory=list)  # context sentences too long for partial_ratio (evidence.SIMILARITY_MAX_WORK)


class RecallDetails(BaseModel):
    statements: list[StatementVerdict]
    claims_requests: int | None = None  # statements=claims: an answer reached MAX_CLAIMS, so the text was decomposed in parts, in this many requests


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


def _reason(verdict: bool, evidence: StatementEvidence, quoted: Sequence[int], sentences: Sequence[str], evidence_name: str = "context") -> str:
    """What the verdict rests on, in words that claim nothing the quoted sentences do not say;
    `evidence_name` is what the statement was read against (factual_correctness: the reference
    or the response), named here rather than rewritten afterwards, so a quote is never changed.
    An attributed statement with words the text never mentions says so too: the verdict may rest
    on a paraphrase, or be wrong ("Insulin is produced by the liver" against a text on the liver
    alone), and a reader checking verdicts should see the doubt where it is."""
    if not sentences:
        return f"not attributed; the {evidence_name} is empty"
    quotes = "; ".join(f'sentence {i + 1}: "{shorten(sentences[i], 120)}"' for i in quoted)
    missing = ", ".join(f"'{word}'" for word in evidence.missing[:5])
    if verdict:
        unmentioned = f"; the {evidence_name} never mentions {missing}" if missing else ""
        return (f"attributed; closest evidence: {quotes}" if quotes else "attributed") + unmentioned
    if missing:
        return f"not attributed; the {evidence_name} never mentions {missing}" + (f"; closest: {quotes}" if quotes else "")
    return f"not attributed; the closest sentences do not state it: {quotes}" if quotes else f"not attributed; no sentence of the {evidence_name} is close"


def _unread(statement: str, language: str = "en") -> Support:
    """The answer for a statement with no text to read it against: not supported (P 0), its
    evidence features those of an empty text, no feature of any grader (none read it)."""
    evidence = statement_evidence(statement, [], language)
    return Support(0.0, evidence.features(), evidence, None)


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
        if self.params.statements == "claims" and not is_blank(text):
            assert judge is not None
            return decompose_claims(judge, sample.user_input or "", text, self.params.language, tally)
        return Decomposition(split_sentences(text, self.params.language))

    def score_statements(self, sample: Sample, statements: Sequence[str], judge: Judge | None, tally: UsageTally | None = None, evidence_name: str = "context") -> Score:
        """Judge given statements against the sample's context (the accuracy benchmark feeds
        human-segmented statements here, through the same code as a normal run); `evidence_name`
        is what the reasons call that context. A context without a sentence (none retrieved, or
        only blank ones) supports nothing, whatever the grader: no grader is asked (a verifier
        reads a statement against nothing as likely true), every statement is not attributed, P 0,
        and its reason says the context is empty."""
        tally = tally or UsageTally()
        if not statements:
            return Score(value=float("nan"), details={"statements": []})
        params = self.params
        sentences = context_sentences(sample, params.language)
        grader = self.grader(judge)
        answers = grader.supported(statements, sentences, tally, params.chunks) if sentences else [_unread(statement, params.language) for statement in statements]
        verdicts = [self._verdict(statement, answer, sentences, evidence_name) for statement, answer in zip(statements, answers)]
        attributed = sum(v["attributed"] for v in verdicts)
        return Score(value=attributed / len(verdicts), details={"statements": verdicts}, usage=self.usage(grader, tally))

    @staticmethod
    def _quoted(evidence: StatementEvidence, scope: range) -> list[int]:
        """The sentences a reason quotes: those of `scope` holding most of the statement's words,
        else the context's closest sentence."""
        quoted = [m.index for m in evidence.matches if m.index in scope and m.coverage >= EVIDENCE_COVERAGE][:EVIDENCE_SENTENCES]
        if not quoted and evidence.matches and evidence.matches[0].coverage > 0:
            quoted = [evidence.matches[0].index]
        return sorted(quoted)

    def _verdict(self, statement: str, answer: Support, sentences: Sequence[str], evidence_name: str = "context") -> dict[str, Any]:
        """The statement's verdict in the details: P(attributed) at the threshold, the judge's
        log-odds on the deciding chunk (the judge rule), the features, the pieces a long
        statement was read in (the verifier), and the reason quoting the deciding chunk or window."""
        attributed = answer.probability >= self.params.threshold
        verdict: dict[str, Any] = {"statement": statement, "attributed": int(attributed), "probability": round(answer.probability, 4)}
        if answer.judge_log_odds is not None:
            verdict["judge_log_odds"] = round(answer.judge_log_odds, 4)
        verdict["features"] = {k: round(v, 4) for k, v in answer.features.items()}
        if answer.pieces > 1:
            verdict["pieces"] = answer.pieces
        if answer.decided_by is not None:
            verdict["decided_by"] = answer.decided_by
        if self.params.reasons:
            quoted = self._quoted(answer.evidence, answer.scope if answer.scope is not None else range(len(sentences)))
            verdict["evidence"] = quoted
            verdict["missing"] = list(answer.evidence.missing)
            verdict["reason"] = _reason(attributed, answer.evidence, quoted, sentences, evidence_name)
        _note_unmeasured(verdict, answer.evidence)
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
