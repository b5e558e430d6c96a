"""Parity and speed of nonllm_context_precision and id_context_precision against ragas 0.4.3.

    python benchmarks/nonllm_precision.py --samples 20000

Generates the samples `nonllm_recall.py` generates (5 retrieved x 3 reference contexts of
300-800 characters: one reference copied from a retrieved context, one a tenth edited, one
fresh), then varies what precision reads: the retrieved contexts shuffled (so the relevant ones
sit at every rank), one sample in 50 with nothing retrieved, and id lists of 0-8 retrieved and
0-5 reference ids from a pool of 12, with duplicates and the same id as an integer and as a
string. Samples with no reference contexts are left out: ragas raises on them (localeval scores 0).

It scores the file with ragas' NonLLMContextPrecisionWithReference (the default Levenshtein, and
its other three measures: hamming, jaro, jaro_winkler) and IDBasedContextPrecision in ragas'
virtual environment (`nonllm_recall.py --vs-ragas` builds it), and with localeval; prints per
metric and measure the samples whose scores differ by more than 1e-9 (must be 0), the largest
difference (ragas divides by relevant + 1e-10, localeval exactly) and the exactly equal ones;
then ragas' compute of both default metrics (its import excluded) against the whole
`localeval score -m nonllm_context_precision -m id_context_precision` process (best of three).
"""

from __future__ import annotations

import argparse
import json
import math
import random
import subprocess

from nonllm_recall import CACHE, ensure_ragas, generate, localeval_file, process_seconds, write_file

from localeval.data.samples import Sample

RAGAS_MEASURES = ("levenshtein", "hamming", "jaro", "jaro_winkler")  # the measures ragas' NonLLMStringSimilarity has
TOLERANCE = 1e-9

# Runs inside the ragas virtual environment: scores the file with ragas, from reading the file to
# the scores (as localeval is timed), for each measure and for the ids; prints scores and seconds.
RAGAS_SCRIPT = """
import json, math, sys, time, warnings
warnings.simplefilter("ignore")
from ragas.dataset_schema import SingleTurnSample
from ragas.metrics import IDBasedContextPrecision, NonLLMContextPrecisionWithReference
from ragas.metrics._string import DistanceMeasure, NonLLMStringSimilarity
def run(metric, fields):
    started = time.perf_counter()
    with open(sys.argv[1]) as handle:
        samples = [SingleTurnSample(**{k: row[k] for k in fields}) for row in map(json.loads, handle)]
    scores = [float(metric.single_turn_score(s)) for s in samples]
    return [None if math.isnan(x) else x for x in scores], time.perf_counter() - started
out = {}
for measure in sys.argv[2].split(","):
    metric = NonLLMContextPrecisionWithReference(distance_measure=NonLLMStringSimilarity(distance_measure=DistanceMeasure(measure)))
    out[measure] = run(metric, ["retrieved_contexts", "reference_contexts"])
out["ids"] = run(IDBasedContextPrecision(), ["retrieved_context_ids", "reference_context_ids"])
import ragas
out["version"] = ragas.__version__
print(json.dumps(out))
"""


def vary(samples: list[Sample], seed: int) -> list[Sample]:
    """What precision reads, varied: relevant contexts at every rank, now and then nothing
    retrieved, and id lists with duplicates, misses and ids given as integers and as strings."""
    rng = random.Random(seed)

    def draw(low: int, high: int) -> list[str | int]:
        """Ids from a pool of 12 (so some repeat), three in ten given as strings."""
        return [str(x) if rng.random() < 0.3 else x for x in rng.choices(range(12), k=rng.randint(low, high))]

    varied = []
    for sample in samples:
        contexts = list(sample.retrieved_contexts or [])
        rng.shuffle(contexts)
        if rng.random() < 0.02:
            contexts = []
        varied.append(sample.model_copy(update={"retrieved_contexts": contexts, "retrieved_context_ids": draw(0, 8), "reference_context_ids": draw(0, 5)}))
    return varied


def compare(theirs: list[float | None], ours: list[float]) -> tuple[int, float, int]:
    """Samples differing by more than TOLERANCE (NaN equals only NaN), the largest difference, and the exactly equal ones."""
    differing, largest, exact = 0, 0.0, 0
    for their, our in zip(theirs, ours, strict=True):
        if their is None or our is None or math.isnan(our):
            same = (their is None) == (our is None or math.isnan(our))
            differing += not same
            exact += same
            continue
        gap = abs(their - our)
        largest = max(largest, gap)
        differing += gap > TOLERANCE
        exact += gap == 0
    return differing, largest, exact


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--samples", type=int, default=20000)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    samples = vary(generate(args.samples, 5, 3, args.seed), args.seed)
    python = ensure_ragas()
    CACHE.mkdir(exist_ok=True)
    path = CACHE / f"precision_vs_ragas_{args.samples}.jsonl"
    write_file(samples, path)
    completed = subprocess.run([str(python), "-c", RAGAS_SCRIPT, str(path), ",".join(RAGAS_MEASURES)], capture_output=True, text=True, check=True)
    theirs = json.loads(completed.stdout.strip().splitlines()[-1])
    n = len(samples)
    print(f"ragas {theirs['version']} vs localeval on {n} samples (same file, same run); differing: more than {TOLERANCE:g} apart")
    print(f"{'metric':<50} {'ragas samples/s':>16} {'localeval samples/s':>20} {'ratio':>7} {'differing':>10} {'largest gap':>12} {'exactly equal':>14}")
    rows = [(f"nonllm_context_precision measure={m}", "nonllm_context_precision", {"measure": m}, theirs[m]) for m in RAGAS_MEASURES]
    rows.append(("id_context_precision", "id_context_precision", {}, theirs["ids"]))
    for label, metric, options, (their_scores, their_s) in rows:
        ours, our_s = localeval_file(path, metric, options)
        differing, largest, exact = compare(their_scores, ours)
        print(f"{label:<50} {n / their_s:16.0f} {n / our_s:20.0f} {their_s / our_s:6.1f}x {differing:10d} {largest:12.2e} {exact:14d}")
    process_s = process_seconds(path, ["nonllm_context_precision", "id_context_precision"])
    ragas_s = theirs["levenshtein"][1] + theirs["ids"][1]
    print(f"whole `localeval score -m nonllm_context_precision -m id_context_precision` process (start-up, imports, reading, both metrics, "
          f"writing; best of 3): {process_s:.3f} s; ragas' compute of both (its import excluded): {ragas_s:.3f} s; ratio {ragas_s / process_s:.1f}x")


if __name__ == "__main__":
    main()
