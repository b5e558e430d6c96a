"""The rest of ragas' scorecard (semantic_similarity, answer_correctness, context_entity_recall,
noise_sensitivity): do they rank obvious cases as a person would, and what do they cost?

1. Order (`--only order`): the hand-written cases of tests/data/scorecard_cases.jsonl scored by
   the judge (the default judge unless --model). Targets, per group: semantic_similarity paraphrase
   > related > unrelated; answer_correctness exact > half > wrong; context_entity_recall all 1,
   half 0.5, none 0; noise_sensitivity copied_noise > faithful = 0.
2. Cost (`--only cost`): seconds per sample of each metric beside faithfulness on the README example
   (examples/rag_samples.jsonl), each timed by the runner on the same judge, one sample at a time.
3. Judge calls (`--only calls`): a run of noise_sensitivity with factual_correctness and faithfulness
   against faithfulness and context_recall together (target: noise_sensitivity's own calls at most
   1.3x theirs); answer_correctness' calls and embedding calls beside factual_correctness' (target:
   no judge call of its own, at most two embedding forwards per sample).
4. Throughput (`--only throughput`): semantic_similarity's samples per second on --samples pairs
   with BLAS on one thread and the encoder's batches on --threads threads, as the localeval command
   runs them (target: 200/s on 2 cores). No judge.

The judge parts need the judge and every part the embedding model (`localeval models pull`,
`localeval models pull all-minilm-l6-v2`). On a shared machine run it niced:

    nice -n 10 python benchmarks/rag_scorecard.py --threads 2
    python benchmarks/rag_scorecard.py --only throughput --threads 2
    python benchmarks/rag_scorecard.py --only order --model smollm2-135m   # the plumbing, quickly
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from pathlib import Path
from typing import Any

from judged_cases import add_judge_options, read

ROOT = Path(__file__).resolve().parents[1]
CASES = ROOT / "tests" / "data" / "scorecard_cases.jsonl"
EXAMPLE = ROOT / "examples" / "rag_samples.jsonl"
METRICS = ("semantic_similarity", "answer_correctness", "context_entity_recall", "noise_sensitivity")
PARTS = ("order", "cost", "calls", "throughput")
# What a person expects, per metric: the kinds from best to worst, and exact values where the case says them.
ORDER = {
    "semantic_similarity": ("paraphrase", "related", "unrelated"),
    "answer_correctness": ("exact", "half", "wrong"),
    "context_entity_recall": ("all", "half", "none"),
    "noise_sensitivity": ("copied_noise", "faithful"),  # lower is better: the copied noise scores above
}
EXPECTED = {"context_entity_recall": {"all": 1.0, "half": 0.5, "none": 0.0}, "noise_sensitivity": {"faithful": 0.0}}


def arguments() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter)
    add_judge_options(parser, "judge and numpy threads (default 2)")
    parser.add_argument("--only", choices=PARTS, action="append", help="run this part only (repeatable)")
    parser.add_argument("--cases", type=Path, default=CASES, help="hand-written cases (JSON Lines with metric, group and kind)")
    parser.add_argument("--metric", choices=METRICS, action="append", help="order: only this metric's cases (repeatable)")
    parser.add_argument("--example", type=Path, default=EXAMPLE, help="the samples cost and calls are measured on")
    parser.add_argument("--samples", type=int, default=2000, help="pairs semantic_similarity's throughput is measured on (default 2000)")
    parser.add_argument("--json", type=Path, help="also write the figures here")
    return parser.parse_args()


def order(judge: Any, path: Path, metrics: list[str] | None = None) -> dict[str, Any]:
    """Each metric on its cases, and the groups not in the order a person ranks them."""
    from localeval.run.runner import score

    rows = [row for row in read(path) if not metrics or row["metric"] in metrics]
    values: dict[str, dict[str, dict[str, float]]] = {}
    for row in rows:
        sample = {k: v for k, v in row.items() if k not in ("metric", "group", "kind")}
        result = next(iter(score([sample], [row["metric"]], judge=judge)))
        value = result.scores[row["metric"]]
        values.setdefault(row["metric"], {}).setdefault(row["group"], {})[row["kind"]] = value
        print(f"{row['metric']:>22} {row['group']:>8} {row['kind']:>13}: {value if value is None else round(value, 3)}  "
              f"{result.details.get(row['metric'])}{'  error: ' + result.errors[row['metric']] if result.errors else ''}", flush=True)
    failures = []
    for metric, groups in values.items():
        for group, scores in groups.items():
            ranked = [scores.get(kind) for kind in ORDER[metric]]
            if any(v is None for v in ranked) or not all(a is not None and b is not None and a > b for a, b in zip(ranked, ranked[1:])):
                failures.append(f"{metric} {group}: {' > '.join(f'{k} {v}' for k, v in zip(ORDER[metric], ranked))} does not hold")
            for kind, wanted in EXPECTED.get(metric, {}).items():
                if scores.get(kind) is None or abs(scores[kind] - wanted) > 1e-6:
                    failures.append(f"{metric} {group}: {kind} scores {scores.get(kind)}, not {wanted}")
    total = sum(len(groups) for groups in values.values())
    print(f"order: {total - len({f.rsplit(':', 1)[0] for f in failures})} of {total} groups as a person ranks them")
    for failure in failures:
        print(f"  {failure}")
    return {"values": values, "failures": failures}


def cost(judge: Any, path: Path) -> dict[str, Any]:
    """Seconds per sample of each new metric beside faithfulness, each run alone (nothing shared)."""
    from localeval import evaluate

    samples = read(path)
    evaluate(samples[:1], ["faithfulness", *METRICS], judge=judge)  # warm-up, untimed: the embedding model loads once
    figures = {}
    for name in ("faithfulness", *METRICS):
        seconds = []
        for sample in samples:  # wall seconds of the call: the runner times judge metrics only
            started = time.perf_counter()
            evaluate([sample], [name], judge=judge)
            seconds.append(time.perf_counter() - started)
        figures[name] = statistics.fmean(seconds)
    base = figures["faithfulness"]
    print(f"cost on {path.name} ({len(samples)} samples, each metric alone): " + ", ".join(f"{n} {s:.2f} s/sample ({s / base:.2f}x)" for n, s in figures.items()))
    return {"seconds_per_sample": figures}


def _calls(results: list[dict[str, Any]], name: str) -> int:
    return sum(row.get("usage", {}).get(name, {}).get("calls", 0) for row in results)


def calls(judge: Any, path: Path) -> dict[str, Any]:
    """Judge calls: noise_sensitivity beside factual_correctness and faithfulness against
    faithfulness + context_recall; answer_correctness beside factual_correctness, and its
    embedding calls."""
    from localeval import evaluate
    from localeval.models import embedding

    samples = read(path)
    base = evaluate(samples, ["faithfulness", "context_recall"], judge=judge).results
    reference = _calls(base, "faithfulness") + _calls(base, "context_recall")
    shared = evaluate(samples, ["factual_correctness", "faithfulness", "noise_sensitivity"], judge=judge).results
    alone = evaluate(samples, ["noise_sensitivity"], judge=judge).results
    own, by_itself = _calls(shared, "noise_sensitivity"), _calls(alone, "noise_sensitivity")
    print(f"judge calls on {path.name}: faithfulness + context_recall {reference}; noise_sensitivity's own beside factual_correctness and faithfulness {own} "
          f"({own / reference:.2f}x, target <= 1.3x); alone {by_itself} ({by_itself / reference:.2f}x)")
    embedder = embedding.load_embedder()
    forwards: list[int] = []
    original = embedder.embed_groups

    def counted(groups: Any) -> Any:
        forwards.append(sum(len(texts) for texts in groups))
        return original(groups)

    embedder.embed_groups = counted  # type: ignore[method-assign]
    try:
        both = evaluate(samples, ["factual_correctness", "answer_correctness"], judge=judge).results
    finally:
        embedder.embed_groups = original  # type: ignore[method-assign]
    extra = _calls(both, "answer_correctness")
    print(f"answer_correctness beside factual_correctness: {extra} judge calls of its own (target 0); {len(forwards)} embedding calls of {forwards} texts "
          f"for {len(samples)} samples (target <= 2 forwards per sample)")
    return {"faithfulness_context_recall": reference, "noise_sensitivity_shared": own, "noise_sensitivity_alone": by_itself,
            "answer_correctness_own_calls": extra, "embedding_calls": forwards}


def throughput(count: int, threads: int, path: Path) -> dict[str, Any]:
    """semantic_similarity on `count` pairs of the cases' and the example's texts, in the runner's batches."""
    from localeval import evaluate

    texts = [row[key] for row in read(path) + read(EXAMPLE) for key in ("response", "reference") if row.get(key)]
    pairs = [{"response": texts[i % len(texts)], "reference": texts[(i * 7 + 3) % len(texts)]} for i in range(count)]
    evaluate(pairs[:8], ["semantic_similarity"])  # warm-up: the model loads once
    started, cpu = time.perf_counter(), time.process_time()
    run = evaluate(pairs, ["semantic_similarity"])
    seconds, cpu_seconds = time.perf_counter() - started, time.process_time() - cpu
    rate = count / seconds
    # On a shared machine the wall clock measures the neighbours too: the process's CPU seconds over
    # `threads` cores is what the same work takes on that many idle cores (numpy's threads in parallel).
    idle_rate = count / (cpu_seconds / threads)
    print(f"semantic_similarity: {count} samples in {seconds:.2f} s wall, {rate:.0f} samples/s with {threads} encoder threads; "
          f"{cpu_seconds:.2f} CPU s: {idle_rate:.0f} samples/s on {threads} idle cores (target >= 200/s); load average {os.getloadavg()[0]:.1f}; "
          f"mean {run.summary['metrics']['semantic_similarity']['mean']:.3f}")
    bound = arithmetic_bound(pairs, threads)
    return {"samples": count, "seconds": seconds, "cpu_seconds": cpu_seconds, "samples_per_second": rate, "idle_cores_samples_per_second": idle_rate, **bound}


def arithmetic_bound(pairs: list[dict[str, str]], threads: int) -> dict[str, float]:
    """The most pairs a second float32 numpy could embed here: the encoder's matrix products per
    pair (MiniLM's six layers: 4 x 384^2 + 2 x 384 x 1536 weights, 2 FLOPs each, per token) over
    one core's measured rate on a product of the shape a batch multiplies, times `threads`."""
    import numpy as np

    from localeval.models.embedding import load_embedder

    embedder = load_embedder()
    tokens = statistics.fmean(len(embedder.tokens(pair["response"])) + len(embedder.tokens(pair["reference"])) for pair in pairs)
    flops_per_pair = tokens * 6 * 2 * (4 * 384 * 384 + 2 * 384 * 1536)
    rng = np.random.default_rng(0)
    left, right = rng.standard_normal((544, 384), dtype=np.float32), rng.standard_normal((1536, 384), dtype=np.float32)
    left @ right.T
    rounds, cpu = 50, time.process_time()
    for _ in range(rounds):
        left @ right.T
    gflops = 2 * 544 * 384 * 1536 * rounds / (time.process_time() - cpu) / 1e9
    bound = gflops * 1e9 * threads / flops_per_pair
    print(f"arithmetic bound: {tokens:.1f} tokens and {flops_per_pair / 1e9:.2f} GFLOP a pair; one core multiplies at {gflops:.0f} GFLOP/s "
          f"(CPU time); {threads} cores top out near {bound:.0f} pairs/s")
    return {"tokens_per_pair": tokens, "gflop_per_pair": flops_per_pair / 1e9, "core_gflops": gflops, "pairs_per_second_bound": bound}


def main() -> int:
    args = arguments()
    # As the localeval command runs numpy (localeval.entry, localeval.verifier.batches): BLAS on one
    # thread, the encoder's batches on --threads threads of its own. Set before numpy loads.
    for variable in ("OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ.setdefault(variable, "1")
    os.environ.setdefault("OMP_NUM_THREADS", str(args.threads))
    parts = args.only or list(PARTS)
    figures: dict[str, Any] = {}
    if "throughput" in parts:
        figures["throughput"] = throughput(args.samples, args.threads, args.cases)
    if any(part in parts for part in ("order", "cost", "calls")):
        from localeval import load_judge

        # No verdict cache: the parts time and count the judge's own work, which answers kept from an
        # earlier run would hide.
        with load_judge(args.model, threads=args.threads, n_ctx=args.n_ctx, cache=False) as judge:
            print(f"judge: {judge.describe().get('model')}, {args.threads} threads", flush=True)
            if "order" in parts:
                figures["order"] = order(judge, args.cases, args.metric)
            if "calls" in parts:
                figures["calls"] = calls(judge, args.example)
            if "cost" in parts:
                figures["cost"] = cost(judge, args.example)
    if args.json:
        args.json.write_text(json.dumps(figures, indent=2, default=str) + "\n")
    met = not figures.get("order", {}).get("failures") and figures.get("throughput", {}).get("idle_cores_samples_per_second", 200) >= 200
    calls_ = figures.get("calls")
    if calls_:
        met = met and calls_["noise_sensitivity_shared"] <= 1.3 * calls_["faithfulness_context_recall"] and calls_["answer_correctness_own_calls"] == 0
    return 0 if met else 1


if __name__ == "__main__":
    sys.exit(main())
