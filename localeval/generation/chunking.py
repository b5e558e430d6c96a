"""Sentence-aware chunks of a document, each with a stable id (the document's path and its position).

A chunk is whole sentences (pysbd, as every metric splits them) up to `size` tokens, never a
sentence cut in two unless one sentence alone is longer than a chunk (then it is cut between
words). Paragraphs (blank-line separated) are split on their own, so a sentence never spans
two of them. Tokens are counted as words and punctuation marks (TOKEN): within about a
quarter of what a BPE tokenizer counts for English prose, and the same on every machine, so a
chunk's id never depends on which model is installed. The default, 256, is at the low end of
common RAG settings (256-512 tokens): a chunk small enough that one question is about one thing.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from localeval.data.text import split_sentences
from localeval.generation.documents import Chunk, Document

DEFAULT_CHUNK_TOKENS = 256
MIN_CHUNK_TOKENS = 16
MAX_CHUNK_TOKENS = 4096
TOKEN = re.compile(r"\w+|[^\w\s]")
_PARAGRAPHS = re.compile(r"\n\s*\n")


def count_tokens(text: str) -> int:
    """Words and punctuation marks: the unit --chunk-size counts."""
    return len(TOKEN.findall(text))


def _packed(parts: Iterable[tuple[str, int]], size: int) -> list[str]:
    """The parts (each a text and its tokens) joined in order, a space between, each group as
    many as fit in `size` tokens: a part that would overflow its group opens the next one."""
    groups: list[str] = []
    current: list[str] = []
    used = 0
    for text, cost in parts:
        if current and used + cost > size:
            groups.append(" ".join(current))
            current, used = [], 0
        current.append(text)
        used += cost
    if current:
        groups.append(" ".join(current))
    return groups


def _pieces(sentence: str, size: int) -> list[str]:
    """A sentence longer than a chunk, cut between words into pieces of at most `size` tokens."""
    return _packed(((word, count_tokens(word)) for word in sentence.split()), size)


def chunk_text(text: str, size: int = DEFAULT_CHUNK_TOKENS, language: str = "en") -> list[str]:
    """The text's chunks: whole sentences, at most `size` tokens each (see the module docstring)."""
    chunks: list[str] = []
    for paragraph in _PARAGRAPHS.split(text):
        run: list[tuple[str, int]] = []  # the sentences since the last one longer than a chunk
        for raw in split_sentences(" ".join(paragraph.split()), language):
            sentence = raw.strip()
            if not sentence:
                continue
            cost = count_tokens(sentence)
            if cost > size:  # cut between words, in chunks of its own
                chunks += _packed(run, size) + _pieces(sentence, size)
                run = []
            else:
                run.append((sentence, cost))
        chunks += _packed(run, size)
    return _merged_small(chunks, size)


def _merged_small(chunks: list[str], size: int) -> list[str]:
    """A short paragraph (a heading, a one-line paragraph) joined to its neighbour while the two
    fit: a heading with the paragraph after it, a closing line with the one before. A heading
    alone is no chunk to ask a question about."""
    merged: list[str] = []
    for chunk in chunks:
        small = count_tokens(chunk) < size // 4
        if merged and (small or count_tokens(merged[-1]) < size // 4) and count_tokens(merged[-1]) + count_tokens(chunk) <= size:
            merged[-1] += (" " if merged[-1][-1:] in ".!?:;\"')" else "\n") + chunk
        else:
            merged.append(chunk)
    return merged


def chunk_documents(documents: list[Document], size: int = DEFAULT_CHUNK_TOKENS, language: str = "en") -> list[Chunk]:
    """Every document's chunks, in order; chunk `i` of `guide/setup.md` is `guide/setup.md#i`."""
    return [Chunk(f"{document.name}#{index}", text, document.name) for document in documents for index, text in enumerate(chunk_text(document.text, size, language))]
