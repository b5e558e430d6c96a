"""Speed of the non-LLM recall metrics on synthetic samples.

Generates N samples (by default 5 retrieved x 3 reference contexts of 300-800
characters, half of the references copied with small edits from a retrieved
context so that both branches of the threshold are exercised) and prints
samples/s and pairs/s for every string measure and for id_context_recall,
timing localeval's own batch path (the one `localeval score` uses).

    python benchmarks/nonllm_recall.py --samples 20000
"""

from __future__ import annotations

import argparse
import random
import string
import time

from localeval.metrics import create_metric
from localeval.metrics.string_recall import MEASURES
from localeval.runner import STRING_BATCH
from localeval.samples import Sample

WORDS = ["".join(random.Random(i).choices(string.ascii_lowercase, k=random.Random(i).randint(2, 9))) for i in range(3000)]


def passage(rng: random.Random) -> str:
    target = rng.randint(300, 800)
    words: list[str] = []
    while sum(len(w) + 1 for w in words) < target:
        words.append(rng.choice(WORDS))
    return " ".join(words)[:target]


def mutate(text: str, rng: random.Random, edits: int) -> str:
    chars = list(text)
    for _ in range(edits):
        chars[rng.randrange(len(chars))] = rng.choice(string.ascii_lowercase)
    return "".join(chars)


def generate(n: int, retrieved: int, references: int, seed: int) -> list[Sample]:
    rng = random.Random(seed)
    samples = []
    for index in range(n):
        contexts = [passage(rng) for _ in range(retrieved)]
        refs = [mutate(rng.choice(contexts), rng, rng.randint(5, 60)) if rng.random() < 0.5 else passage(rng) for _ in range(references)]
        ids = list(range(index * 10, index * 10 + retrieved))
        ref_ids = [rng.choice(ids) if rng.random() < 0.7 else -1 - rng.randrange(99) for _ in range(references)]
        samples.append(Sample(retrieved_contexts=contexts, reference_contexts=refs, retrieved_context_ids=ids, reference_context_ids=ref_ids))
    return samples


def time_metric(metric_name: str, options: dict[str, str], samples: list[Sample]) -> float:
    metric = create_metric(metric_name, options)
    started = time.perf_counter()
    for start in range(0, len(samples), STRING_BATCH):
        metric.score_batch(samples[start : start + STRING_BATCH], None)
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--samples", type=int, default=5000)
    parser.add_argument("--retrieved", type=int, default=5)
    parser.add_argument("--references", type=int, default=3)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    samples = generate(args.samples, args.retrieved, args.references, args.seed)
    pairs = args.samples * args.retrieved * args.references
    print(f"{args.samples} samples, {args.retrieved} retrieved x {args.references} reference contexts, {pairs} pairs")
    print(f"{'metric / measure':<40} {'seconds':>8} {'samples/s':>11} {'pairs/s':>12}")
    for measure in MEASURES:
        seconds = time_metric("nonllm_context_recall", {"measure": measure}, samples)
        print(f"{'nonllm_context_recall ' + measure:<40} {seconds:8.3f} {args.samples / seconds:11.0f} {pairs / seconds:12.0f}")
    seconds = time_metric("id_context_recall", {}, samples)
    print(f"{'id_context_recall':<40} {seconds:8.3f} {args.samples / seconds:11.0f} {'-':>12}")


if __name__ == "__main__":
    main()
