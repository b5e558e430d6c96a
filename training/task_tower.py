"""Give one task of a verifier file its own tower, taken from another run: the other task stays exactly as it was.

Every run that raised the relevance decision lowered the statement one (issue 48: one encoder
serves both tasks). This writes a copy of the `--shared` file (the shipped one by default) in
which `--task` reads the layers and head of `--tower` (a run continued from the same base, e.g.
a relevance-focused device run), stored as int8 differences (localeval/verifier/towers.py), over
the shared file's embeddings. The other task's weights and calibration are the shared file's
byte for byte; `--task`'s calibration is the tower file's, which is stale for the new embeddings:
run `recalibrate.py --task` and `tune_cut.py --relevance-only` on the output next.

    python training/task_tower.py --tower training/.cache/gpu2/r2/candidate/verifier.safetensors \
        --out training/.cache/tower/verifier.safetensors
"""

from __future__ import annotations

import argparse
import hashlib
import json
from pathlib import Path

import numpy as np
from average_weights import differing_metadata

from localeval.verifier.pairs import TASKS
from localeval.verifier.tensors import read_tensors, write_tensors
from localeval.verifier.towers import PREFIX, SCALE, TOWER_PARTS, expand, quantize, tower_name

ROOT = Path(__file__).resolve().parents[1]
SHIPPED = ROOT / "localeval" / "verifier" / "verifier.safetensors"


def with_tower(shared: bytes, tower: bytes, task: str) -> tuple[bytes, float]:
    """The shared file with `task`'s tower from `tower`, and the largest weight error the int8 storage makes."""
    if task not in TASKS:
        raise ValueError(f"--task {task!r} is not one of {', '.join(TASKS)}")
    shared_tensors, shared_meta = read_tensors(shared)
    tower_tensors, tower_meta = read_tensors(tower)
    if key := differing_metadata(shared_meta, tower_meta):
        raise ValueError(f"metadata {key!r} differs between the two files")
    own_prefix = f"{PREFIX}{task}."
    tensors = {name: value for name, value in shared_tensors.items() if not name.startswith(own_prefix)}
    for name, value in tower_tensors.items():
        if not name.startswith(TOWER_PARTS):
            continue
        base = shared_tensors.get(name)
        if base is None or base.shape != value.shape:
            raise ValueError(f"tensor {name!r} is missing from the shared file or has another shape")
        if not np.array_equal(base, value):
            steps, scale = quantize(base, value)
            tensors[tower_name(task, name)], tensors[tower_name(task, name) + SCALE] = steps, scale
    expanded = expand(tensors)
    error = max((float(np.abs(expanded[tower_name(task, n)] - tower_tensors[n].astype(np.float32)).max()) for n in tower_tensors if tower_name(task, n) in expanded), default=0.0)
    calibration = json.loads(shared_meta["calibration"])
    calibration[task] = json.loads(tower_meta["calibration"])[task]
    training = json.loads(shared_meta.get("training", "{}"))
    training.setdefault("towers", {})[task] = {"from": hashlib.sha256(tower).hexdigest(), "stored": "int8 difference from the shared tensor, one float32 scale per row", "largest_weight_error": round(error, 8)}
    return write_tensors(tensors, {**shared_meta, "calibration": json.dumps(calibration), "training": json.dumps(training)}), error


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--shared", type=Path, default=SHIPPED, help="the file whose embeddings, other task and metadata are kept")
    parser.add_argument("--tower", type=Path, required=True, help="the run whose layers and head become the task's tower")
    parser.add_argument("--task", default="relevance", choices=TASKS)
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args()
    if args.out.resolve() == SHIPPED.resolve():
        raise SystemExit(f"{args.out} is the shipped verifier: write elsewhere, compare, then ship deliberately")
    try:
        data, error = with_tower(args.shared.read_bytes(), args.tower.read_bytes(), args.task)
    except (OSError, ValueError) as exc:
        raise SystemExit(f"cannot build a {args.task} tower from {args.tower}: {exc}") from None
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_bytes(data)
    print(f"{args.out}: {len(data)} bytes, {args.task} tower from {args.tower} (largest weight error {error:.2e}), SHA-256 {hashlib.sha256(data).hexdigest()}")


if __name__ == "__main__":
    main()
