"""Which chunks the judge writes from, in which order: the same order for the same seed.

Candidates come in a fixed stream. Single-context candidates visit the documents in proportion
to their length (stride scheduling on token counts), after one chunk of every document first when
the run asks for at least as many rows as there are documents, so every document is used when N
allows; each document's chunks are taken in an order shuffled by the seed. Two-context
candidates pair chunks that name the same entity (a capitalised name both hold, SHARED_ENTITY),
each chunk in at most one pair, and take every `1 / two_context_share`-th place of the stream.
"""

from __future__ import annotations

import random
import re
from collections import defaultdict
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

from localeval.generation.chunking import count_tokens
from localeval.generation.documents import Chunk

SINGLE, TWO = "single_context", "two_context"
DEFAULT_TWO_CONTEXT_SHARE = 0.25
# A name: capitalised words in a row ("Marie Curie", "Warsaw"), not the first word of a sentence.
SHARED_ENTITY = re.compile(r"(?<![.!?]\s)(?<!^)\b([A-Z][a-zA-Z0-9'-]{2,}(?:\s+[A-Z][a-zA-Z0-9'-]+)*)")
NOT_NAMES = frozenset(
    {"The", "This", "That", "These", "Those", "There", "Their", "They", "When", "What", "Which", "Where", "While", "With", "For", "From",
     "And", "But", "However", "Also", "After", "Before", "During", "Its", "His", "Her", "Our", "You", "Your", "In", "On", "At", "As", "An",
     "It", "He", "She", "We", "If", "To", "Of", "By", "Figure", "Table", "Section", "Chapter", "Note", "See", "All", "Each", "Some",
     # dates name no entity: two paragraphs that both hold "September" share nothing to ask about
     "January", "February", "March", "April", "May", "June", "July", "August", "September", "October", "November", "December",
     "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"}
)
# A single word ending so is a nationality or a language ("Canadian", "English", "Japanese"), not an entity two chunks share.
ADJECTIVE_ENDINGS = ("an", "ish", "ese", "ic", "ian")


@dataclass(frozen=True)
class Candidate:
    """One thing to ask the judge for: its kind, its chunks, and the entity a pair shares."""

    kind: str
    chunks: tuple[Chunk, ...]
    entity: str | None = None

    @property
    def key(self) -> str:
        """Its identity in the output (metadata.candidate): what a resume skips."""
        return f"{self.kind}:" + "|".join(chunk.id for chunk in self.chunks)


def entities(text: str) -> set[str]:
    """The names a text holds (SHARED_ENTITY), without common words that open a phrase."""
    found = set()
    for match in SHARED_ENTITY.finditer(text):
        words = match.group(1).split()
        while words and words[0] in NOT_NAMES:
            words = words[1:]
        if len(words) == 1 and words[0].endswith(ADJECTIVE_ENDINGS):
            continue
        if words:
            found.add(" ".join(words))
    return found


def single_order(chunks: Sequence[Chunk], wanted: int, seed: int) -> list[Chunk]:
    """Every chunk once, ordered so that any prefix spreads over the documents by their length."""
    rng = random.Random(seed)
    by_document: dict[str, list[Chunk]] = defaultdict(list)
    for chunk in chunks:
        by_document[chunk.document].append(chunk)
    names = sorted(by_document)
    for name in names:
        rng.shuffle(by_document[name])
    weight = {name: max(1, sum(count_tokens(c.text) for c in by_document[name])) for name in names}
    order: list[Chunk] = []
    taken = dict.fromkeys(names, 0)
    if wanted >= len(names):  # every document once first, the longest first
        for name in sorted(names, key=lambda n: (-weight[n], n)):
            order.append(by_document[name][0])
            taken[name] = 1
    while len(order) < len(chunks):
        open_ = [n for n in names if taken[n] < len(by_document[n])]
        name = min(open_, key=lambda n: ((taken[n] + 1) / weight[n], n))
        order.append(by_document[name][taken[name]])
        taken[name] += 1
    return order


def pairs(chunks: Sequence[Chunk], seed: int) -> list[tuple[Chunk, Chunk, str]]:
    """Pairs of chunks that share a name, each chunk in one pair at most; chunks of two documents
    preferred, rarer names first (a name in many chunks says little about what two share)."""
    named = [entities(chunk.text) for chunk in chunks]
    holders: dict[str, list[int]] = defaultdict(list)
    for index, found in enumerate(named):
        for name in found:
            holders[name].append(index)
    options = []
    for name, indices in holders.items():
        if len(indices) < 2 or len(indices) > max(4, len(chunks) // 4):
            continue
        for a_at, a in enumerate(indices):
            for b in indices[a_at + 1 :]:
                same_document = chunks[a].document == chunks[b].document
                options.append((same_document, len(indices), name, a, b))
    rng = random.Random(seed + 1)
    rng.shuffle(options)
    options.sort(key=lambda o: (o[0], o[1]))
    used: set[int] = set()
    chosen = []
    for _, _, name, a, b in options:
        if a not in used and b not in used:
            used.update((a, b))
            chosen.append((chunks[a], chunks[b], name))
    return chosen


def candidates(chunks: Sequence[Chunk], wanted: int, seed: int, two_context_share: float = DEFAULT_TWO_CONTEXT_SHARE) -> Iterator[Candidate]:
    """The candidate stream (see the module docstring): singles and pairs interleaved, until both run out."""
    singles = iter(single_order(chunks, wanted, seed))
    paired = iter(pairs(chunks, seed) if two_context_share > 0 else [])
    every = max(1, round(1 / two_context_share)) if two_context_share > 0 else 0
    position = 0
    while True:
        position += 1
        if every and position % every == 0:
            pair = next(paired, None)
            if pair is not None:
                yield Candidate(TWO, (pair[0], pair[1]), pair[2])
                continue
        single = next(singles, None)
        if single is not None:
            yield Candidate(SINGLE, (single,))
            continue
        pair = next(paired, None)
        if pair is None:
            return
        yield Candidate(TWO, (pair[0], pair[1]), pair[2])
