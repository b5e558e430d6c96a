"""The checks a candidate passes before it is kept that need no judge: the question copies no
sentence of its contexts, stands alone, and is no near-duplicate of a kept question.

Each check returns the reason it refuses (one of REASONS) or None; the runner counts refusals by
reason in the run's summary.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from localeval.data.text import split_sentences

NEAR_COPY = "near_copy"
NOT_STANDALONE = "not_standalone"
NEAR_DUPLICATE = "near_duplicate"
NOT_A_QUESTION = "not_a_question"
ANSWER_CUT_OFF = "answer_cut_off"
ANSWER_ASKS = "answer_asks"
ANSWER_ABOUT_SOURCE = "answer_about_source"
EMPTY = "empty"
# A question is a near-copy when this share of its words is one run of words of a context
# sentence: "What is the boiling point of water at sea level?" against "The boiling point of
# water at sea level is 100 C." shares 7 of 9 words in a row (0.78) and is refused; "At what
# temperature does water boil at sea level?" shares "at sea level" (0.33) and is kept.
NEAR_COPY_SHARE = 0.6
DUPLICATE_COSINE = 0.9  # all-MiniLM-L6-v2: paraphrases of one question score above, two questions on one topic below
DUPLICATE_OVERLAP = 0.7  # the fallback without the embedding model: Jaccard of the questions' content words
_WORD = re.compile(r"[\w'-]+")
PRONOUNS = frozenset({"he", "she", "it", "they", "him", "her", "his", "its", "their", "them", "hers", "theirs"})
DEMONSTRATIVE_OPENERS = frozenset({"this", "these", "those", "that"})
# Phrases that point at the source instead of naming what it is about.
SOURCE_REFERENCES = re.compile(
    r"\b(the|this|that|given|above|provided|following) (passage|text|context|document|article|paragraph|excerpt|abstract|study|paper|author|authors|section|snippet|source)s?\b"
    r"|\baccording to the (passage|text|context|document|article|paragraph|excerpt|abstract|study|paper|author)\b|\bmentioned above\b|\bpassage [12]\b",
    re.IGNORECASE,
)
# A question that names nothing (no capitalised word after its first, no number) and has fewer
# than this many content words beyond VAGUE_WORDS asks about something only its passage names.
VAGUE_CONTENT_WORDS = 3
VAGUE_WORDS = frozenset({"name", "called", "main", "purpose", "type", "kind", "use", "used", "role", "one", "many", "much"})
STOPWORDS = frozenset(
    "a an the of in on at to for from by with and or but is are was were be been being do does did what which who whom whose when where why how "
    "that this these those it its as into than then there their they he she his her has have had not no can could would should will may might".split()
)


def words(text: str) -> list[str]:
    return [w.lower() for w in _WORD.findall(text)]


def content_words(text: str) -> set[str]:
    return {w for w in words(text) if w not in STOPWORDS}


def _longest_run(a: Sequence[str], b: Sequence[str]) -> int:
    """The longest run of words `a` and `b` share in the same order (dynamic programming: both are short)."""
    best = 0
    previous = [0] * (len(b) + 1)
    for x in a:
        current = [0] * (len(b) + 1)
        for j, y in enumerate(b, start=1):
            if x == y:
                current[j] = previous[j - 1] + 1
                best = max(best, current[j])
        previous = current
    return best


def copy_overlap(question: str, contexts: Sequence[str], language: str = "en") -> float:
    """The share of the question's words that are one run of words of one context sentence."""
    asked = words(question)
    if not asked:
        return 0.0
    longest = max((_longest_run(asked, words(sentence)) for context in contexts for sentence in split_sentences(context, language)), default=0)
    return longest / len(asked)


def word_overlap(question: str, source: str) -> float:
    """The share of the question's content words the source holds (the benchmark's measure of how
    much a question leans on its source's wording)."""
    asked = content_words(question)
    return len(asked & content_words(source)) / len(asked) if asked else 0.0


def copy_refusal(overlap: float) -> str | None:
    return NEAR_COPY if overlap >= NEAR_COPY_SHARE else None


def question_refusal(question: str, language: str = "en") -> str | None:
    """NOT_A_QUESTION for what is not one question: no question mark at its end, or more than one
    sentence (a small model copies its passage into the field, or asks two things at once)."""
    text = question.strip()
    if not text.endswith("?") or len(split_sentences(text, language)) > 1:
        return NOT_A_QUESTION
    return None


def answer_refusal(answer: str, limit: int) -> str | None:
    """ANSWER_CUT_OFF for a reference that reached the schema's length (the grammar ended it
    mid-word: "He is also known for the proof of theMil"), ANSWER_ASKS for one holding a question
    (a small model repeats the question before answering it), ANSWER_ABOUT_SOURCE for one that
    speaks of "the passage" or "the study"."""
    if len(answer) >= limit - 1:
        return ANSWER_CUT_OFF
    if "?" in answer:
        return ANSWER_ASKS
    if SOURCE_REFERENCES.search(answer):
        return ANSWER_ABOUT_SOURCE  # "The passage discusses ...": about the text, not a fact a retriever's answer could state
    return None


def standalone_refusal(question: str) -> str | None:
    """NOT_STANDALONE for a question that points at its source ("the passage", "the study") or whose
    pronoun has no name before it ("When was it founded?", "What did they find?"), or that opens
    with a demonstrative ("This method..."); a name before the pronoun is its antecedent."""
    if SOURCE_REFERENCES.search(question):
        return NOT_STANDALONE
    tokens = _WORD.findall(question)
    if tokens and tokens[0].lower() in DEMONSTRATIVE_OPENERS | PRONOUNS and not (len(tokens) > 1 and tokens[1].lower() in {"is", "was"} and tokens[0].lower() == "that"):
        return NOT_STANDALONE
    for position, token in enumerate(tokens):
        if token.lower() in PRONOUNS:
            named_before = any(t[:1].isupper() or t[:1].isdigit() for t in tokens[1:position])
            return None if named_before else NOT_STANDALONE
    names = any(t[:1].isupper() or t[:1].isdigit() for t in tokens[1:])
    if not names and len(content_words(question) - VAGUE_WORDS) < VAGUE_CONTENT_WORDS:
        return NOT_STANDALONE  # "What is the name of the prison?": which prison, the question never says
    return None


class Duplicates:
    """The kept questions, and whether a new one is a near-duplicate of any of them: by the
    embedding model's cosine (all-MiniLM-L6-v2) when it is pulled, else by word overlap (Jaccard of
    content words), and `measure` says which."""

    def __init__(self, embedder: Any | None) -> None:
        self._embedder = embedder
        self._vectors: list[Any] = []
        self._words: list[set[str]] = []
        self._last: tuple[str, Any] | None = None  # the question last embedded, and its vector
        self.measure = "embedding cosine (all-minilm-l6-v2)" if embedder is not None else "word overlap (the embedding model all-minilm-l6-v2 is not pulled)"

    def _vector(self, question: str) -> Any:
        """The question's embedding; the one `refusal` just made when `keep` follows it with the
        same question (a kept question is embedded once, not twice)."""
        if self._embedder is None:
            return None
        if self._last is None or self._last[0] != question:
            self._last = (question, self._embedder.embed([question])[0])
        return self._last[1]

    def closest(self, question: str) -> float:
        """The highest similarity to a kept question (0 with none kept)."""
        if self._embedder is not None:
            vector = self._vector(question)
            return max((float(vector @ kept) for kept in self._vectors), default=0.0)
        asked = content_words(question)
        return max((len(asked & kept) / len(asked | kept) if asked | kept else 1.0 for kept in self._words), default=0.0)

    def refusal(self, question: str) -> str | None:
        limit = DUPLICATE_COSINE if self._embedder is not None else DUPLICATE_OVERLAP
        return NEAR_DUPLICATE if self.closest(question) >= limit else None

    def keep(self, question: str) -> None:
        if self._embedder is not None:
            self._vectors.append(self._vector(question))
        self._words.append(content_words(question))
