"""Choose the verifier's decision rules as the metrics use them, on validation rows, and write them into the file.

train_verifier.py sets each task's cut on single validation pairs. What the metric does is
select sentences of a whole sample, and its figures are per sample: F1 where something answers,
"insufficient information" where nothing does. This script scores the validation questions that
prepare_verifier_data.py wrote as samples (HotpotQA questions of the validation split, never
trained on, in the benchmarks' shapes), picks the cut with the best mean of those figures over
the shapes, and rewrites the verifier file's calibration with it (a new SHA-256, which it also
writes into localeval/verifier/__init__.py when the file is the shipped one). It also tries
adding a share of the best logit in the unit's own context (`passage_weight`: a sentence of a context that answers is more likely
required), kept only when it gains. And the attribution cut: on validation claims read the way
context_recall reads a document (the best of several windows, among other sentences), since
that best runs higher than a single pair's logit.

    python training/tune_cut.py [--samples training/.cache/validation_samples.jsonl] [--dry-run]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import random
import re
import statistics
from pathlib import Path
from typing import Any

from splits import refuse_sealed

from localeval.calibration.fitting import selection_f1
from localeval.data.text import split_sentences
from localeval.graders.verifier import context_best
from localeval.verifier import Verifier, shipped_path
from localeval.verifier.tensors import read_tensors, write_tensors

ROOT = Path(__file__).resolve().parents[1]
PASSAGE_WEIGHTS = (0.0, 0.25, 0.5, 0.75, 1.0)
MIN_GAIN = 0.01
SEED = 20261125


def unit_logits(verifier: Verifier, samples: list[dict[str, Any]]) -> list[list[tuple[float, int]]]:
    """Each sample's units as (logit, index of its context); a (question, unit, context) triple is scored once."""
    triples: dict[tuple[str, str, str], float] = {}
    layout = []
    for sample in samples:
        keys = [((sample["question"], unit, context), p) for p, context in enumerate(sample["contexts"]) for unit in split_sentences(context)]
        layout.append(keys)
        for key, _ in keys:
            triples.setdefault(key, 0.0)
    order = list(triples)
    for key, value in zip(order, verifier.logits("relevance", order)):
        triples[key] = value
    return [[(triples[key], p) for key, p in keys] for keys in layout]


def unit_scores(units: list[tuple[float, int]], passage_weight: float) -> list[float]:
    """The verifier's context_relevance rule (localeval.graders.verifier): a unit's logit plus `passage_weight` times the best
    logit among its own context's units."""
    best = context_best([value for value, _ in units], [p for _, p in units])
    return [value + passage_weight * b for (value, _), b in zip(units, best)]


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


ATTRIBUTION_ROWS = 1200  # validation claims read inside longer contexts
DISTRACTORS = 6  # evidence sentences of other validation claims around each claim's own


def attribution_in_context(verifier: Verifier, rows_path: Path) -> tuple[list[float], list[int]]:
    """The metric's statement logits (best of its windows, localeval.graders.verifier) for
    validation claims whose evidence sits among DISTRACTORS sentences of other claims' evidence
    (other groups), in a seeded order: how the verifier reads a document, not a single sentence.
    The best of several windows runs higher than one pair's logit, so the cut is chosen here."""
    from localeval.graders.verifier import verified_windows

    rows = [r for r in map(json.loads, rows_path.read_text(encoding="utf-8").splitlines()) if r["split"] == "validation" and r["task"] == "attribution"]
    rng = random.Random(SEED)
    chosen = rng.sample(rows, min(ATTRIBUTION_ROWS, len(rows)))
    logits, labels = [], []
    for row in chosen:
        others = [o["b"] for o in rng.sample(rows, DISTRACTORS * 2) if o["group"] != row["group"]][:DISTRACTORS]
        sentences = [*others, row["b"]]
        rng.shuffle(sentences)
        logits.append(verified_windows(verifier, [row["a"]], sentences)[0].logit)
        labels.append(int(row["label"]))
    return logits, labels


def balanced_cut(logits: list[float], labels: list[int]) -> tuple[float, float]:
    """The cut with the best balanced accuracy, and that accuracy."""
    positives = sum(labels)
    negatives = len(labels) - positives

    def accuracy(cut: float) -> float:
        tp = sum(1 for v, y in zip(logits, labels) if v >= cut and y)
        tn = sum(1 for v, y in zip(logits, labels) if v < cut and not y)
        return tp / positives / 2 + tn / negatives / 2

    best = max(sorted({round(v, 2) for v in logits}), key=accuracy)
    return best, accuracy(best)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--samples", type=Path, default=ROOT / "training" / ".cache" / "validation_samples.jsonl")
    parser.add_argument("--file", type=Path, default=shipped_path())
    parser.add_argument("--rows", type=Path, default=ROOT / "training" / ".cache" / "rows.jsonl", help="prepare_verifier_data.py's rows (their validation split)")
    parser.add_argument("--dry-run", action="store_true", help="print the figures, change nothing")
    parser.add_argument("--relevance-only", action="store_true", help="choose the relevance rule only; keep the file's attribution cut")
    args = parser.parse_args()
    refuse_sealed(args.samples)
    refuse_sealed(args.rows)
    data = args.file.read_bytes()
    verifier = Verifier(str(args.file), data)
    samples = [json.loads(line) for line in args.samples.read_text(encoding="utf-8").splitlines() if line.strip()]
    units = unit_logits(verifier, samples)
    tensors, metadata = read_tensors(data)
    calibration = json.loads(metadata["calibration"])  # a file tuned before keeps its pairwise cut there
    pair_cut = float(calibration["relevance"].get("pair_cut", verifier.calibration["relevance"].cut))
    scored: dict[tuple[float, float], dict[str, float]] = {}
    for weight in PASSAGE_WEIGHTS:
        scores = [unit_scores(u, weight) for u in units]
        for cut in sorted({round(v, 1) for values in scores for v in values}):
            scored[(weight, cut)] = figures(samples, scores, cut)
    scored[(0.0, pair_cut)] = figures(samples, [unit_scores(u, 0.0) for u in units], pair_cut)
    mean = {key: statistics.fmean(values.values()) for key, values in scored.items()}
    for weight in PASSAGE_WEIGHTS:
        top = max((k for k in scored if k[0] == weight), key=lambda k: mean[k])
        cells = ", ".join(f"{k} {v:.3f}" for k, v in sorted(scored[top].items()))
        print(f"passage weight {weight:.2f}, best cut {top[1]:+.2f}: mean {mean[top]:.3f} ({cells})")
    cells = ", ".join(f"{k} {v:.3f}" for k, v in sorted(scored[(0.0, pair_cut)].items()))
    print(f"pairwise cut {pair_cut:+.2f}, no passage weight: mean {mean[(0.0, pair_cut)]:.3f} ({cells})")
    # A passage weight must earn its place: kept only when it beats none by MIN_GAIN on these rows.
    plain = max((k for k in scored if k[0] == 0.0), key=lambda k: mean[k])
    weighted = max(scored, key=lambda k: mean[k])
    chosen_weight, best = weighted if mean[weighted] >= mean[plain] + MIN_GAIN else plain
    print(f"chosen: passage weight {chosen_weight}, cut {best:+.2f}")
    if args.relevance_only:
        attribution_cut, labels = calibration["attribution"]["cut"], []
        print(f"attribution cut kept: {attribution_cut:+.2f}")
    else:
        in_context, labels = attribution_in_context(verifier, args.rows)
        attribution_cut, attribution_accuracy = balanced_cut(in_context, labels)
        print(f"attribution in context ({len(labels)} validation claims among {DISTRACTORS} other sentences): "
              f"pairwise cut {verifier.calibration['attribution'].cut:+.2f}; best cut {attribution_cut:+.2f}, balanced accuracy {attribution_accuracy:.3f}")
    if args.dry_run:
        return
    calibration["relevance"].setdefault("pair_cut", pair_cut)
    calibration["relevance"]["cut"] = best
    calibration["relevance"]["passage_weight"] = chosen_weight
    if not args.relevance_only:
        calibration["attribution"].setdefault("pair_cut", verifier.calibration["attribution"].cut)
        calibration["attribution"]["cut"] = attribution_cut
        calibration["attribution"]["cut_chosen_on"] = f"{len(labels)} validation claims, each among {DISTRACTORS} sentences of other claims' evidence (training/tune_cut.py)"
    calibration["relevance"]["cut_chosen_on"] = f"{len({s['group'] for s in samples})} validation questions as {len(samples)} samples (training/tune_cut.py)"
    metadata["calibration"] = json.dumps(calibration)
    written = write_tensors(tensors, metadata)
    args.file.write_bytes(written)
    digest = hashlib.sha256(written).hexdigest()
    print(f"wrote {args.file} (SHA-256 {digest})")
    if args.file.resolve() == shipped_path().resolve():  # a candidate elsewhere leaves the shipped hash alone
        init = ROOT / "localeval" / "verifier" / "__init__.py"
        init.write_text(re.sub(r'SHIPPED_SHA256 = "[0-9a-f]{64}"', f'SHIPPED_SHA256 = "{digest}"', init.read_text(encoding="utf-8")), encoding="utf-8")
        print(f"and its hash into {init}")


if __name__ == "__main__":
    main()
