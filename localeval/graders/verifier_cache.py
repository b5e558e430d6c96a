"""The verifier's answers in the verdict cache: a re-run asks the verifier only about text it has
not read, as it asks the judge.

Why: a verifier run cost the same on every pull request (113 s, then 103 s, on 16 questions), where
most samples had not changed. Its answers go in the judge's file (localeval.judge.verdict_store:
one file to keep in CI, one `cache clear`), under keys of their own.

An entry is one call of `Verifier.logits`: its key is the SHA-256 of the verifier file's SHA-256
(another verifier is another key), the task, the task's input room and every pair's texts; its
value is the logits the call gave, written so they read back bit for bit. Per call, not per pair:
the numpy runtime batches a call's pairs by length, so a pair's logit could move in its last bits
with the pairs beside it; a call answered from the cache is the call as it was made, and a cached
run writes what an uncached run writes.

The file is opened on the first answer asked (a run of the string metrics makes none) and closed
when the run ends. Whatever goes wrong with it, the store says once and the run goes on uncached.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from localeval.judge.cache import digest
from localeval.judge.verdict_store import VerdictStore
from localeval.verifier import Verifier

KEY_VERSION = 1  # in every key: a change of what a key means makes every old entry a miss


@dataclass
class _Kept:
    """The cache of the run in progress: its file, opened on the first answer, and its tally."""

    path: Path
    store: VerdictStore | None = None
    hits: int = 0
    misses: int = 0


_kept: _Kept | None = None
_lock = threading.Lock()


@contextmanager
def verifier_answers_kept(path: Path | None) -> Iterator[_Kept | None]:
    """Within: the verifier's answers are read from and kept in the verdict cache at `path` (None:
    neither). Yields the tally (None without a cache); the file is closed on the way out."""
    global _kept
    with _lock:
        outer, _kept = _kept, _Kept(path) if path is not None else None
        kept = _kept
    try:
        yield kept
    finally:
        with _lock:
            _kept = outer
        if kept is not None and kept.store is not None:
            kept.store.close()


def _store() -> tuple[_Kept, VerdictStore] | None:
    with _lock:
        kept = _kept
        if kept is None:
            return None
        if kept.store is None:
            kept.store = VerdictStore(kept.path)
        return kept, kept.store


def cached_logits(verifier: Verifier, task: str, pairs: Sequence[tuple[str, str, str]], encode: Callable[[str], list[int]] | None = None) -> list[float]:
    """`verifier.logits(task, pairs, encode)`, from the verdict cache when this call was made before."""
    found = _store()
    if found is None or not pairs:
        return verifier.logits(task, pairs, encode)
    kept, store = found
    key = digest("verifier", KEY_VERSION, verifier.sha256, task, verifier.max_tokens[task], [list(pair) for pair in pairs])
    text = store.get(key)
    if text is not None:
        try:
            values = json.loads(text)
        except ValueError:
            values = None
        if isinstance(values, list) and len(values) == len(pairs) and all(isinstance(v, float) for v in values):
            with _lock:
                kept.hits += 1
            return values
    logits = verifier.logits(task, pairs, encode)
    store.put(key, json.dumps([float(value) for value in logits]))
    with _lock:
        kept.misses += 1
    return logits
