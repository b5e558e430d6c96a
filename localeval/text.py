"""Sentence splitting with pysbd, the segmenter ragas' definitions are written against."""

from __future__ import annotations

from functools import lru_cache

import pysbd


@lru_cache(maxsize=1)
def _segmenter() -> pysbd.Segmenter:
    # clean=False keeps sentences verbatim, so a selected sentence can be shown
    # exactly as it stands in the context.
    return pysbd.Segmenter(language="en", clean=False)


def split_sentences(text: str) -> list[str]:
    """Non-blank sentences of `text`, stripped of surrounding whitespace."""
    if not text.strip():
        return []
    return [s.strip() for s in _segmenter().segment(text) if s.strip()]
