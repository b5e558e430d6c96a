"""The verifier: localeval's trained cross-encoder (localeval.verifier) as a grader, under its own
calibration (the verifier file's, per task).

Is a statement supported by a text? The statement is read against windows of consecutive
sentences of the text that fit the verifier's input (it was trained on evidence of a sentence
or a few); its logit is the best window's, and a statement longer than the verifier reads at
once is read in pieces, supported only as far as its least supported piece (verified_windows).
A statement that is word for word a sentence or run of sentences of the text is supported
whatever its logit (exact evidence: `stated_in`): the longest windows never read a statement
against its own sentence alone, and the verifier refused statements standing word for word in
a three-sentence context (P 0.30-0.37). Reading the two sentences holding most of a statement's
words alone as well fixed those, but lowered the dev figures (QAGS AUC 0.804 -> 0.796,
claims AUC 0.719 -> 0.714, 100 rows each) where exact evidence alone keeps them (QAGS AUC 0.812).
Is a unit needed to answer the question? The verifier reads the question, the unit and the
context it belongs to; the unit's logit plus `passage_weight` times the best logit in its context
gives P(needed), and the units at or above the threshold are selected. Is a context useful for
arriving at an answer? Through the answer's statement it supports best: an answer is arrived at
from a context that states part of it.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from localeval.data.text import split_sentences
from localeval.graders import Grader, Needs, Support, Unanswerable, Unit, Usefulness
from localeval.graders.evidence import StatementEvidence, question_overlap, statement_evidence
from localeval.graders.verifier_cache import cached_logits
from localeval.judge.reading import UsageTally
from localeval.verifier import TaskCalibration, Verifier, load_verifier
from localeval.verifier.pairs import FIRST_TOKENS, SENTENCE_TOKENS
from localeval.verifier.pieces import split_text

# The verifier reads a statement against windows of consecutive context sentences that fit its
# input; only the WINDOWS windows holding most of the statement's words are read, so the cost
# per statement is bounded whatever the context's length.
WINDOWS = 8


# A context sentence longer than the verifier's room is read as overlapping windows (the
# verifier.pieces module), each sharing about this share of its tokens with the one before, so a
# fact across a window's edge is whole in one of them.
LONG_SENTENCE_OVERLAP = 0.25
# A statement longer than the verifier reads at once is cut into pieces of at most this many
# tokens, under FIRST_TOKENS, so a piece holds about one clause: in a piece filled to the
# budget an invented clause shares its piece with true ones, and the GPU-tuned file reads such
# a piece as supported (tests/test_long_statements.py's invented tail: logit 2.57 in 64-token
# pieces, -4.82 in 48-token ones; the true statement's pieces 4.77 / 3.93 either way).
STATEMENT_PIECE_TOKENS = 48


@dataclass(frozen=True)
class _Part:
    """What one window of evidence is made of: a context sentence, or one overlapping part of a
    sentence too long for the verifier's room."""

    text: str
    sentence: int  # its sentence's index in the context
    tokens: int  # its tokens, and one for the space that joins it to the next (a window of one unit needs only its tokens)


def _parts(sentences: Sequence[str], lengths: Sequence[int], room: int, encode: Callable[[str], list[int]]) -> list[_Part]:
    """The context's sentences, each one over `room` tokens (what the verifier's input leaves
    beside the statement) replaced by its overlapping parts."""
    parts: list[_Part] = []
    for index, (sentence, length) in enumerate(zip(sentences, lengths)):
        if length - 1 <= room:
            parts.append(_Part(sentence, index, length))
            continue
        for part in split_text(sentence, encode, room, overlap=max(1, int(room * LONG_SENTENCE_OVERLAP))):
            parts.append(_Part(part, index, len(encode(part)) + 1))
    return parts


def _windows(units: Sequence[_Part], budget: int) -> list[range]:
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
    return _windows([_Part(sentence, index, length) for index, (sentence, length) in enumerate(zip(sentences, lengths))], budget)


@dataclass(frozen=True)
class VerifiedStatement:
    """The verifier's reading of one statement: its logit (the weakest piece's best window's),
    the context sentences of that window (None for an empty context: the logit is then the
    verifier's score against nothing), how many pieces the statement was read in, and whether it
    stands word for word in the context (`stated_in`: the window is then those sentences)."""

    logit: float
    window: range | None
    pieces: int = 1
    verbatim: bool = False


def _plain(text: str) -> str:
    """A text as `stated_in` compares it: whitespace runs as one space, a final full stop dropped."""
    return " ".join(text.split()).removesuffix(".")


def stated_in(statement: str, sentences: Sequence[str]) -> range | None:
    """The run of consecutive context sentences that is the statement word for word (whitespace,
    and a full stop at its end, aside), or None. Such a statement is supported whatever the
    verifier reads: the context says exactly it."""
    return _run_of(_plain(statement), [" ".join(sentence.split()) for sentence in sentences])


def _run_of(wanted: str, plain: Sequence[str]) -> range | None:
    """`stated_in` for a statement and sentences with their whitespace made single spaces (the
    sentences once for all of a sample's statements)."""
    if not wanted:
        return None
    for start, first in enumerate(plain):
        if not wanted.startswith(_plain(first)):
            continue
        joined = ""
        for end in range(start, len(plain)):
            joined = f"{joined} {plain[end]}" if joined else plain[end]
            if _plain(joined) == wanted:
                return range(start, end + 1)
            if len(joined) > len(wanted) + 1:
                break
    return None


def verified_windows(verifier: Verifier, statements: Sequence[str], sentences: Sequence[str], language: str = "en") -> list[VerifiedStatement]:
    """Each statement read whole against the context's windows. A statement longer than the
    verifier reads at once (pairs.FIRST_TOKENS) is read in pieces (STATEMENT_PIECE_TOKENS), and is supported only as
    far as its least supported piece: its logit is the least of its pieces' logits, each piece's
    the best over its windows. A context sentence longer than a window is read in overlapping
    parts. Only the WINDOWS windows holding most of the piece's words are read, so the cost per
    piece is bounded whatever the context's length. A statement that stands word for word in the context (`stated_in`) is
    marked `verbatim`, its window those sentences."""
    encode = verifier.caching_encode()
    lengths = [len(encode(sentence)) + 1 for sentence in sentences]
    budget = verifier.max_tokens["attribution"]
    parts_by_room: dict[int, list[_Part]] = {}
    pairs: list[tuple[str, str, str]] = []
    owners: list[tuple[int, int, range | None]] = []  # statement, piece, window of sentences
    pieces_of = [[statement] if len(encode(statement)) <= FIRST_TOKENS else split_text(statement, encode, STATEMENT_PIECE_TOKENS) for statement in statements]
    for number, pieces in enumerate(pieces_of):
        for piece_number, piece in enumerate(pieces):
            room = budget - len(encode(piece)) - 3
            if room not in parts_by_room:
                parts_by_room[room] = _parts(sentences, lengths, room, encode)
            units = parts_by_room[room]
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
    logits = cached_logits(verifier, "attribution", pairs, encode)
    best_of: dict[tuple[int, int], tuple[float, range | None]] = {}
    for (number, piece_number, read), logit in zip(owners, logits):
        if (number, piece_number) not in best_of or logit > best_of[(number, piece_number)][0]:
            best_of[(number, piece_number)] = (logit, read)
    results = []
    plain = [" ".join(sentence.split()) for sentence in sentences]
    for number, pieces in enumerate(pieces_of):
        weakest, where = min((best_of[(number, p)] for p in range(len(pieces))), key=lambda found: found[0])
        stated = _run_of(_plain(statements[number]), plain)
        results.append(VerifiedStatement(weakest, stated or where, len(pieces), stated is not None))
    return results


EXACT_EVIDENCE = "exact evidence (the statement stands word for word in the context)"


def verifier_support(calibration: TaskCalibration, read: VerifiedStatement, evidence: StatementEvidence, decided_by: str | None = None) -> Support:
    """The verifier's answer for one statement: its calibrated probability (1.0 for a statement
    standing word for word in the context, whatever its logit), its logit beside the evidence
    features, and its best window (or the sentences it stands in) as the scope a reason quotes from."""
    probability = 1.0 if read.verbatim else calibration.probability(read.logit)
    decided_by = decided_by or (EXACT_EVIDENCE if read.verbatim else None)
    return Support(probability, {"verifier": read.logit, **evidence.features()}, evidence, read.window, pieces=read.pieces, decided_by=decided_by)


# A unit longer than the verifier reads of it (pairs.SENTENCE_TOKENS) is read as overlapping
# parts, each sharing this share of its tokens with the one before; its logit is its best part's
# (a unit is required when some part of it is), so a fact deep in a long sentence is read.
UNIT_OVERLAP = 0.25


def _unit_logits(verifier: Verifier, encode: Callable[[str], list[int]], question: str, units: Sequence[Unit], passages: Sequence[str]) -> tuple[list[float], list[int]]:
    """Each unit's relevance logit, read whole, and how many parts each was read in."""
    pairs: list[tuple[str, str, str]] = []
    owners: list[int] = []
    parts: list[int] = []
    for number, unit in enumerate(units):
        pieces = split_text(unit.text, encode, SENTENCE_TOKENS, overlap=int(SENTENCE_TOKENS * UNIT_OVERLAP))
        parts.append(len(pieces))
        for piece in pieces:
            pairs.append((question, piece, passages[unit.passage]))
            owners.append(number)
    logits = [-math.inf] * len(units)
    for number, value in zip(owners, cached_logits(verifier, "relevance", pairs, encode)):
        logits[number] = max(logits[number], value)
    return logits, parts


def context_best(logits: Sequence[float], contexts: Sequence[int]) -> list[float]:
    """Each unit's context's best logit (`contexts[i]` is unit i's context). A unit is read beside
    its context's strongest: the sentence that answers lifts its neighbours less than itself."""
    best: dict[int, float] = {}
    for value, context in zip(logits, contexts):
        best[context] = max(best.get(context, value), value)
    return [best[context] for context in contexts]


class VerifierGrader(Grader):
    """The trained verifier decides (the module docstring); no judge is called, and the metric's
    calibration for the judge is not used: the verifier file carries its own."""

    needs_judge = False

    @classmethod
    def recorded(cls) -> dict[str, Any]:
        return {"verifier_file": load_verifier().describe()}

    def supported(self, statements: Sequence[str], sentences: Sequence[str], tally: UsageTally, chunks: int = 2) -> list[Support]:
        verifier = load_verifier()
        evidence = [statement_evidence(statement, sentences, self.language) for statement in statements]
        calibration = verifier.calibration["attribution"]
        return [verifier_support(calibration, read, found) for found, read in zip(evidence, verified_windows(verifier, statements, sentences, self.language))]

    def read_units(self, question: str, units: Sequence[Unit], passages: Sequence[str]) -> tuple[list[float], list[float], dict[str, Any]]:
        """Each unit's relevance logit, its context's best logit, and the notes (how many parts a
        long unit was read in): what this grader decides on and what the stacked grader weighs."""
        verifier = load_verifier()
        encode = verifier.caching_encode()
        if len(encode(question)) > FIRST_TOKENS:
            raise Unanswerable(
                f"the question has {len(encode(question))} tokens, more than the {FIRST_TOKENS} the verifier reads of it: "
                "decide context_relevance with the judge (without --verifier), or shorten the question"
            )
        logits, parts = _unit_logits(verifier, encode, question, units, passages)
        notes = {"unit_parts": parts} if any(count > 1 for count in parts) else {}
        return logits, context_best(logits, [u.passage for u in units]), notes

    def needed(self, question: str, units: Sequence[Unit], passages: Sequence[str], tally: UsageTally, judged_contexts: int = 0, whole_contexts: bool = False) -> Needs:
        logits, best, notes = self.read_units(question, units, passages)
        calibration = load_verifier().calibration["relevance"]
        probabilities = [calibration.probability(v + calibration.passage_weight * b) for v, b in zip(logits, best)]
        features = [{"verifier": v, "best_in_context": b} for v, b in zip(logits, best)]
        return Needs(probabilities, features, notes=notes)

    def useful(self, question: str, answer: str, contexts: Sequence[str], tally: UsageTally, answer_name: str = "answer") -> list[Usefulness | None]:
        verifier = load_verifier()
        calibration = verifier.calibration["attribution"]
        statements = split_sentences(answer, self.language)

        def usefulness(sentences: list[str]) -> Usefulness:
            reads = verified_windows(verifier, statements, sentences, self.language)
            logit = max(read.logit for read in reads)
            # context_recall's verdict: a statement the context states word for word is supported by it
            probability = 1.0 if any(read.verbatim for read in reads) else calibration.probability(logit)
            return Usefulness(probability, {"verifier": logit})

        return self.each_context(contexts, usefulness)
