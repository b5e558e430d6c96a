"""Which training rows a short continue-run sees: the rows of the sources it is for, plus a replay sample of the rest.

A CPU continue-run (issue 48: no GPU lent) cannot take an epoch of the 100k rows: at about a row a
second on 2 cores it gets a few thousand. Spent on the new families only, it would forget what the
file knows (HotpotQA, VitaminC, news); a seeded sample of the other sources, drawn in proportion to
their sizes, is what keeps that ("replay", as in continual learning). numpy only, so tests need no torch.
"""

from __future__ import annotations

import random

import numpy as np


def continue_rows(source: np.ndarray, sources: list[str], train: np.ndarray, focus: list[str], replay: float, seed: int) -> np.ndarray:
    """The train rows (indices into `source`) of the `focus` sources, plus `replay` rows of the
    other sources per focus row, drawn without replacement with one seeded shuffle: sorted.

    An unknown focus name is an error (a typo would otherwise train on replay alone)."""
    unknown = sorted(set(focus) - set(sources))
    if unknown:
        raise ValueError(f"unknown source(s) {', '.join(unknown)}; the packed rows have {', '.join(sources)}")
    if replay < 0:
        raise ValueError(f"replay must be 0 or more, not {replay}")
    wanted = np.isin(source[train], [sources.index(name) for name in focus])
    kept, others = train[wanted], list(train[~wanted])
    random.Random(seed).shuffle(others)
    drawn = others[: min(len(others), round(replay * len(kept)))]
    return np.sort(np.concatenate([kept, np.array(drawn, dtype=kept.dtype)]))
