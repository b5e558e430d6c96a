"""Splice a continued run's top encoder layers and head onto its parent's bottom layers.

The relevance-focused GPU run of 2026-11-27 (issue 48, Rule 7) raised the relevance decision on
validation and lowered the statement one: one encoder serves both tasks. A verifier whose
relevance task reads its own top layers would keep the parent's statements exactly. Before
building that, this asks whether the top layers carry the gain: the output is an ordinary
verifier file (the parent's embeddings and bottom layers, the child's top `--top` layers and
head), measured for relevance with tune_cut.py, decision_rows.py and choose_decision.py like
any candidate. Its attribution column is the child's and means nothing here.

    python lab/splice_top_layers.py --child training/.cache/gpu2/r2/candidate/verifier.safetensors \
        --top 2 --out training/.cache/split_top/k2/verifier.safetensors
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
from pathlib import Path

import numpy as np

from localeval.verifier.tensors import read_tensors, write_tensors

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "training"))  # the training scripts' libraries: no package holds them
from candidate_files import SHIPPED, refuse_shipped, write_candidate  # noqa: E402


def layer_count(tensors: dict[str, np.ndarray]) -> int:
    """How many encoder layers the file holds."""
    return len({name.split(".")[1] for name in tensors if name.startswith("layers.")})


def splice(parent: bytes, child: bytes, top: int) -> bytes:
    """The parent's tensors with the child's last `top` layers and head in their place."""
    parent_tensors, _ = read_tensors(parent)
    child_tensors, child_meta = read_tensors(child)
    if parent_tensors.keys() != child_tensors.keys():
        raise ValueError("the two files hold different tensor names")
    layers = layer_count(parent_tensors)
    if not 0 <= top <= layers:
        raise ValueError(f"--top {top} is outside [0, {layers}]")
    first_taken = layers - top

    def from_child(name: str) -> bool:
        return name.startswith("head.") or (name.startswith("layers.") and int(name.split(".")[1]) >= first_taken)

    tensors = {name: (child_tensors if from_child(name) else parent_tensors)[name] for name in parent_tensors}
    training = json.loads(child_meta.get("training", "{}"))
    training["spliced"] = {"parent": hashlib.sha256(parent).hexdigest(), "child": hashlib.sha256(child).hexdigest(), "top_layers": top}
    return write_tensors(tensors, {**child_meta, "training": json.dumps(training)})


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--parent", type=Path, default=SHIPPED, help="the file whose embeddings and bottom layers are kept")
    parser.add_argument("--child", type=Path, required=True, help="the continued run whose top layers and head are taken")
    parser.add_argument("--top", type=int, required=True, help="how many of the child's top layers to take")
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args()
    refuse_shipped(args.out)
    try:
        data = splice(args.parent.read_bytes(), args.child.read_bytes(), args.top)
    except (OSError, ValueError) as exc:
        raise SystemExit(f"cannot splice {args.child} onto {args.parent}: {exc}") from None
    print(f"{args.out}: top {args.top} layers from the child, SHA-256 {write_candidate(args.out, data)}")


if __name__ == "__main__":
    main()
