"""Choose the verifier's relevance cut on whole validation samples, and write it into the file.

train_verifier.py sets each task's cut on single validation pairs. What the metric does is
select sentences of a whole sample, and its figures are per sample: F1 where something answers,
"insufficient information" where nothing does. This script scores the validation questions that
prepare_verifier_data.py wrote as samples (HotpotQA questions of the validation split, never
trained on, in the benchmarks' shapes), picks the cut with the best mean of those figures over
the shapes, and rewrites the verifier file's calibration with it (a new SHA-256, which it also
writes into localeval/verifier/__init__.py).

    python training/tune_cut.py [--samples training/.cache/validation_samples.jsonl] [--dry-run]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import re
import statistics
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from localeval.fitting import selection_f1  # noqa: E402
from localeval.text import split_sentences  # noqa: E402
from localeval.verifier import Verifier, shipped_path  # noqa: E402
from localeval.verifier.tensors import read_tensors, write_tensors  # noqa: E402


def unit_logits(verifier: Verifier, samples: list[dict[str, Any]]) -> list[list[float]]:
    """Each sample's unit logits; a (question, unit, context) triple is scored once."""
    triples = {}
    layout = []
    for sample in samples:
        keys = [(sample["question"], unit, context) for context in sample["contexts"] for unit in split_sentences(context)]
        layout.append(keys)
        for key in keys:
            triples.setdefault(key, None)
    order = list(triples)
    for key, value in zip(order, verifier.logits("relevance", order)):
        triples[key] = value
    return [[triples[key] for key in keys] for keys in layout]


def figures(samples: list[dict[str, Any]], logits: list[list[float]], cut: float) -> dict[str, float]:
    """Per shape: mean F1 where something answers, the share said "insufficient" where nothing does."""
    by_shape: dict[str, list[float]] = {}
    for sample, values in zip(samples, logits):
        selected = {i for i, v in enumerate(values) if v >= cut}
        if sample["required"]:
            by_shape.setdefault(f"F1 {sample['shape']}", []).append(selection_f1(selected, set(sample["required"]))[2])
        else:
            by_shape.setdefault(f"insufficient {sample['shape']}", []).append(float(not selected))
    return {shape: statistics.fmean(values) for shape, values in by_shape.items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--samples", type=Path, default=ROOT / "training" / ".cache" / "validation_samples.jsonl")
    parser.add_argument("--file", type=Path, default=shipped_path())
    parser.add_argument("--dry-run", action="store_true", help="print the figures, change nothing")
    args = parser.parse_args()
    data = args.file.read_bytes()
    verifier = Verifier(str(args.file), data)
    samples = [json.loads(line) for line in args.samples.read_text(encoding="utf-8").splitlines() if line.strip()]
    logits = unit_logits(verifier, samples)
    pair_cut = verifier.calibration["relevance"].cut
    candidates = sorted({round(v, 1) for values in logits for v in values} | {pair_cut})
    scored = {cut: figures(samples, logits, cut) for cut in candidates}
    best = max(candidates, key=lambda cut: (statistics.fmean(scored[cut].values()), -abs(cut - pair_cut)))
    for label, cut in (("pairwise cut", pair_cut), ("chosen cut", best)):
        cells = ", ".join(f"{k} {v:.3f}" for k, v in sorted(scored[cut].items()))
        print(f"{label} {cut:+.2f}: mean {statistics.fmean(scored[cut].values()):.3f} ({cells})")
    if args.dry_run:
        return
    tensors, metadata = read_tensors(data)
    calibration = json.loads(metadata["calibration"])
    calibration["relevance"]["pair_cut"] = pair_cut
    calibration["relevance"]["cut"] = best
    calibration["relevance"]["cut_chosen_on"] = f"{len({s['group'] for s in samples})} validation questions as {len(samples)} samples (training/tune_cut.py)"
    metadata["calibration"] = json.dumps(calibration)
    written = write_tensors(tensors, metadata)
    args.file.write_bytes(written)
    digest = hashlib.sha256(written).hexdigest()
    init = ROOT / "localeval" / "verifier" / "__init__.py"
    init.write_text(re.sub(r'SHIPPED_SHA256 = "[0-9a-f]{64}"', f'SHIPPED_SHA256 = "{digest}"', init.read_text(encoding="utf-8")), encoding="utf-8")
    print(f"wrote {args.file} (SHA-256 {digest}) and its hash into {init}")


if __name__ == "__main__":
    main()
