"""BERT's uncased WordPiece tokenizer, in plain Python.

The verifier is a BERT encoder, and its tokens must be exactly the ones it was trained on.
The training script and the scoring runtime both tokenize with this module, so they agree by
construction, without the `tokenizers` or `transformers` packages at scoring time. It follows
BERT's BasicTokenizer (clean control characters, space out CJK characters, lower-case, strip
accents, split on whitespace and punctuation) and then greedy longest-match WordPiece.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Mapping
from functools import lru_cache

MAX_WORD_CHARS = 100  # a longer word is one [UNK], as in BERT


def _is_punctuation(char: str) -> bool:
    code = ord(char)
    if 33 <= code <= 47 or 58 <= code <= 64 or 91 <= code <= 96 or 123 <= code <= 126:
        return True
    return unicodedata.category(char).startswith("P")


def _is_cjk(code: int) -> bool:
    return (
        0x4E00 <= code <= 0x9FFF or 0x3400 <= code <= 0x4DBF or 0x20000 <= code <= 0x2A6DF or 0x2A700 <= code <= 0x2B73F
        or 0x2B740 <= code <= 0x2B81F or 0x2B820 <= code <= 0x2CEAF or 0xF900 <= code <= 0xFAFF or 0x2F800 <= code <= 0x2FA1F
    )


def _clean(text: str) -> str:
    """Drop control characters and NUL/U+FFFD, turn whitespace into spaces, space out CJK characters."""
    out = []
    for char in text:
        code = ord(char)
        if code == 0 or code == 0xFFFD:
            continue
        if char in "\t\n\r" or unicodedata.category(char) == "Zs":
            out.append(" ")
        elif unicodedata.category(char).startswith("C"):
            continue
        elif _is_cjk(code):
            out.append(f" {char} ")
        else:
            out.append(char)
    return "".join(out)


def _basic_words(text: str) -> list[str]:
    """Lower-cased, accent-stripped words and punctuation marks, each its own word."""
    words: list[str] = []
    for token in _clean(text).split():
        token = "".join(c for c in unicodedata.normalize("NFD", token.lower()) if unicodedata.category(c) != "Mn")
        current = ""
        for char in token:
            if _is_punctuation(char):
                if current:
                    words.append(current)
                    current = ""
                words.append(char)
            else:
                current += char
        if current:
            words.append(current)
    return words


class WordPiece:
    """Text to vocabulary ids, as BERT's uncased tokenizer does it."""

    def __init__(self, vocab: Mapping[str, int]) -> None:
        self.vocab = dict(vocab)
        self.unk = self.vocab["[UNK]"]
        self.cls = self.vocab["[CLS]"]
        self.sep = self.vocab["[SEP]"]
        self.pad = self.vocab["[PAD]"]
        self._word_ids = lru_cache(maxsize=1 << 16)(self._pieces)

    @classmethod
    def from_lines(cls, text: str) -> WordPiece:
        """A vocab.txt file's text: one token per line, its id the line number."""
        return cls({token: index for index, token in enumerate(text.split("\n")) if token})

    def _pieces(self, word: str) -> tuple[int, ...]:
        if len(word) > MAX_WORD_CHARS:
            return (self.unk,)
        ids: list[int] = []
        start = 0
        while start < len(word):
            end = len(word)
            found = None
            while start < end:
                piece = word[start:end] if start == 0 else "##" + word[start:end]
                if piece in self.vocab:
                    found = self.vocab[piece]
                    break
                end -= 1
            if found is None:
                return (self.unk,)
            ids.append(found)
            start = end
        return tuple(ids)

    def encode(self, text: str) -> list[int]:
        """The ids of `text`, without [CLS] or [SEP]."""
        return [i for word in _basic_words(text) for i in self._word_ids(word)]
