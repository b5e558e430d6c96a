"""Sentence splitting with pysbd, the segmenter ragas' definitions are written against."""

from __future__ import annotations

import re
import threading
import unicodedata
from collections.abc import Iterator
from functools import lru_cache

import pysbd
from pysbd.languages import LANGUAGE_CODES

LANGUAGES: tuple[str, ...] = tuple(sorted(LANGUAGE_CODES))  # what pysbd can split
_local = threading.local()


def _segmenter(language: str, spans: bool = False) -> pysbd.Segmenter:
    """One segmenter per language and thread: a pysbd Segmenter keeps state while it
    splits, so two threads sharing one (a judge server scores samples concurrently)
    get each other's sentences. clean=False keeps sentences verbatim, so a selected
    sentence can be shown exactly as it stands in the context."""
    segmenters: dict[tuple[str, bool], pysbd.Segmenter] = _local.__dict__.setdefault("segmenters", {})
    if (language, spans) not in segmenters:
        segmenters[(language, spans)] = pysbd.Segmenter(language=language, clean=False, char_span=spans)
    return segmenters[(language, spans)]


def check_language(language: str) -> str:
    """A pydantic validator: the language must be one pysbd splits."""
    if language not in LANGUAGES:
        raise ValueError(f"'{language}' is not a language pysbd splits; one of {', '.join(LANGUAGES)}")
    return language


# Characters that show nothing: besides whitespace, Unicode's format characters (zero-width space
# and joiners, word joiner, byte order mark, soft hyphen, direction marks) and control characters.
INVISIBLE_CATEGORIES = frozenset({"Cf", "Cc"})


def is_blank(text: str) -> bool:
    """Whether `text` shows nothing: only whitespace and invisible characters (INVISIBLE_CATEGORIES).
    A response of zero-width spaces has no statement, as an empty one has none, and a question of
    them asks nothing: every metric reads such a text as blank, not as a sentence to judge."""
    return all(char.isspace() or unicodedata.category(char) in INVISIBLE_CATEGORIES for char in text)


# pysbd's time grows with the square of a text's length (issue 20: 4,000 one-word sentences
# took 3.6x the time of 2,000), so a longer text is split window by window: pysbd splits a window of
# WINDOW_CHARS, every sentence but the window's last is kept, and the next window starts where
# that last (perhaps cut off) sentence starts. Texts up to the window (nearly every retrieved
# context) are split exactly as pysbd splits them whole; longer ones may differ at a
# window's edge. A sentence longer than a window is cut at the window's last whitespace, so no
# word is cut in two (a window without whitespace, one "word" of 6,000 characters, at its end).
WINDOW_CHARS = 6000
_LAST_SPACE = re.compile(r"\s+\S*\Z")


def _cut(window: str) -> int:
    """Where a window holding part of one long sentence ends: at its last whitespace (never
    inside a word), else at its end."""
    found = _LAST_SPACE.search(window)
    return found.start() if found is not None and found.start() > 0 else len(window)


def _segments(text: str, language: str) -> Iterator[str]:
    """pysbd's sentences of `text`, in time linear in its length."""
    segmenter = _segmenter(language, spans=True)
    start = 0
    while len(text) - start > WINDOW_CHARS:
        spans = segmenter.segment(text[start : start + WINDOW_CHARS])
        if len(spans) < 2:  # one sentence longer than the window: cut it between two words
            end = start + _cut(text[start : start + WINDOW_CHARS])
            yield text[start:end]
            start = end
            continue
        for span in spans[:-1]:
            yield span.sent
        start += spans[-1].start
    for span in segmenter.segment(text[start:]):
        yield span.sent


def split_sentences(text: str, language: str = "en") -> list[str]:
    """Sentences of `text` that are not blank (`is_blank`), stripped of surrounding whitespace (in
    time linear in the text's length: see WINDOW_CHARS). A text several metrics split (the response: faithfulness'
    statements, factual_correctness' statements and its evidence) is split once (`_split`)."""
    if is_blank(text):
        return []
    return list(_split(text, language))


@lru_cache(maxsize=64)  # a few samples' texts: every metric of a sample reads them while it is scored
def _split(text: str, language: str) -> tuple[str, ...]:
    return tuple(s.strip() for s in _segments(text, language) if not is_blank(s))
