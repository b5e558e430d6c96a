"""Texts quoted in a sentence about what moved: on one line, cut, and quoted without escaping.

Shared by the movers (localeval.comparison.movers) and the rank movers (rank_movers), which
movers imports: one place, so that neither quotes with Python's repr again.
"""

from __future__ import annotations

from typing import Any

MAX_TEXT = 160  # characters of a statement, context or unit quoted


def short(text: Any, limit: int = MAX_TEXT) -> str:
    """A text on one line (runs of white space as one space), cut to `limit` characters."""
    found = " ".join(str(text).split())
    return found if len(found) <= limit else found[: limit - 3] + "..."


def quote(text: Any, limit: int = MAX_TEXT) -> str:
    """A text shortened and quoted for a sentence, with no escaping: in single quotes, in double
    quotes when it holds a single quote, in curly quotes when it holds both. (Python's repr added
    backslashes that every report then showed: `never mentions \\'maria\\'`.)"""
    text = short(text, limit)
    if "'" not in text:
        return f"'{text}'"
    if '"' not in text:
        return f'"{text}"'
    return f"\u201c{text}\u201d"
