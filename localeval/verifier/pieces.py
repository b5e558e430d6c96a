"""A text longer than its share of the verifier's input, read in pieces that fit, never cut.

The verifier reads at most `pairs.FIRST_TOKENS` tokens of a statement and what is left of its
input for the evidence. A longer statement is read as consecutive pieces that each fit (the
caller decides how their verdicts combine: a statement is supported only if every piece is),
and a longer context sentence as overlapping windows that each fit, so a fact that straddles
a boundary is whole in one of them. Pieces end at whitespace; a single "word" longer than the
limit (a long run of symbols) is cut between characters. Pieces are joined with single spaces,
which the tokenizer reads exactly as the original whitespace, so a piece's tokens are the sum
of its words' and every token of the text is in some piece.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable

_WORD = re.compile(r"\S+")


def _words(text: str, encode: Callable[[str], list[int]], limit: int) -> list[tuple[str, int]]:
    """The text's whitespace-separated words with their token counts, a word over `limit`
    tokens cut between characters into parts that fit."""
    words: list[tuple[str, int]] = []
    pending = list(reversed(_WORD.findall(text)))
    while pending:
        word = pending.pop()
        count = len(encode(word))
        if count <= limit or len(word) == 1:
            words.append((word, count))
        else:  # halve it until each half fits (a character is at most a token or two)
            middle = len(word) // 2
            pending.extend((word[middle:], word[:middle]))
    return words


def split_text(text: str, encode: Callable[[str], list[int]], limit: int, overlap: int = 0) -> list[str]:
    """`text` as pieces of at most `limit` tokens (`text` itself when it fits). Without
    `overlap`, consecutive pieces of about equal length that share nothing; with it, windows
    of up to `limit` tokens, each starting about `overlap` tokens before the previous one ends."""
    if len(encode(text)) <= limit:
        return [text]
    words = _words(text, encode, limit)
    pieces: list[str] = []
    start = 0
    while start < len(words):
        remaining = sum(count for _, count in words[start:])
        # Without overlap, aim at an even share of what is left, so the last piece is no stub.
        target = limit if overlap else math.ceil(remaining / math.ceil(remaining / limit))
        end, used = start, 0
        while end < len(words) and used + words[end][1] <= limit and (end == start or used < target):
            used += words[end][1]
            end += 1
        end = max(end, start + 1)
        pieces.append(" ".join(word for word, _ in words[start:end]))
        if end == len(words):
            break
        if overlap:
            back, shared = end, 0
            while back - 1 > start and shared < overlap:
                back -= 1
                shared += words[back][1]
            start = back
        else:
            start = end
    return pieces
