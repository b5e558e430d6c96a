"""What moved in a ranking between two runs, as the rank metrics (ndcg_at_k, reciprocal_rank, ...)
record it: the relevant ids that rose, fell, entered or left, each with its rank in each run.

A retriever or reranker change moves ranks, and nDCG@10 falling by 0.2 says little until it names
the gold id that dropped from rank 1 to rank 7. The details are untrusted (a results file from
anywhere): a run's `ranks` are read only when every rank is an integer, and anything else is
passed over. Changes are returned as (kind, text, fields), which
localeval.comparison.movers wraps as its Change.
"""

from __future__ import annotations

from typing import Any

from localeval.comparison.quoting import quote

MAX_ID = 80  # characters of an id quoted


def _ranked(details: dict[str, Any] | None) -> dict[str, int] | None:
    """The relevant ids found and their ranks, from a rank metric's details; None for another shape."""
    if not isinstance(details, dict):
        return None
    ranks = details.get("ranks")
    if not isinstance(ranks, dict) or not isinstance(details.get("missing"), list):
        return None
    if not all(isinstance(rank, int) and not isinstance(rank, bool) for rank in ranks.values()):
        return None
    return {str(doc): rank for doc, rank in ranks.items()}


def relevant_id_moves(base: dict[str, Any] | None, candidate: dict[str, Any] | None) -> list[tuple[str, str, dict[str, Any]]]:
    """The relevant ids at another rank in each run (the biggest move first), and those retrieved in
    one run only: (kind, text, fields) with the id and both ranks (None: not retrieved)."""
    before, after = _ranked(base), _ranked(candidate)
    if before is None or after is None:
        return []
    moved = [(doc, before.get(doc), after.get(doc)) for doc in dict.fromkeys([*after, *before]) if before.get(doc) != after.get(doc)]
    moved.sort(key=lambda move: -abs((move[1] or 0) - (move[2] or 0)) if move[1] and move[2] else 0)
    changes = []
    for doc, old, new in moved:
        shown = quote(doc, MAX_ID)
        fields = {"relevant_id": doc[:MAX_ID], "base_rank": old, "candidate_rank": new}
        if old is None:
            changes.append(("relevant_id_retrieved", f"relevant id {shown} retrieved at rank {new} in the candidate, not retrieved in the base", fields))
        elif new is None:
            changes.append(("relevant_id_lost", f"relevant id {shown} not retrieved in the candidate, at rank {old} in the base", fields))
        else:
            way = "up" if new < old else "down"
            changes.append(("relevant_id_moved", f"relevant id {shown} moved {way}: rank {old} in the base, rank {new} in the candidate", fields))
    return changes
