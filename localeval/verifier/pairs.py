"""How a verifier input is laid out: one definition for training and scoring.

`[CLS] a [SEP] b [SEP]` for attribution (a: the statement, b: an evidence chunk) and
`[CLS] a [SEP] b [SEP] c [SEP]` for relevance (a: the question, b: one sentence, c: the
paragraph it belongs to, which names what the sentence refers to). Token types are all 0:
llama.cpp's BERT feeds type 0 for the whole input, so a model trained this way runs there too.
Each part is cut to its share of `max_tokens` (the question first, then the sentence); the
paragraph fills what is left, from its start, where the subject is named.
"""

from __future__ import annotations

from collections.abc import Callable

from localeval.verifier.wordpiece import WordPiece

TASKS = ("relevance", "attribution")  # the verifier's logits, in this order
FIRST_TOKENS = 64  # a question or statement longer than this is cut
SENTENCE_TOKENS = 96  # a relevance unit longer than this is cut (the paragraph needs room)


def pack(tokenizer: WordPiece, a: str, b: str, c: str, max_tokens: int, encode: Callable[[str], list[int]] | None = None) -> list[int]:
    """The token ids of one input, at most `max_tokens` long. `encode` (default: the tokenizer's)
    lets a caller that packs many inputs sharing a text (every unit of one context) tokenize
    that text once."""
    encode = encode or tokenizer.encode
    first = encode(a)[:FIRST_TOKENS]
    if not c:
        room = max_tokens - len(first) - 3
        return [tokenizer.cls, *first, tokenizer.sep, *encode(b)[: max(room, 1)], tokenizer.sep]
    second = encode(b)[:SENTENCE_TOKENS]
    room = max_tokens - len(first) - len(second) - 4
    third = encode(c)[: max(room, 0)]
    return [tokenizer.cls, *first, tokenizer.sep, *second, tokenizer.sep, *third, tokenizer.sep]
