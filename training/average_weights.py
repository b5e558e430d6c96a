"""Average two verifier files in weight space: the parent and a run continued from it.

A short continue-run on new rows (issue 48's CPU fallback) raised the statement shapes but
lowered the relevance decision: one encoder serves both tasks, and the new rows pulled it away
from what the parent did well (forgetting). Interpolating the weights of a fine-tuned model
with those of its starting point (Wortsman et al., 2022, "Robust fine-tuning of zero-shot
models", WiSE-FT) often keeps most of the new gain and most of the old skill, at no training
cost. The two files must share their architecture, vocabulary and base; the child must name the
parent as its parent (so the average is along one training path, not between strangers).

The output keeps the child's metadata with the average recorded under `training`; its
calibration is stale by construction, so run `recalibrate.py` and `tune_cut.py` on it next.

    python training/average_weights.py --parent PARENT --child training/.cache/cpu_focus/joined/verifier.safetensors \
        --child-weight 0.5 --out training/.cache/wise/af5/joined/verifier.safetensors

--parent defaults to the shipped file, which since 2026-11-27 holds a relevance tower and is
therefore refused (towers are differences from the shared weights an average would move): average
the files a tower was built from, then training/task_tower.py. A run continued from an earlier shipped file needs that
file, from git history (the CPU runs of 2026-11-26 started from e30ecbd9…:
`git show ee13ec8:localeval/verifier/verifier.safetensors > PARENT`). The child's per-source
`validation` metadata is copied as it is: it describes the child, not the average.
"""

from __future__ import annotations

import argparse
import hashlib
import json
from pathlib import Path

import numpy as np
from candidate_files import SHIPPED, refuse_shipped, write_candidate

from localeval.verifier.tensors import read_tensors, write_tensors
from localeval.verifier.towers import PREFIX as TOWER_PREFIX

MUST_AGREE = ("format", "base", "base_sha256", "heads", "vocab", "max_tokens", "tasks")


def differing_metadata(first: dict[str, str], second: dict[str, str]) -> str | None:
    """The first MUST_AGREE key on which two verifier files' metadata differ: weights of two files
    can be mixed only when both are the same architecture over the same base and vocabulary."""
    return next((key for key in MUST_AGREE if first.get(key) != second.get(key)), None)


class AverageError(ValueError):
    """The two files cannot be averaged (different shapes, vocabulary, or training path)."""


def average(parent: bytes, child: bytes, child_weight: float) -> bytes:
    """The file whose every tensor is (1 - child_weight) * parent + child_weight * child."""
    if not 0.0 <= child_weight <= 1.0:
        raise AverageError(f"--child-weight {child_weight} is outside [0, 1]")
    parent_tensors, parent_meta = read_tensors(parent)
    child_tensors, child_meta = read_tensors(child)
    parent_sha = hashlib.sha256(parent).hexdigest()
    if child_meta.get("parent_sha256") != parent_sha:
        raise AverageError(f"the child names parent {child_meta.get('parent_sha256')!r}, not this file ({parent_sha})")
    if key := differing_metadata(parent_meta, child_meta):
        raise AverageError(f"metadata {key!r} differs between the two files")
    if any(name.startswith(TOWER_PREFIX) for name in [*parent_tensors, *child_tensors]):
        raise AverageError("a file holds a task tower (int8 differences from its shared weights, which an average would move): average the files it was built from, then training/task_tower.py")
    if parent_tensors.keys() != child_tensors.keys():
        raise AverageError("the two files hold different tensor names")
    mixed: dict[str, np.ndarray] = {}
    for name, old in parent_tensors.items():
        new = child_tensors[name]
        if old.shape != new.shape or old.dtype != new.dtype:
            raise AverageError(f"tensor {name!r}: shape or dtype differs")
        value = (1.0 - child_weight) * old.astype(np.float32) + child_weight * new.astype(np.float32)
        mixed[name] = value.astype(old.dtype)
    training = json.loads(child_meta.get("training", "{}"))
    training["averaged"] = {"parent": parent_sha, "child": hashlib.sha256(child).hexdigest(), "child_weight": child_weight}
    return write_tensors(mixed, {**child_meta, "training": json.dumps(training)})


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--parent", type=Path, default=SHIPPED, help="the file the child run started from")
    parser.add_argument("--child", type=Path, required=True, help="the continued run's joined file")
    parser.add_argument("--child-weight", type=float, required=True, help="the child's share, in [0, 1]")
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args()
    refuse_shipped(args.out)
    try:
        data = average(args.parent.read_bytes(), args.child.read_bytes(), args.child_weight)
    except (OSError, AverageError, ValueError) as exc:
        raise SystemExit(f"cannot average {args.parent} and {args.child}: {exc}") from None
    print(f"{args.out}: child weight {args.child_weight}, SHA-256 {write_candidate(args.out, data)}")


if __name__ == "__main__":
    main()
