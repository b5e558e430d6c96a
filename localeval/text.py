"""Sentence splitting with pysbd, the segmenter ragas' definitions are written against."""

from __future__ import annotations

from functools import lru_cache

import pysbd
from pysbd.languages import LANGUAGE_CODES

LANGUAGES: tuple[str, ...] = tuple(sorted(LANGUAGE_CODES))  # what pysbd can split


@lru_cache(maxsize=len(LANGUAGES))
def _segmenter(language: str) -> pysbd.Segmenter:
    # clean=False keeps sentences verbatim, so a selected sentence can be shown
    # exactly as it stands in the context.
    return pysbd.Segmenter(language=language, clean=False)


def check_language(language: str) -> str:
    """A pydantic validator: the language must be one pysbd splits."""
    if language not in LANGUAGES:
        raise ValueError(f"'{language}' is not a language pysbd splits; one of {', '.join(LANGUAGES)}")
    return language


def split_sentences(text: str, language: str = "en") -> list[str]:
    """Non-blank sentences of `text`, stripped of surrounding whitespace."""
    if not text.strip():
        return []
    return [s.strip() for s in _segmenter(language).segment(text) if s.strip()]
