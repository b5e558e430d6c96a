"""Evidence that needs no model: which context sentences share a statement's words, and what is missing.

These signals are cheap enough to compute for every sentence, so they decide which
chunks the judge reads, feed the calibrated combination, and make the reasons a
user sees checkable (the sentence numbers and the words not found are facts about
the text, not the judge's prose). On the dev sets, the share of a claim's content
words found in the context ranks attributed claims about as well as the 1.5B judge
does (AUC 0.75), and the best single sentence's similarity is the strongest free
signal on QAGS summaries (benchmarks/accuracy.py prints both).
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from importlib import resources

from rapidfuzz import fuzz

# English function words: they match everywhere and carry no evidence. Other
# languages keep every word (a missing stop list only makes coverage stricter).
STOP_WORDS = frozenset(
    """a an the and or but if then else of to in on at by for with from as is are was were be been being
    it its this that these those he she they them his her their we our you your i me my not no nor so than
    too very can will would should could may might must do does did done has have had having into over under
    about after before between during through up down out off again further once here there when where why how
    all any both each few more most other some such only own same also just which who whom whose what while
    because until against above below per via s t""".split()
)
_WORD = re.compile(r"[^\W_]+")
_NUMBER = re.compile(r"\d+(?:[.,]\d+)*")
# A name: a capitalised word that does not open the statement ("Marilyn", "Castonguay").
_NAME = re.compile(r"(?<!^)(?<![.!?] )\b[A-Z][\w'-]+")
# partial_ratio aligns the shorter text with every window of the longer: its time grows with the
# square of the shorter's length times the longer's (1,000 characters against 20,000 of
# repetitive text: about 1.3 s per pair on one core; 20,000 against 20,000: tens of seconds), and
# evidence computes it for every statement x context sentence pair. A pair beyond this much work
# (a 1,000-character statement against a 1,000-character sentence, about 0.05 s) is not measured,
# as the string metrics refuse a pair beyond partial_ratio_max_chars: its similarity counts as 0
# and the evidence lists the sentence (`unmeasured`). A statement found verbatim in the sentence
# is 1.0 at any length, as partial_ratio gives it. Ordinary statements and sentences (a few
# hundred characters each) are far below the bound, so their evidence is unchanged.
SIMILARITY_MAX_WORK = 1_000**3
# Crude English suffixes: enough for "produces"/"produced"/"producing" to meet.
_SUFFIXES = ("ing", "ed", "es", "s")
MIN_STEM = 3


def _stem(word: str) -> str:
    for suffix in _SUFFIXES:
        if len(word) >= len(suffix) + MIN_STEM and word.endswith(suffix):
            return word[: -len(suffix)]
    return word


def _surface_words(text: str, language: str) -> dict[str, str]:
    """Content word (stemmed, for English) -> the first word of `text` it came from, lower-cased."""
    words: dict[str, str] = {}
    for word in _WORD.findall(text.lower()):
        if language == "en":
            if word in STOP_WORDS:
                continue
            words.setdefault(_stem(word), word)
        else:
            words.setdefault(word, word)
    return words


@lru_cache(maxsize=4096)
def content_words(text: str, language: str = "en") -> tuple[str, ...]:
    """Lower-cased words of `text` without function words, lightly stemmed (English), in order, unique."""
    return tuple(_surface_words(text, language))


WORD_FREQUENCIES = "data/word_frequency_en.txt"  # package data: tools/word_frequency_table.py
COMMON_ZIPF = 7.0  # about "one", "would": a word this frequent says nothing about the topic
UNLISTED_ZIPF = 2.5  # below the list's rarest word (2.7): a name, a number, a technical term
MIN_RARITY = 0.5  # a frequent content word ("year", "made") still counts a little


@lru_cache(maxsize=1)
def _zipf_frequencies() -> Mapping[str, float]:
    text = resources.files("localeval").joinpath(WORD_FREQUENCIES).read_text(encoding="utf-8")
    table = {}
    for line in text.splitlines():
        if line and not line.startswith("#"):
            word, _, zipf = line.partition("\t")
            table[word] = float(zipf)
    return table


def rarity(word: str, language: str = "en") -> float:
    """How much a lower-cased word tells about what a text is about: COMMON_ZIPF minus its
    Zipf frequency in English (at least MIN_RARITY; a word not in the list counts as rare).
    A property of the language, not of the retrieved contexts, so a question's words weigh
    the same whether one context or ten were retrieved. Other languages weigh words equally."""
    if language != "en":
        return 1.0
    return max(MIN_RARITY, COMMON_ZIPF - _zipf_frequencies().get(word, UNLISTED_ZIPF))


def weighted_words(text: str, language: str = "en") -> dict[str, float]:
    """Content word (stemmed, as `content_words`) -> the rarity of the word it came from."""
    return {stem: rarity(surface, language) for stem, surface in _surface_words(text, language).items()}


def numbers(text: str) -> frozenset[str]:
    """The numbers written in `text` ("1,200" and "3.5" count as one each)."""
    return frozenset(_NUMBER.findall(text))


def names(text: str) -> list[str]:
    """The capitalised words of `text` that do not open a sentence and are not function words:
    names, in English and most Latin-script languages (German nouns count too)."""
    return [name for name in _NAME.findall(text) if name.lower() not in STOP_WORDS]


def _share(wanted: Sequence[str] | frozenset[str], have: set[str] | frozenset[str]) -> float:
    """Share of `wanted` found in `have`; 1.0 when nothing is wanted (nothing can be missing)."""
    return sum(1 for word in wanted if word in have) / len(wanted) if wanted else 1.0


@dataclass(frozen=True)
class SentenceMatch:
    """How well one context sentence matches a statement."""

    index: int  # 0-based sentence number in the context
    coverage: float  # share of the statement's content words in this sentence
    similarity: float  # rapidfuzz partial_ratio of statement and sentence, 0..1


def similarity(statement: str, sentence: str) -> float | None:
    """rapidfuzz's partial_ratio of two lower-cased texts, 0..1; None for a pair beyond
    SIMILARITY_MAX_WORK that neither contains verbatim (too slow to measure)."""
    shorter, longer = sorted((statement, sentence), key=len)
    if len(shorter) ** 2 * len(longer) > SIMILARITY_MAX_WORK:
        return 1.0 if shorter and shorter in longer else None
    return fuzz.partial_ratio(statement, sentence) / 100.0


@dataclass(frozen=True)
class StatementEvidence:
    """What the context's words say about one statement."""

    coverage: float  # share of the statement's content words found anywhere in the context
    number_coverage: float  # share of its numbers found in the context (1.0 when it has none)
    entity_coverage: float  # share of its names (capitalised words) found in the context (1.0 when it has none)
    matches: tuple[SentenceMatch, ...] = field(default=())  # best first
    missing: tuple[str, ...] = field(default=())  # the statement's content words found nowhere, as it writes them
    unmeasured: tuple[int, ...] = field(default=())  # sentences too long to measure similarity with (counted 0)

    @property
    def best_coverage(self) -> float:
        return self.matches[0].coverage if self.matches else 0.0

    @property
    def best_similarity(self) -> float:
        return max((m.similarity for m in self.matches), default=0.0)

    def features(self) -> dict[str, float]:
        """The named features the calibrated combination reads (see localeval.calibration.combination)."""
        return {
            "coverage": self.coverage,
            "best_coverage": self.best_coverage,
            "similarity": self.best_similarity,
            "number_coverage": self.number_coverage,
            "entity_coverage": self.entity_coverage,
            # How many words are missing, not what share: one missing name in a long
            # claim matters as much as in a short one.
            "missing": math.log1p(len(self.missing)),
        }


def statement_evidence(statement: str, sentences: Sequence[str], language: str = "en") -> StatementEvidence:
    """Score every sentence against the statement; rank them by coverage, then similarity."""
    wanted = content_words(statement, language)
    per_sentence = [set(content_words(sentence, language)) for sentence in sentences]
    everywhere: set[str] = set().union(*per_sentence) if per_sentence else set()
    lowered = statement.lower()
    similarities = [similarity(lowered, sentence.lower()) for sentence in sentences]
    matches = [
        SentenceMatch(index, _share(wanted, words), value or 0.0)
        for index, (words, value) in enumerate(zip(per_sentence, similarities))
    ]
    matches.sort(key=lambda m: (-m.coverage, -m.similarity, m.index))
    context_text = " ".join(sentences)
    context_lower = context_text.lower()
    named = names(statement)
    return StatementEvidence(
        coverage=_share(wanted, everywhere),
        number_coverage=_share(numbers(statement), numbers(context_text)),
        entity_coverage=sum(1 for name in named if name.lower() in context_lower) / len(named) if named else 1.0,
        matches=tuple(matches),
        missing=tuple(surface for word, surface in _surface_words(statement, language).items() if word not in everywhere),
        unmeasured=tuple(index for index, value in enumerate(similarities) if value is None),
    )


def question_overlap(question: str, sentences: Sequence[str], language: str = "en") -> list[float]:
    """For each sentence, the share of the question's content words it contains."""
    wanted = content_words(question, language)
    return [_share(wanted, set(content_words(sentence, language))) for sentence in sentences]
