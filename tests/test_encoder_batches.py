"""localeval.verifier.batches: inputs forwarded in length-sorted batches over several threads give
the same rows, in input order, as one thread; and the thread count follows the BLAS pin."""

from __future__ import annotations

import numpy as np
import pytest

from localeval.models import embedding
from localeval.verifier import batches, load_verifier
from localeval.verifier.batches import forward_sorted, worker_count


@pytest.fixture
def blas_pinned(monkeypatch):
    """The environment the localeval command runs in (localeval.entry pins BLAS to one thread)."""
    for name in batches.BLAS_THREAD_SETTINGS:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("OPENBLAS_NUM_THREADS", "1")
    monkeypatch.setattr(batches.os, "sched_getaffinity", lambda pid: {0, 1, 2, 3}, raising=False)
    return monkeypatch


def test_threads_follow_the_cores_only_where_blas_runs_one_thread(blas_pinned):
    assert worker_count() == 4
    blas_pinned.setenv("OMP_NUM_THREADS", "2")  # Ray sets it to an actor's CPUs
    assert worker_count() == 2
    blas_pinned.setenv("OPENBLAS_NUM_THREADS", "4")  # BLAS spreads each product itself
    assert worker_count() == 1
    blas_pinned.delenv("OPENBLAS_NUM_THREADS")
    assert worker_count() == 1


def test_rows_come_back_in_input_order_whatever_the_threads(blas_pinned):
    inputs = [[7] * n for n in (5, 1, 9, 3, 3, 8, 2, 6, 4, 1)]
    seen: list[list[int]] = []

    def forward(batch):
        seen.append([len(ids) for ids in batch])
        return [len(ids) * 10 for ids in batch]

    assert forward_sorted(inputs, 3, forward) == [len(ids) * 10 for ids in inputs]
    assert sorted(seen) == [[1, 1, 2], [3, 3, 4], [5, 6, 8], [9]]  # batches cut from the sorted inputs


def test_embeddings_and_verifier_logits_do_not_depend_on_the_thread_count(blas_pinned, embedding_model):
    texts = [f"Museum {i} opened in {1900 + i} and has {'many ' * (i % 7)}rooms." for i in range(150)]
    pairs = [("When did it open?", f"It opened in {1900 + i}.", f"Museum {i} opened in {1900 + i}. {'It is old. ' * (i % 5)}") for i in range(70)]
    threaded = embedding.load_embedder().embed(texts), load_verifier().logits("attribution", pairs)
    blas_pinned.setenv("OMP_NUM_THREADS", "1")
    assert worker_count() == 1
    single = embedding.load_embedder().embed(texts), load_verifier().logits("attribution", pairs)
    assert np.array_equal(threaded[0], single[0]) and threaded[1] == single[1]


def test_where_no_thread_can_start_one_thread_forwards_every_batch(blas_pinned):
    """Under a process or memory limit the pool cannot start its threads: the batches are then
    forwarded here, the same rows, not an internal error."""

    class NoThreads:
        def __init__(self, *args, **kwargs):
            pass

        def __enter__(self):
            raise RuntimeError("can't start new thread")

        def __exit__(self, *exc):
            return False

    blas_pinned.setattr(batches, "ThreadPoolExecutor", NoThreads)
    inputs = [[1] * n for n in (4, 2, 6, 1, 3)]
    assert forward_sorted(inputs, 2, lambda batch: [len(ids) for ids in batch]) == [4, 2, 6, 1, 3]
