"""How close the judge runs to the model's own speed bound, in one run, one model, one thread count.

Measures, with the default judge (or --model):
1. the model's raw prefill rate (tokens/s, a fresh 1,400-token prompt) and generation rate;
2. localeval's end-to-end seconds per sample for context_relevance (HotpotQA) and
   context_recall (QAGS) on ../shared/data samples, through the normal metric code;
3. the bound per sample: unique prompt tokens / prefill rate + answer tokens / generation
   rate, where unique prompt tokens are what an ideal prefix cache must still evaluate
   (the first call's prompt, then for each later call only what differs from the previous
   prompt), and the ratio end-to-end / bound;
4. cost against context length (1, 5, 10 retrieved contexts).

With --sweep, only the raw rates, for each thread count listed (which is fastest on this machine).

    python benchmarks/judge_speed.py --limit 5
    python benchmarks/judge_speed.py --sweep 1,2,3,4
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import time
from pathlib import Path
from typing import Any

from localeval import load_judge
from localeval.data.samples import Sample
from localeval.judge import Usage
from localeval.judge.llama import LlamaJudge
from localeval.metrics import create_metric

DATA = Path(__file__).resolve().parents[2] / "shared" / "data"


class Tracer:
    """Wraps the judge to record each call's prompt tokens, so the ideal cache cost can be computed."""

    def __init__(self, judge: LlamaJudge) -> None:
        self.judge = judge
        self.previous: list[int] = []
        self.unique = 0
        self.completion = 0
        self.evaluated = 0
        self.prompt = 0

    def __getattr__(self, name: str) -> Any:
        return getattr(self.judge, name)

    def ask(self, messages, schema, max_tokens=512):  # type: ignore[no-untyped-def]
        answer, usage = self.judge.ask(messages, schema, max_tokens)
        return answer, self._record(usage)

    def choose(self, messages, prefix, options):  # type: ignore[no-untyped-def]
        probabilities, usage = self.judge.choose(messages, prefix, options)
        return probabilities, self._record(usage)

    def write_string(self, messages, prefix, max_chars):  # type: ignore[no-untyped-def]
        text, usage = self.judge.write_string(messages, prefix, max_chars)
        return text, self._record(usage)

    def _record(self, usage: Usage) -> Usage:
        """Count what an ideal cache would evaluate: the prompt minus its prefix shared with the previous prompt."""
        tokens = list(self.judge._runtime.cached()[: usage.prompt_tokens])
        shared = 0
        for a, b in zip(tokens, self.previous):
            if a != b:
                break
            shared += 1
        self.unique += len(tokens) - shared
        self.previous = tokens
        self.completion += usage.completion_tokens
        self.evaluated += usage.prompt_evaluated
        self.prompt += usage.prompt_tokens
        return usage

    def reset(self) -> None:
        self.unique = self.completion = self.evaluated = self.prompt = 0


def raw_rates(judge: LlamaJudge, prompt_tokens: int = 1400, generate: int = 64) -> tuple[float, float]:
    llm = judge._runtime._llm  # the raw llama.cpp model: no chat template, no prefix reuse
    text = " ".join(f"word{i % 97}" for i in range(prompt_tokens))
    tokens = llm.tokenize(text.encode())[:prompt_tokens]
    llm.reset()
    started = time.perf_counter()
    llm.eval(tokens)
    prefill = len(tokens) / (time.perf_counter() - started)
    started = time.perf_counter()
    for _ in range(generate):
        token = llm.sample(temp=0.0)
        llm.eval([token])
    generation = generate / (time.perf_counter() - started)
    llm.reset()
    return prefill, generation


def run_metric(tracer: Tracer, metric_name: str, samples: list[Sample], prefill: float, generation: float) -> dict[str, Any]:
    metric = create_metric(metric_name)
    times, bounds = [], []
    tracer.reset()
    for sample in samples:
        before_unique, before_completion = tracer.unique, tracer.completion
        started = time.perf_counter()
        metric.score_batch([sample], tracer)  # type: ignore[arg-type]
        times.append(time.perf_counter() - started)
        bounds.append((tracer.unique - before_unique) / prefill + (tracer.completion - before_completion) / generation)
    return {
        "samples": len(samples),
        "seconds_per_sample": statistics.fmean(times),
        "bound_per_sample": statistics.fmean(bounds),
        "ratio": sum(times) / sum(bounds),
        "samples_per_s": len(samples) / sum(times),
        "prompt_tokens": tracer.prompt,
        "prompt_evaluated": tracer.evaluated,
        "unique_prompt_tokens": tracer.unique,
        "completion_tokens": tracer.completion,
    }


def read(name: str, limit: int) -> list[dict[str, Any]]:
    return [json.loads(line) for line in open(DATA / name, encoding="utf-8")][:limit]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--limit", type=int, default=5, help="samples per metric")
    parser.add_argument("--model")
    parser.add_argument("--threads", type=int)
    parser.add_argument("--n-ctx", type=int, default=4096)
    parser.add_argument("--sweep", help="comma-separated thread counts: print the raw rates for each, nothing else")
    args = parser.parse_args()
    if args.sweep:
        print(f"{os.cpu_count()} CPUs available")
        for threads in (int(n) for n in args.sweep.split(",")):
            with load_judge(args.model, n_ctx=args.n_ctx, threads=threads, cache=False) as judge:
                assert isinstance(judge, LlamaJudge)
                prefill, generation = raw_rates(judge)
                print(f"threads {threads}: prefill {prefill:.1f} tokens/s, generation {generation:.1f} tokens/s", flush=True)
        return
    judge = load_judge(args.model, n_ctx=args.n_ctx, threads=args.threads, cache=False)  # speed is measured: no verdict cache
    assert isinstance(judge, LlamaJudge)
    info = judge.describe()
    print(f"judge {info['model']} ({info['file']}), threads {info['n_threads']}, n_ctx {info['n_ctx']}")
    prefill, generation = raw_rates(judge)
    print(f"raw model rates: prefill {prefill:.1f} tokens/s, generation {generation:.1f} tokens/s")
    tracer = Tracer(judge)
    relevance_rows = read("relevance_dev.jsonl", args.limit)
    recall_rows = read("recall_dev.jsonl", args.limit)
    relevance = [Sample(user_input=r["user_input"], retrieved_contexts=r["retrieved_contexts"]) for r in relevance_rows]
    recall = [Sample(user_input=r["user_input"], retrieved_contexts=r["retrieved_contexts"], reference=r["reference"]) for r in recall_rows]
    print(f"\n{'task':<44} {'s/sample':>9} {'bound':>7} {'ratio':>6} {'samples/s':>10} {'prompt tok':>11} {'evaluated':>10} {'unique':>8} {'answer tok':>11}")
    for label, name, samples in [
        ("context_relevance (HotpotQA, 10 paragraphs)", "context_relevance", relevance),
        ("context_recall (QAGS, reference sentences)", "context_recall", recall),
    ] + [
        (f"context_relevance, {k} retrieved context(s)", "context_relevance", [Sample(user_input=s.user_input, retrieved_contexts=(s.retrieved_contexts or [])[:k]) for s in relevance])
        for k in (1, 5, 10)
    ]:
        r = run_metric(tracer, name, samples, prefill, generation)
        print(f"{label:<44} {r['seconds_per_sample']:9.2f} {r['bound_per_sample']:7.2f} {r['ratio']:6.2f} {r['samples_per_s']:10.3f} "
              f"{r['prompt_tokens']:11d} {r['prompt_evaluated']:10d} {r['unique_prompt_tokens']:8d} {r['completion_tokens']:11d}")


if __name__ == "__main__":
    main()
