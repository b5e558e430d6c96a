"""Speed of the non-LLM recall metrics on synthetic samples, alone and against ragas.

Generates N samples (by default 5 retrieved x 3 reference contexts of 300-800
characters: one reference copied verbatim from a retrieved context, one with a tenth
of its characters changed, one absent; 5 retrieved and 3 reference ids) and prints
samples/s and pairs/s for every string measure and for id_context_recall,
timing localeval's own batch path (the one `localeval score` uses).

    python benchmarks/nonllm_recall.py --samples 5000               # every measure
    python benchmarks/nonllm_recall.py --samples 20000 --vs-ragas   # same file, ragas and localeval, same run
    python benchmarks/nonllm_recall.py --process 100000              # the whole `localeval score` process

--vs-ragas installs ragas into a virtual environment under benchmarks/.cache (never a
dependency of localeval), scores the same generated file with ragas' NonLLMContextRecall
and IDBasedContextRecall and with localeval, counts score mismatches (must be 0), and
prints samples/s for both, their ratio, localeval's ratio to the bare rapidfuzz kernel
over the same pairs (the bound), and the whole `localeval score` process (start-up and
imports included, best of three) against ragas' compute of both metrics.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import string
import subprocess
import sys
import time
from collections.abc import Sequence
from pathlib import Path

import numpy as np
from rapidfuzz import distance, process

from localeval.data.jsonl import read_records
from localeval.data.samples import Sample
from localeval.metrics import create_metric
from localeval.metrics.string_recall import MEASURES
from localeval.run.runner import STRING_BATCH, score

# Tens of milliseconds a pair on long texts that do not contain each other: minutes
# for the default file, so it is timed only when asked for (--measures partial_ratio).
SLOW_MEASURES = ("partial_ratio",)

# A small English vocabulary (the texts' content does not change Levenshtein's cost, only their length).
WORDS = """the of and to in is was for on that with as by at from his her it an are were be this which or had
not but have first one their they also after new been its has other who all two more she when time into
during only over most city year world three later part state school team many war where river years
used some these game four season him north there made life known national south called small work under
film series house early while between film music group second people since both century west until
water number until county public family government about through five then history built members high
great town being village back area album became well order church local could main land around each left
game last march june july name original final following court former several million based head power""".split()


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
    """Samples as issue 14 specifies them: `retrieved` contexts of 300-800 characters from a
    small vocabulary; of the references, one copied verbatim from a retrieved context, one
    with a tenth of its characters changed, the rest absent (fresh text); ids alike."""
    rng = random.Random(seed)
    samples = []
    for index in range(n):
        contexts = [passage(rng) for _ in range(retrieved)]
        copied = rng.choice(contexts)
        edited = rng.choice(contexts)
        refs = [copied, mutate(edited, rng, len(edited) // 10), *[passage(rng) for _ in range(max(0, references - 2))]][:references]
        ids = list(range(index * 10, index * 10 + retrieved))
        ref_ids = [ids[0], ids[1], *[-1 - i for i in range(max(0, references - 2))]][:references]
        samples.append(Sample(retrieved_contexts=contexts, reference_contexts=refs, retrieved_context_ids=ids, reference_context_ids=ref_ids))
    return samples


def time_metric(metric_name: str, options: dict[str, str], samples: list[Sample]) -> float:
    metric = create_metric(metric_name, options)
    started = time.perf_counter()
    for start in range(0, len(samples), STRING_BATCH):
        metric.score_batch(samples[start : start + STRING_BATCH], None)
    return time.perf_counter() - started


CACHE = Path(__file__).resolve().parent / ".cache"
RAGAS_VENV = CACHE / "ragas-venv"
# ragas 0.4.3 imports a module that langchain-community 0.4 removed, hence the pin.
RAGAS_REQUIREMENTS = ["ragas==0.4.3", "langchain-community<0.4", "rapidfuzz"]

# Runs inside the ragas virtual environment: scores the file with ragas, from reading the
# file to the scores (as localeval is timed), and prints the scores and the seconds.
RAGAS_SCRIPT = """
import json, sys, time, warnings
warnings.simplefilter("ignore")
from ragas.dataset_schema import SingleTurnSample
from ragas.metrics import IDBasedContextRecall, NonLLMContextRecall
def run(metric, fields):
    started = time.perf_counter()
    with open(sys.argv[1]) as handle:
        samples = [SingleTurnSample(**{k: row[k] for k in fields}) for row in map(json.loads, handle)]
    scores = [metric.single_turn_score(s) for s in samples]
    return scores, time.perf_counter() - started
nonllm, nonllm_s = run(NonLLMContextRecall(), ["retrieved_contexts", "reference_contexts"])
ids, ids_s = run(IDBasedContextRecall(), ["retrieved_context_ids", "reference_context_ids"])
import ragas
print(json.dumps({"version": ragas.__version__, "nonllm": nonllm, "nonllm_s": nonllm_s, "ids": ids, "ids_s": ids_s}))
"""


def ensure_ragas() -> Path:
    python = RAGAS_VENV / "bin" / "python"
    if not python.exists():
        print("installing ragas into", RAGAS_VENV, "(once)", flush=True)
        subprocess.run([sys.executable, "-m", "venv", str(RAGAS_VENV)], check=True)
        subprocess.run([str(python), "-m", "pip", "install", "-q", *RAGAS_REQUIREMENTS], check=True)
    return python


def write_file(samples: list[Sample], path: Path) -> None:
    with open(path, "w", encoding="utf-8") as handle:
        for sample in samples:
            handle.write(json.dumps(sample.model_dump(exclude_none=True)) + "\n")


def localeval_file(path: Path, metric: str, options: dict[str, str] | None = None) -> tuple[list[float], float]:
    """localeval's scores for the file through the normal path (read, parse, score), and its seconds."""
    started = time.perf_counter()
    values = [r.scores[metric] for r in score(read_records(str(path)), [create_metric(metric, options)])]
    return values, time.perf_counter() - started


def kernel_seconds(samples: list[Sample]) -> tuple[float, float]:
    """The bound: the bare rapidfuzz kernel over exactly the pairs localeval must score,
    called as localeval calls it (early stop at the threshold, all cores), and in full."""
    left = [ret for s in samples for _ in s.reference_contexts or [] for ret in s.retrieved_contexts or []]
    right = [ref for s in samples for ref in s.reference_contexts or [] for _ in s.retrieved_contexts or []]
    timings = []
    for kwargs in ({"score_cutoff": 0.5, "workers": -1}, {}):
        started = time.perf_counter()
        process.cpdist(left, right, scorer=distance.Levenshtein.normalized_distance, processor=None, dtype=np.float64, **kwargs)
        timings.append(time.perf_counter() - started)
    return timings[0], timings[1]


def vs_ragas(samples: list[Sample]) -> None:
    python = ensure_ragas()
    CACHE.mkdir(exist_ok=True)
    path = CACHE / f"vs_ragas_{len(samples)}.jsonl"
    write_file(samples, path)
    completed = subprocess.run([str(python), "-c", RAGAS_SCRIPT, str(path)], capture_output=True, text=True, check=True)
    theirs = json.loads(completed.stdout.strip().splitlines()[-1])
    ours_nonllm, ours_nonllm_s = localeval_file(path, "nonllm_context_recall")
    ours_ids, ours_ids_s = localeval_file(path, "id_context_recall")
    bound, full_kernel = kernel_seconds(samples)
    n = len(samples)

    def mismatches(a: list[float], b: list[float]) -> int:
        return sum(1 for x, y in zip(a, b, strict=True) if not (x == y or (x != x and y != y)))

    print(f"ragas {theirs['version']} vs localeval on {n} samples (same file, same run)")
    print(f"{'metric':<24} {'ragas samples/s':>16} {'localeval samples/s':>20} {'ratio':>8} {'mismatches':>11}")
    print(f"{'nonllm_context_recall':<24} {n / theirs['nonllm_s']:16.0f} {n / ours_nonllm_s:20.0f} {theirs['nonllm_s'] / ours_nonllm_s:7.1f}x {mismatches(theirs['nonllm'], ours_nonllm):11d}")
    print(f"{'id_context_recall':<24} {n / theirs['ids_s']:16.0f} {n / ours_ids_s:20.0f} {theirs['ids_s'] / ours_ids_s:7.1f}x {mismatches(theirs['ids'], ours_ids):11d}")
    print(f"bare rapidfuzz Levenshtein kernel over the same pairs, as localeval calls it (cutoff 0.5, all cores): {bound:.3f} s "
          f"(without cutoff, one core: {full_kernel:.3f} s)")
    print(f"localeval, file to scores: {ours_nonllm_s:.3f} s; kernel / localeval = {bound / ours_nonllm_s:.2f}")
    in_memory = time_metric("nonllm_context_recall", {}, samples)
    print(f"localeval, parsed samples to scores (the metric alone): {in_memory:.3f} s; kernel / localeval = {bound / in_memory:.2f}")
    print(f"id_context_recall, parsed samples to scores: {n / time_metric('id_context_recall', {}, samples):.0f} samples/s "
          f"(from the file: {n / ours_ids_s:.0f}; reading and validating the lines is the difference)")
    process_s = process_seconds(path, ["nonllm_context_recall", "id_context_recall"])
    ragas_s = theirs["nonllm_s"] + theirs["ids_s"]
    print(f"whole `localeval score -m nonllm_context_recall -m id_context_recall` process (start-up, imports, reading, both metrics, "
          f"writing): {process_s:.3f} s; ragas' compute of both (its import excluded): {ragas_s:.3f} s; ratio {ragas_s / process_s:.1f}x")


def process_seconds(path: Path, metrics: Sequence[str]) -> float:
    """Wall seconds of a whole `localeval score` process scoring `metrics` (the two recall ones
    here, the two precision ones in nonllm_precision.py), best of three."""
    command = [sys.executable, "-m", "localeval", "score", str(path), *[arg for name in metrics for arg in ("-m", name)], "-o", os.devnull, "-q"]
    timings = []
    for _ in range(3):
        started = time.perf_counter()
        subprocess.run(command, check=True, capture_output=True)
        timings.append(time.perf_counter() - started)
    return min(timings)


# Runs `localeval score` in this process and reports its own peak RSS on exit.
PEAK_WRAPPER = """
import atexit, resource, sys
atexit.register(lambda: print("PEAK_KIB", resource.getrusage(resource.RUSAGE_SELF).ru_maxrss,
                              "LLAMA_CPP", "llama_cpp" in sys.modules, file=sys.stderr))
sys.argv = ["localeval", *sys.argv[1:]]
from localeval.cli import main
main()
"""


def write_cycled(samples: list[Sample], size: int, path: Path) -> None:
    """`size` lines cycling through `samples` (each with its own id): generating 100,000
    distinct samples in Python takes longer than scoring them, and the cost of scoring
    a line does not depend on whether its text was seen before."""
    lines = [sample.model_dump(exclude_none=True) for sample in samples]
    with open(path, "w", encoding="utf-8") as handle:
        for index in range(size):
            handle.write(json.dumps({"id": index, **lines[index % len(lines)]}) + "\n")


def whole_process(samples: list[Sample], size: int) -> None:
    """`localeval score` as a user runs it: seconds and peak memory for growing files
    (memory must stay flat), and whether llama_cpp was imported (it must not be)."""
    CACHE.mkdir(exist_ok=True)
    for lines in sorted({10, max(10, size // 100), max(10, size // 10), size}):
        path = CACHE / f"process_{lines}.jsonl"
        write_cycled(samples, lines, path)
        command = [sys.executable, "-c", PEAK_WRAPPER, "score", str(path), "-m", "nonllm_context_recall", "-m", "id_context_recall", "-o", os.devnull, "-q"]
        started = time.perf_counter()
        completed = subprocess.run(command, capture_output=True, text=True, check=True)
        seconds = time.perf_counter() - started
        fields = completed.stderr.split("PEAK_KIB")[-1].split()
        peak, llama_imported = int(fields[0]) / 1024, fields[2]
        print(f"localeval score, {lines:>7} samples: {seconds:7.2f} s wall, {lines / seconds:8.0f} samples/s, "
              f"peak RSS {peak:6.0f} MiB, llama_cpp imported: {llama_imported}", flush=True)
        path.unlink()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--samples", type=int, default=5000)
    parser.add_argument("--retrieved", type=int, default=5)
    parser.add_argument("--references", type=int, default=3)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--vs-ragas", action="store_true", help="compare with ragas on the same file")
    parser.add_argument("--process", type=int, metavar="N", help="time the whole `localeval score` process on N samples")
    parser.add_argument("--measures", default=",".join(m for m in MEASURES if m not in SLOW_MEASURES),
                        help=f"comma-separated string measures to time (default: all but {', '.join(SLOW_MEASURES)})")
    args = parser.parse_args()
    if args.process:
        whole_process(generate(min(args.process, 2000), args.retrieved, args.references, args.seed), args.process)
        return
    samples = generate(args.samples, args.retrieved, args.references, args.seed)
    if args.vs_ragas:
        vs_ragas(samples)
        return
    pairs = args.samples * args.retrieved * args.references
    print(f"{args.samples} samples, {args.retrieved} retrieved x {args.references} reference contexts, {pairs} pairs")
    print(f"{'metric / measure':<40} {'seconds':>8} {'samples/s':>11} {'pairs/s':>12}")
    for measure in args.measures.split(","):
        seconds = time_metric("nonllm_context_recall", {"measure": measure}, samples)
        print(f"{'nonllm_context_recall ' + measure:<40} {seconds:8.3f} {args.samples / seconds:11.0f} {pairs / seconds:12.0f}")
    seconds = time_metric("id_context_recall", {}, samples)
    print(f"{'id_context_recall':<40} {seconds:8.3f} {args.samples / seconds:11.0f} {'-':>12}")


if __name__ == "__main__":
    main()
