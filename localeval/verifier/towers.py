"""A task's own tower: encoder layers and head that one task reads instead of the shared ones.

One encoder served both tasks until 2026-11-27, and every run that raised the relevance
decision lowered the statement one (issue 48). A verifier file may therefore give a task its
own layers and head, over the shared embeddings: the other task's weights, and so its verdicts,
stay exactly as they were.

A tower is stored as its difference from the shared weights, in int8 with one float32 scale
per output row (`towers.TASK.NAME` and `towers.TASK.NAME.scale` for the shared tensor `NAME`):
a fine-tuned copy differs from its parent by about 1% of each weight, so the difference
quantizes with an error far below float16's on the weights themselves, and the tower costs half
of a second float16 copy (10.9 MB for six layers and a head). `expand` turns it back into float32 weights when the file is
loaded; `quantize` writes it (training/task_tower.py). Because a tower is a difference, a tool that
changes the shared weights must drop the towers or rebuild them, never carry them over: training/
train_device.py drops them, average_weights.py refuses a file that has them, task_tower.py rebuilds.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

PREFIX = "towers."
SCALE = ".scale"
TOWER_PARTS = ("layers.", "head.")  # what a tower may replace: never the shared embeddings


def tower_name(task: str, name: str) -> str:
    return f"{PREFIX}{task}.{name}"


def quantize(shared: np.ndarray, own: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The int8 difference of `own` from `shared` and its per-row float32 scale."""
    delta = own.astype(np.float32) - shared.astype(np.float32)
    rows = delta.reshape(delta.shape[0], -1) if delta.ndim > 1 else delta.reshape(1, -1)
    scale = np.abs(rows).max(axis=1, keepdims=True) / 127.0
    scale[scale == 0] = 1.0
    steps = np.clip(np.rint(rows / scale), -127, 127).astype(np.int8)
    return steps.reshape(delta.shape), scale.astype(np.float32)


def expand(tensors: Mapping[str, np.ndarray]) -> dict[str, np.ndarray]:
    """The file's tensors with every tower tensor as float32 weights (shared + steps * scale).

    Raises ValueError for a tower tensor without its shared tensor or scale, of another shape,
    with a scale that is not finite, or outside the layers and head: the file is input, and a
    malformed one is refused."""
    out = {name: value for name, value in tensors.items() if not name.startswith(PREFIX)}
    for name, steps in tensors.items():
        if not name.startswith(PREFIX) or name.endswith(SCALE):
            continue
        task, _, shared_name = name[len(PREFIX) :].partition(".")
        scale = tensors.get(name + SCALE)
        shared = tensors.get(shared_name)
        if not shared_name.startswith(TOWER_PARTS) or shared is None or scale is None:
            raise ValueError(f"tower tensor {name!r} has no shared tensor or scale it can replace")
        rows = shared.shape[0] if shared.ndim > 1 else 1
        if steps.dtype != np.int8 or steps.shape != shared.shape or scale.shape != (rows, 1):
            raise ValueError(f"tower tensor {name!r}: dtype or shape does not match {shared_name!r}")
        if not np.isfinite(scale).all():
            raise ValueError(f"tower tensor {name!r}: a scale that is not a finite number")
        flat = steps.reshape(rows, -1).astype(np.float32) * scale.astype(np.float32)
        out[tower_name(task, shared_name)] = shared.astype(np.float32) + flat.reshape(shared.shape)
    return out
