"""Give one task of a verifier file its own tower, taken from another run: the other task stays exactly as it was.

Every run that raised the relevance decision lowered the statement one (issue 48: one encoder
serves both tasks). This writes a copy of the `--shared` file (the shipped one by default) in
which `--task` reads the layers and head of `--tower` (a run continued from the same base, e.g.
a relevance-focused device run), stored as int8 differences (localeval/verifier/towers.py), over
the shared file's embeddings. The other task's weights and calibration are the shared file's
byte for byte; `--task`'s calibration is the tower file's, which is stale for the new embeddings:
run `recalibrate.py --task` and `tune_cut.py --relevance-only` on the output next.

`--tower` may also be one epoch's tower that `train_device.py --epoch-towers` wrote (the task's
int8 differences and nothing else, so that a device returns one small file per epoch): it is
put into the `--shared` file it was taken from (its `parent_sha256`) as it is.

`--blend W` takes a weight-space average instead (as average_weights.py does for whole files,
WiSE-FT): the task's tower becomes (1 - W) x the `--shared` file's own tower of the task + W x the
new one, for a run whose gain on one shape cost another.

    python training/task_tower.py --tower training/.cache/gpu2/r2/candidate/verifier.safetensors \
        --out training/.cache/tower/verifier.safetensors
"""

from __future__ import annotations

import argparse
import hashlib
import json
from pathlib import Path
from typing import Any

import numpy as np
from average_weights import MUST_AGREE, differing_metadata
from candidate_files import SHIPPED, refuse_shipped, write_candidate

from localeval.verifier.pairs import TASKS
from localeval.verifier.tensors import read_tensors, write_tensors
from localeval.verifier.towers import PREFIX, SCALE, TOWER_PARTS, expand, quantize, tower_name

STORED = "int8 difference from the shared tensor, one float32 scale per row"


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
    if "tower_of" in tower_meta:
        return _with_epoch_tower(shared, tensors, shared_meta, tower_tensors, tower_meta, task)
    weights = {name: value for name, value in tower_tensors.items() if name.startswith(TOWER_PARTS)}
    for name, value in weights.items():
        if name not in shared_tensors or shared_tensors[name].shape != value.shape:
            raise ValueError(f"tensor {name!r} is missing from the shared file or has another shape")
    error = _store_tower(tensors, task, shared_tensors, weights)
    record = {"from": hashlib.sha256(tower).hexdigest(), "stored": STORED, "largest_weight_error": round(error, 8)}
    return _written(tensors, shared_meta, task, json.loads(tower_meta["calibration"])[task], record), error


def _store_tower(tensors: dict[str, np.ndarray], task: str, shared: dict[str, np.ndarray], weights: dict[str, np.ndarray]) -> float:
    """Put each of `weights` that differs from its shared tensor into `tensors` as `task`'s tower
    (int8 steps and their scale); the largest weight error that storage makes."""
    error = 0.0
    for name, value in weights.items():
        if np.array_equal(shared[name], value):
            continue
        own = tower_name(task, name)
        tensors[own], tensors[own + SCALE] = quantize(shared[name], value)
        restored = expand({name: shared[name], own: tensors[own], own + SCALE: tensors[own + SCALE]})[own]
        error = max(error, float(np.abs(restored - value.astype(np.float32)).max()))
    return error


def _written(tensors: dict[str, np.ndarray], shared_meta: dict[str, str], task: str, task_calibration: dict[str, Any], record: dict[str, Any]) -> bytes:
    """The file: the shared file's metadata with `task`'s calibration and the record of its tower."""
    calibration = json.loads(shared_meta["calibration"])
    calibration[task] = task_calibration
    training = json.loads(shared_meta.get("training", "{}"))
    training.setdefault("towers", {})[task] = record
    return write_tensors(tensors, {**shared_meta, "calibration": json.dumps(calibration), "training": json.dumps(training)})


def epoch_tower(start: bytes, run: bytes, task: str, step: int) -> bytes:
    """`task`'s tower alone, from `run` (a run continued from the file `start`): its int8
    differences from `start`'s shared weights and the run's calibration of the task, about 11 MB
    for six layers and a head, where the whole file is 57 MB. What train_device.py --epoch-towers
    writes at each epoch; `with_tower` puts it back into `start`."""
    spliced, error = with_tower(start, run, task)
    tensors, metadata = read_tensors(spliced)
    run_meta = read_tensors(run)[1]
    own = {name: value for name, value in tensors.items() if name.startswith(f"{PREFIX}{task}.")}
    return write_tensors(own, {**{k: metadata[k] for k in MUST_AGREE if k in metadata}, "tower_of": task, "step": str(step), "parent_sha256": hashlib.sha256(start).hexdigest(),
                               "calibration": run_meta["calibration"], "validation": run_meta.get("validation", "{}"), "largest_weight_error": repr(error)})


def _with_epoch_tower(shared: bytes, tensors: dict[str, np.ndarray], shared_meta: dict[str, str], tower_tensors: dict[str, np.ndarray], tower_meta: dict[str, str],
                      task: str) -> tuple[bytes, float]:
    """The shared file with an epoch tower (`epoch_tower`) as the task's: only into the file it was
    taken from, since its int8 steps are differences from that file's shared weights."""
    if tower_meta["tower_of"] != task:
        raise ValueError(f"a tower for {tower_meta['tower_of']}, not for {task}")
    if tower_meta.get("parent_sha256") != hashlib.sha256(shared).hexdigest():
        raise ValueError(f"the tower is a difference from the file {str(tower_meta.get('parent_sha256'))[:12]}..., not from this --shared file")
    if any(not name.startswith(f"{PREFIX}{task}.") for name in tower_tensors):
        raise ValueError("an epoch tower holds only its task's tower tensors")
    tensors.update(tower_tensors)
    expand(tensors)  # refuses a malformed tower here, not when the file is first used
    error = float(tower_meta["largest_weight_error"])
    record = {"from": f"step {tower_meta['step']} of a run from {tower_meta['parent_sha256']} (train_device.py --epoch-towers)", "stored": STORED,
              "largest_weight_error": round(error, 8)}
    return _written(tensors, shared_meta, task, json.loads(tower_meta["calibration"])[task], record), error


def blend_towers(before: bytes, after: bytes, task: str, weight: float) -> tuple[bytes, float]:
    """`after` (from `with_tower`) with `task`'s tower replaced by (1 - weight) x `before`'s tower of
    the task (its shared weights where it has none) + weight x `after`'s, and the largest weight
    error of its int8 storage. Both files must hold the same shared weights."""
    if not 0.0 <= weight <= 1.0:
        raise ValueError(f"--blend {weight}: a weight between 0 and 1")
    before_tensors = read_tensors(before)[0]
    after_tensors, metadata = read_tensors(after)
    shared = {name: value for name, value in after_tensors.items() if not name.startswith(PREFIX)}
    if shared.keys() != {n for n in before_tensors if not n.startswith(PREFIX)} or any(not np.array_equal(before_tensors[n], v) for n, v in shared.items()):
        raise ValueError("the two files do not hold the same shared weights")
    old, new = expand(before_tensors), expand(after_tensors)
    tensors = {name: value for name, value in after_tensors.items() if not name.startswith(f"{PREFIX}{task}.")}
    mixed = {name: (1 - weight) * old.get(tower_name(task, name), shared[name].astype(np.float32)) + weight * new.get(tower_name(task, name), shared[name].astype(np.float32))
             for name in shared if name.startswith(TOWER_PARTS)}
    error = _store_tower(tensors, task, shared, mixed)
    training = json.loads(metadata.get("training", "{}"))
    training.setdefault("towers", {}).setdefault(task, {})["blend"] = f"{1 - weight:g} x the tower of {hashlib.sha256(before).hexdigest()} + {weight:g} x this one"
    return write_tensors(tensors, {**metadata, "training": json.dumps(training)}), error


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--shared", type=Path, default=SHIPPED, help="the file whose embeddings, other task and metadata are kept")
    parser.add_argument("--tower", type=Path, required=True, help="the run whose layers and head become the task's tower")
    parser.add_argument("--task", default="relevance", choices=TASKS)
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--blend", type=float, default=1.0, help="the new tower's weight in an average with the --shared file's own tower of the task (default 1: the new tower alone)")
    args = parser.parse_args()
    refuse_shipped(args.out)
    try:
        shared = args.shared.read_bytes()
        data, error = with_tower(shared, args.tower.read_bytes(), args.task)
        if args.blend != 1.0:
            data, error = blend_towers(shared, data, args.task, args.blend)
    except (OSError, ValueError) as exc:
        raise SystemExit(f"cannot build a {args.task} tower from {args.tower}: {exc}") from None
    print(f"{args.out}: {len(data)} bytes, {args.task} tower from {args.tower} (largest weight error {error:.2e}), SHA-256 {write_candidate(args.out, data)}")


if __name__ == "__main__":
    main()
