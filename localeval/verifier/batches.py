"""The encoder's inputs in length-sorted batches, forwarded on every core the process may use.

The verifier and the embedding model both cut their inputs this way: sorted by length (so a
batch's padding stays small), then every `size` inputs. Which inputs share a batch depends on the
inputs alone, never on the number of threads, so a machine with more cores computes the same
numbers.

Why threads of our own: the localeval command pins numpy's BLAS to one thread (localeval.entry
says why: OpenBLAS's own threads spin, and a busy machine runs ten times slower), so a forward
pass runs on one core. Batches are independent and numpy releases the GIL in its matrix products
and ufuncs, so plain threads, each forwarding whole batches, use the other cores without BLAS's
spinning, and the element-wise steps (GELU, softmax, layer norm) run in parallel too, which BLAS's
threads never do. Where BLAS is not pinned to one thread (the Python API in a program that left
it alone), BLAS already spreads each product over the cores and one thread forwards the batches.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from localeval.cores import usable_cores

MAX_WORKERS = 8
BLAS_THREAD_SETTINGS = ("OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "OMP_NUM_THREADS")


def _setting(name: str) -> int | None:
    try:
        value = int(os.environ.get(name, ""))
    except ValueError:
        return None
    return value if value > 0 else None


def worker_count() -> int:
    """Threads to forward batches on: the cores this process may run on (its CPU affinity, which
    containers and `taskset` set, and its container's CPU quota: localeval.cores), at most
    MAX_WORKERS, and one where BLAS is not pinned to a single thread. OMP_NUM_THREADS, which Ray sets to an actor's CPUs and users set to bound a process,
    caps it."""
    blas = [_setting(name) for name in BLAS_THREAD_SETTINGS[:2]]
    if not any(value == 1 for value in blas):
        return 1
    cores = usable_cores()
    cap = _setting("OMP_NUM_THREADS") or MAX_WORKERS
    return max(1, min(cores, cap, MAX_WORKERS))


def forward_sorted(inputs: Sequence[Sequence[int]], size: int, forward: Callable[[list[Sequence[int]]], Iterable[Any]]) -> list[Any]:
    """`forward`'s row for each input, in input order: the inputs sorted by (length, position), cut
    every `size`, each batch forwarded once, the batches spread over worker_count() threads."""
    return forward_groups([inputs], size, forward)[0]


def forward_groups(groups: Sequence[Sequence[Sequence[int]]], size: int, forward: Callable[[list[Sequence[int]]], Iterable[Any]]) -> list[list[Any]]:
    """forward_sorted for each group on its own (no batch mixes two groups), the batches of every
    group spread over the threads together.

    Why groups: BLAS's sums for one row of a matrix product depend on the rows beside it (how many,
    and where the row falls), so an input's numbers depend, in their last bits, on its batch. A
    metric whose inputs come in the runner's batches (sized by time, so not the same from run to
    run) forwards each sample's inputs as a group of their own: a sample's scores then depend on
    that sample alone, on every run."""
    tasks: list[tuple[int, list[int]]] = []
    for number, inputs in enumerate(groups):
        order = sorted(range(len(inputs)), key=lambda i: (len(inputs[i]), i))
        tasks += [(number, order[start : start + size]) for start in range(0, len(order), size)]

    def run(task: tuple[int, list[int]]) -> Iterable[Any]:
        number, batch = task
        return forward([groups[number][i] for i in batch])

    workers = min(worker_count(), len(tasks))
    outputs: list[Iterable[Any]] | None = None
    if workers > 1:
        try:
            with ThreadPoolExecutor(max_workers=workers, thread_name_prefix="localeval-encoder") as pool:
                outputs = list(pool.map(run, tasks))
        except RuntimeError as error:  # no thread could start (a process or memory limit): one thread does it all
            if "can't start new thread" not in str(error):
                raise
    if outputs is None:
        outputs = [run(task) for task in tasks]
    rows: list[list[Any]] = [[None] * len(inputs) for inputs in groups]
    for (number, batch), output in zip(tasks, outputs):
        for i, row in zip(batch, output):
            rows[number][i] = row
    return rows
