"""The verifier files side by side on the sealed test split (training/prepare_split_data.py): the final evaluation.

Run once a candidate is trained and chosen: the sealed rows are for reporting, and a figure
read here must not send anyone back to change the data, the training or a cut (that would make
the split one more validation set). Per source: rows, AUC, and balanced accuracy at each file's
own calibrated cut (pairs as the training rows lay them out); and for the news summaries as
whole samples, the metric's way (each statement's best window, localeval.graders.verifier), a
summary called factual when every statement is attributed, balanced accuracy against the
summary's human label; and the claims against whole documents (training/claim_documents.py:
Check-COVID, Citation-Integrity, Factcheck-GPT, SummEdits), each claim's best window at the file's
cut. The numpy runtime scores on the CPU: --per-source caps the rows, --news the summaries and
--claims the claims per source (seeded samples, the same for every file).

    python benchmarks/verifier_sealed.py --file localeval/verifier/verifier.safetensors --file training/.cache/device/verifier.safetensors
"""

from __future__ import annotations

import argparse
import json
import random
from collections import defaultdict
from pathlib import Path
from typing import Any

from localeval.calibration.fitting import balanced_accuracy
from localeval.data.text import split_sentences
from localeval.graders.verifier import verified_windows
from localeval.verifier import Verifier

ROOT = Path(__file__).resolve().parents[1]
SEALED = ROOT / "training" / ".cache" / "sealed"
SEED = 20261126


def auc(labels: list[int], scores: list[float]) -> float:
    """The share of (positive, negative) pairs ranked right, ties half."""
    positives = [s for s, y in zip(scores, labels) if y]
    negatives = [s for s, y in zip(scores, labels) if not y]
    if not positives or not negatives:
        return float("nan")
    wins = sum((p > n) + 0.5 * (p == n) for p in positives for n in negatives)
    return wins / (len(positives) * len(negatives))


def pair_figures(verifier: Verifier, rows: list[dict[str, Any]]) -> dict[str, dict[str, float]]:
    by_source: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for row in rows:
        by_source[row["source"]].append(row)
    out = {}
    for source, picked in sorted(by_source.items()):
        task = picked[0]["task"]
        logits = verifier.logits(task, [(r["a"], r["b"], r["c"]) for r in picked])
        labels = [int(r["label"]) for r in picked]
        cut = verifier.calibration[task].cut
        out[source] = {"n": len(picked), "auc": round(auc(labels, logits), 4),
                       "balanced_accuracy": round(balanced_accuracy(labels, [int(v >= cut) for v in logits]), 4)}
    return out


def news_figures(verifier: Verifier, samples: list[dict[str, Any]]) -> dict[str, float]:
    labels, predicted = [], []
    cut = verifier.calibration["attribution"].cut
    for sample in samples:
        sentences = split_sentences(sample["retrieved_contexts"][0])
        statements = sample["statements"]
        found = verified_windows(verifier, statements, sentences)
        labels.append(int(sample["summary_label"]))
        predicted.append(int(all(read.logit >= cut for read in found)))
    return {"n": len(labels), "balanced_accuracy": round(balanced_accuracy(labels, predicted), 4)}


def claim_figures(verifier: Verifier, samples: list[dict[str, Any]]) -> dict[str, dict[str, float]]:
    """Claims against whole documents (Check-COVID, Citation-Integrity, Factcheck-GPT, SummEdits:
    sealed/test_claim_samples.jsonl), read the metric's way: the claim's best window of the
    document, attributed at the file's cut. Per source: AUC and balanced accuracy."""
    by_source: dict[str, list[tuple[int, float]]] = defaultdict(list)
    for sample in samples:
        found = verified_windows(verifier, [sample["statement"]], split_sentences(" ".join(sample["contexts"])))
        by_source[sample["source"]].append((int(sample["label"]), found[0].logit))
    cut = verifier.calibration["attribution"].cut
    return {source: {"n": len(pairs), "auc": round(auc([y for y, _ in pairs], [v for _, v in pairs]), 4),
                     "balanced_accuracy": round(balanced_accuracy([y for y, _ in pairs], [int(v >= cut) for _, v in pairs]), 4)}
            for source, pairs in sorted(by_source.items())}


def seeded_per_source(items: list[dict[str, Any]], limit: int) -> list[dict[str, Any]]:
    """At most `limit` items per source, the same seeded sample for every file (0: all)."""
    if not limit:
        return items
    grouped: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for item in items:
        grouped[item["source"]].append(item)
    rng = random.Random(SEED)
    return [r for source in sorted(grouped) for r in rng.sample(grouped[source], min(limit, len(grouped[source])))]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--file", type=Path, action="append", required=True, help="a verifier file (repeat to compare)")
    parser.add_argument("--rows", type=Path, default=SEALED / "test_rows.jsonl")
    parser.add_argument("--samples", type=Path, default=SEALED / "test_news_samples.jsonl")
    parser.add_argument("--split", default="test", help="the rows' split to score (test; validation for a dry run on other rows)")
    parser.add_argument("--per-source", type=int, default=400, help="at most this many rows per source, seeded (0: all)")
    parser.add_argument("--news", type=int, default=0, help="at most this many news summaries, seeded (0: all)")
    parser.add_argument("--claim-samples", type=Path, default=SEALED / "test_claim_samples.jsonl", help="claims against whole documents (training/claim_documents.py)")
    parser.add_argument("--claims", type=int, default=0, help="at most this many claims per source, seeded (0: all)")
    parser.add_argument("--parts", default="pairs,news,claims", help="what to score: pairs, news, claims (comma-separated)")
    args = parser.parse_args()
    parts = set(args.parts.split(","))
    rows = [r for r in map(json.loads, args.rows.read_text(encoding="utf-8").splitlines()) if r["split"] == args.split] if "pairs" in parts else []
    rows = seeded_per_source(rows, args.per_source)
    claims = [json.loads(line) for line in args.claim_samples.read_text(encoding="utf-8").splitlines() if line.strip()] if "claims" in parts and args.claim_samples.is_file() else []
    claims = seeded_per_source(claims, args.claims)
    samples = [json.loads(line) for line in args.samples.read_text(encoding="utf-8").splitlines() if line.strip()] if "news" in parts and args.samples.is_file() else []
    if args.news and args.news < len(samples):
        samples = [samples[i] for i in sorted(random.Random(SEED).sample(range(len(samples)), args.news))]
    report = {}
    for path in args.file:
        verifier = Verifier(str(path), path.read_bytes())
        report[str(path)] = {"sha256": verifier.sha256, "pairs": pair_figures(verifier, rows), "news summaries": news_figures(verifier, samples) if samples else None,
                             "claims against documents": claim_figures(verifier, claims) if claims else None}
        print(json.dumps({str(path): report[str(path)]}, indent=1), flush=True)


if __name__ == "__main__":
    main()
