"""Sentence splitting with pysbd, the segmenter ragas' definitions are written against."""

from __future__ import annotations

import threading

import pysbd
from pysbd.languages import LANGUAGE_CODES

LANGUAGES: tuple[str, ...] = tuple(sorted(LANGUAGE_CODES))  # what pysbd can split
_local = threading.local()


def _segmenter(language: str) -> pysbd.Segmenter:
    """One segmenter per language and thread: a pysbd Segmenter keeps state while it
    splits, so two threads sharing one (a judge server scores samples concurrently)
    get each other's sentences. clean=False keeps sentences verbatim, so a selected
    sentence can be shown exactly as it stands in the context."""
    segmenters: dict[str, pysbd.Segmenter] = _local.__dict__.setdefault("segmenters", {})
    if language not in segmenters:
        segmenters[language] = pysbd.Segmenter(language=language, clean=False)
    return segmenters[language]


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
