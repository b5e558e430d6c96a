"""News articles compared by their text: which are the same document, and which QAGS also uses.

FRANK, XSumFaith and SummaC's copies carry the same CNN/DM and BBC articles under different ids
and with different formatting (lower-cased, re-tokenised, cut short), so ids cannot say when two
are one document. Two articles are one document when more than half of the shorter one's
8-word sequences are in the other (lower-cased alphanumeric words). The same test finds the
articles QAGS's human labels use: those documents are evaluation rows and are dropped from every
training source.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable

SHINGLE_WORDS = 8
SAME_DOCUMENT = 0.5  # share of the shorter article's 8-word sequences found in the other


def shingles(text: str) -> frozenset[str]:
    words = re.findall(r"[a-z0-9]+", text.lower())
    return frozenset(" ".join(words[i : i + SHINGLE_WORDS]) for i in range(max(len(words) - SHINGLE_WORDS + 1, 1)))


class ArticleIndex:
    """Articles by their 8-word sequences, to find which stored articles a new one matches."""

    def __init__(self) -> None:
        self.sizes: list[int] = []
        self.by_shingle: dict[str, list[int]] = {}

    def add(self, text: str) -> int:
        number = len(self.sizes)
        grams = shingles(text)
        self.sizes.append(len(grams))
        for gram in grams:
            self.by_shingle.setdefault(gram, []).append(number)
        return number

    def matches(self, text: str) -> list[int]:
        """The stored articles that are the same document as `text`."""
        grams = shingles(text)
        hits: Counter[int] = Counter(n for gram in grams for n in self.by_shingle.get(gram, ()))
        return [n for n, shared in hits.items() if shared > SAME_DOCUMENT * min(len(grams), self.sizes[n])]


class DocumentClusters:
    """Union-find over articles that are the same document: one cluster id per document."""

    def __init__(self) -> None:
        self.index = ArticleIndex()
        self.parent: list[int] = []

    def _root(self, n: int) -> int:
        while self.parent[n] != n:
            self.parent[n] = self.parent[self.parent[n]]
            n = self.parent[n]
        return n

    def add(self, text: str) -> int:
        """The article's number; it joins every earlier article it matches."""
        found = self.index.matches(text)
        number = self.index.add(text)
        self.parent.append(number)
        for other in found:
            a, b = self._root(number), self._root(other)
            if a != b:
                self.parent[max(a, b)] = min(a, b)
        return number

    def cluster(self, number: int) -> int:
        return self._root(number)


def qags_index(articles: Iterable[str]) -> ArticleIndex:
    index = ArticleIndex()
    for article in articles:
        index.add(article)
    return index
