"""Which training rows a short continue-run sees: the rows of the sources it is for, plus a replay sample of the rest.

A CPU continue-run (issue 48: no GPU lent) cannot take an epoch of the 100k rows: at about a row a
second on 2 cores it gets a few thousand. Spent on the new families only, it would forget what the
file knows (HotpotQA, VitaminC, news); a seeded sample of the other sources, drawn in proportion to
their sizes, is what keeps that ("replay", as in continual learning). numpy only, so tests need no torch.
"""

from __future__ import annotations

import hashlib
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


def selection_id(rows_sha256: str, train: np.ndarray, focus: list[str]) -> str:
    """What a checkpoint is tied to: the packed rows and, for a continue-run, the exact rows chosen.

    Resuming a run with another --focus or --replay would mix two plans in one schedule, so the
    chosen indices are part of the id; a run on all train rows keeps the rows' SHA-256 alone (the
    id checkpoints had before continue-runs existed)."""
    if not focus:
        return rows_sha256
    return f"{rows_sha256}+{hashlib.sha256(np.ascontiguousarray(train, dtype=np.int64).tobytes()).hexdigest()[:16]}"
