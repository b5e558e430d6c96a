"""A ranking read against its relevance judgements, and the seven rank figures trec_eval computes from it.

Kept apart from the metric classes so that the figures are plain functions over precomputed
hits (no pydantic, no per-id allocation beyond one pass over the ranking): scoring 20,000 rankings
of 100 ids with all seven metrics is dominated by reading the input, not by these loops.

The conventions are trec_eval's (docs/metrics.md, "Rank metrics"), checked against pytrec_eval in
tests/test_rank_parity.py:
- ids compare as strings (7 and "7" are one id), as the ID metrics compare them;
- an id is relevant when its grade is above 0 (trec_eval reads integer relevance and counts
  1 and up: the same ids); a reference id without grades has grade 1;
- an id retrieved twice counts once, at its first rank; the later copies are dropped and the
  ids after them move up (a run file's dictionary in pytrec_eval or ranx holds each id once);
- nDCG's gain is the grade, discounted by log2(rank + 1); the ideal ranking is every relevant
  id, highest grade first, cut at k like the ranking;
- precision@k divides by k, even when fewer than k were retrieved; R-precision by the number of
  relevant ids; average precision (with or without a cut-off) by the number of relevant ids,
  retrieved or not;
- no relevant id leaves every figure undefined (NaN): trec_eval has no such query to average.
"""

from __future__ import annotations

import math
from bisect import bisect_left
from collections.abc import Sequence
from dataclasses import dataclass
from typing import cast

from localeval.data.samples import ContextId

NO_RELEVANT = "no relevant id: reference_context_ids is empty or every grade is 0, so the ranking has nothing to find (undefined, as trec_eval leaves such a query out)"


@dataclass(frozen=True)
class Judged:
    """One ranking against its judgements: `hits` are (rank, id) of the relevant ids retrieved,
    in rank order (ranks 1-based, after dropping repeats); `grades` every relevant id's grade;
    `missing` the relevant ids never retrieved (the reference's order); `retrieved` how many
    distinct ids were ranked; `duplicates` the ids ranked more than once."""

    hits: tuple[tuple[int, str], ...]
    grades: dict[str, float]
    missing: tuple[str, ...]
    retrieved: int
    duplicates: tuple[str, ...]

    @property
    def relevant(self) -> int:
        return len(self.grades)

    def within(self, k: int | None) -> int:
        """How many relevant ids were retrieved at rank k or better (all of them for None)."""
        if k is None:
            return len(self.hits)
        return bisect_left(self.hits, (k + 1,))  # (k + 1,) sorts after every (rank <= k, id) and before (k + 1, id)


def relevance(reference: Sequence[ContextId], grades: Sequence[float] | None) -> dict[str, float]:
    """The relevant ids (grade above 0) as strings with their grades, in the reference's order; an
    id listed twice keeps its first grade."""
    if grades is None:
        return dict.fromkeys(map(str, reference), 1.0)
    found: dict[str, float] = {}
    for doc, grade in zip(map(str, reference), grades):
        found.setdefault(doc, float(grade))
    return {doc: grade for doc, grade in found.items() if grade > 0}


def _repeated(ids: Sequence[str]) -> tuple[str, ...]:
    """The ids listed more than once, in the order of their second listing."""
    seen: set[str] = set()
    repeated: dict[str, None] = {}
    for doc in ids:
        if doc in seen:
            repeated[doc] = None
        seen.add(doc)
    return tuple(repeated)


def judge_ranking(retrieved: Sequence[ContextId], reference: Sequence[ContextId], grades: Sequence[float] | None = None) -> Judged:
    """Read a ranking (best first) against its relevant ids: the one pass every rank figure shares.
    The ranking's positions are a table built in C (dict, zip), looked up from the relevant ids'
    side (a handful), not walked id by id in Python; it is built a second time, without the
    repeats, only when an id is ranked twice."""
    relevant = relevance(reference, grades)
    as_strings = cast(Sequence[str], retrieved) if set(map(type, retrieved)) <= {str} else list(map(str, retrieved))
    position = dict(zip(as_strings, range(1, len(as_strings) + 1)))
    duplicates: tuple[str, ...] = ()
    if len(position) != len(as_strings):  # each id at its first rank, the ids after a repeat moved up
        position = dict(zip(dict.fromkeys(as_strings), range(1, len(position) + 1)))
        duplicates = _repeated(as_strings)
    hits = sorted([(position[doc], doc) for doc in relevant if doc in position])
    return Judged(tuple(hits), relevant, tuple([doc for doc in relevant if doc not in position]), len(position), duplicates)


def _discount(rank: int) -> float:
    return math.log2(rank + 1)


def dcg(judged: Judged, k: int) -> float:
    """Discounted cumulative gain of the first k ranks: grade / log2(rank + 1), summed."""
    return sum(judged.grades[doc] / _discount(rank) for rank, doc in judged.hits if rank <= k)


def ideal_dcg(judged: Judged, k: int) -> float:
    """The DCG of the best ranking there is: every relevant id, highest grade first, cut at k."""
    best = sorted(judged.grades.values(), reverse=True)[:k]
    return sum(grade / _discount(rank) for rank, grade in enumerate(best, start=1))


def reciprocal_rank(judged: Judged, cutoff: int | None = None) -> float:
    """1 / the rank of the first relevant id (within the cut-off), 0 when none was retrieved there."""
    if not judged.hits or (cutoff is not None and judged.hits[0][0] > cutoff):
        return 0.0
    return 1.0 / judged.hits[0][0]


def average_precision(judged: Judged, cutoff: int | None = None) -> float:
    """Precision at each relevant id's rank (within the cut-off), summed, over every relevant id."""
    total = 0.0
    for found, (rank, _) in enumerate(judged.hits, start=1):
        if cutoff is not None and rank > cutoff:
            break
        total += found / rank
    return total / judged.relevant


def precision_at(judged: Judged, k: int) -> float:
    return judged.within(k) / k


def recall_at(judged: Judged, k: int) -> float:
    return judged.within(k) / judged.relevant


def hit_at(judged: Judged, k: int) -> float:
    return 1.0 if judged.hits and judged.hits[0][0] <= k else 0.0


def r_precision(judged: Judged) -> float:
    """Precision at rank R, R the number of relevant ids."""
    return judged.within(judged.relevant) / judged.relevant
