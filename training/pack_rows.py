"""Tokenize the train and validation rows once, on the CPU, into one small file that travels.

The device that trains has no network and a working tree of at most 64 MiB, 45.7 MB of which is
the shipped verifier; tokenizing there would also spend its minutes. So the rows are laid out
here, with the runtime's own tokenizer and input layout (localeval/verifier/wordpiece.py,
pairs.py) and the shipped verifier's vocabulary and token budgets, and stored as a compressed
numpy archive: every row's token ids end to end (uint16), where each row starts, and its task,
label, split and source. train_device.py reads nothing else.

    python training/pack_rows.py --rows training/.cache/split/rows.jsonl --out training/.cache/packed/rows.npz
"""

from __future__ import annotations

import argparse
import hashlib
import json
from pathlib import Path

import numpy as np
from splits import refuse_sealed

from localeval.verifier import load_verifier
from localeval.verifier.pairs import TASKS, pack

ROOT = Path(__file__).resolve().parents[1]
SPLITS = ("train", "validation")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rows", type=Path, default=ROOT / "training" / ".cache" / "split" / "rows.jsonl")
    parser.add_argument("--out", type=Path, default=ROOT / "training" / ".cache" / "packed" / "rows.npz")
    args = parser.parse_args()
    refuse_sealed(args.rows)
    refuse_sealed(args.out)
    verifier = load_verifier()
    tokenizer, budgets = verifier.tokenizer, verifier.max_tokens
    if len(tokenizer.vocab) > np.iinfo(np.uint16).max:
        raise SystemExit("the vocabulary does not fit 16-bit token ids")
    tokens: list[np.ndarray] = []
    task, label, split, source = [], [], [], []
    sources: list[str] = []
    with open(args.rows, encoding="utf-8") as handle:
        for number, line in enumerate(handle, 1):
            row = json.loads(line)
            if row["split"] not in SPLITS:
                raise SystemExit(f"{args.rows}:{number}: split {row['split']!r}: only train and validation rows are packed")
            tokens.append(np.asarray(pack(tokenizer, row["a"], row["b"], row["c"], budgets[row["task"]]), dtype=np.uint16))
            task.append(TASKS.index(row["task"]))
            label.append(int(row["label"]))
            split.append(SPLITS.index(row["split"]))
            if row["source"] not in sources:
                sources.append(row["source"])
            source.append(sources.index(row["source"]))
            if number % 20000 == 0:
                print(f"{number} rows", flush=True)
    lengths = np.array([len(t) for t in tokens], dtype=np.int64)
    offsets = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    np.savez_compressed(args.out, tokens=np.concatenate(tokens), offsets=offsets, task=np.array(task, dtype=np.int8), label=np.array(label, dtype=np.int8),
                        split=np.array(split, dtype=np.int8), source=np.array(source, dtype=np.int8), sources=np.array(sources), tasks=np.array(TASKS),
                        max_tokens=np.array([budgets[t] for t in TASKS]), verifier_sha256=np.array(verifier.sha256),
                        rows_sha256=np.array(hashlib.sha256(args.rows.read_bytes()).hexdigest()))
    print(f"{len(lengths)} rows, {int(lengths.sum())} tokens (mean {lengths.mean():.0f}) -> {args.out} ({args.out.stat().st_size / 2**20:.1f} MiB)")


if __name__ == "__main__":
    main()
