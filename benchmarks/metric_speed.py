"""Seconds per sample of every model metric, each run alone, per grader, on one set of rows.

The README's "s / sample" column needs one yardstick: figures timed by each accuracy benchmark
came from different rows, thread counts and machine loads, and could not be set side by side.
This times every metric that reads a model on the same rows, the same way:

- rows: HotpotQA dev questions (shared/data relevance_dev.jsonl, the reserved evaluation ids left
  out) as compare_regressions.py's base pipeline builds them: four retrieved paragraphs, the
  reference and the response the human-annotated supporting sentences (`--example` times the
  README's bundled example instead);
- each metric alone (nothing shared between metrics, as a run of that metric alone), the judge's
  verdict cache off, the judge on --threads threads, BLAS on one thread and the encoder's batches
  on --threads threads of their own (as the localeval command runs them);
- one untimed sample first per metric and grader (the judge's fixed prefix and the embedding model
  load once per run, not per sample), then the wall seconds of `--rows` samples scored together,
  divided by their number;
- graders: judge (the default), verifier and stacked, for the metrics whose `grader` option names
  them; a metric without one is timed once (with the judge where it reads one).

Nothing here reads a verdict: the figures are speed only. Run it on an idle machine.

    python benchmarks/metric_speed.py --rows 4 --threads 2
    python benchmarks/metric_speed.py --example --graders verifier
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

GRADERS = ("judge", "verifier", "stacked")
MODEL_METRICS = (
    "context_relevance", "context_recall", "faithfulness", "context_precision", "factual_correctness", "answer_relevancy",
    "semantic_similarity", "answer_correctness", "context_entity_recall", "noise_sensitivity",
)
EXAMPLE = HERE.parent / "examples" / "rag_samples.jsonl"


def hotpotqa_samples(count: int) -> list[dict[str, Any]]:
    """`count` samples of compare_regressions.py's base pipeline (four paragraphs each)."""
    from compare_regressions import dev_rows, pipeline

    rows = dev_rows(max(count * 3, 20))[:count]
    return [pipeline(row, rows, index, None)[0] for index, row in enumerate(rows)]


def takes_grader(name: str) -> bool:
    """Whether the metric's options name a grader (the judge metrics built on the statement engine)."""
    from localeval.metrics import REGISTRY

    return "grader" in REGISTRY[name].Params.model_fields


def seconds_per_sample(name: str, grader: str | None, samples: Sequence[dict[str, Any]], warm_up: dict[str, Any], judge: Any) -> tuple[float, int]:
    """Wall seconds per sample of `name` alone under `grader` (None: a metric without one), after
    one untimed sample, and how many samples ended in an error (a figure over errors would flatter
    the metric)."""
    from localeval import create_metric
    from localeval.run.runner import score

    metric = create_metric(name, {} if grader is None else {"grader": grader})
    needs_judge = metric.uses_judge()
    list(score([warm_up], [metric], judge=judge if needs_judge else None))
    started = time.perf_counter()
    rows = list(score(list(samples), [metric], judge=judge if needs_judge else None))
    elapsed = time.perf_counter() - started
    return elapsed / len(samples), sum(1 for row in rows if row.errors)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=4, help="samples timed per metric and grader (one more is the untimed warm-up)")
    parser.add_argument("--example", action="store_true", help="time the README's bundled example (its first sample is the warm-up) instead of HotpotQA rows")
    parser.add_argument("--threads", type=int, default=2, help="the judge's threads and the encoder's batch threads")
    parser.add_argument("--graders", nargs="+", choices=GRADERS, default=list(GRADERS))
    parser.add_argument("--metrics", nargs="+", choices=MODEL_METRICS, default=list(MODEL_METRICS))
    parser.add_argument("--json", type=Path, help="also write the figures here")
    args = parser.parse_args()
    for variable in ("OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):  # before numpy loads, as localeval.entry does
        os.environ.setdefault(variable, "1")
    os.environ.setdefault("OMP_NUM_THREADS", str(args.threads))
    from localeval import load_judge

    if args.example:
        samples = [json.loads(line) for line in EXAMPLE.read_text(encoding="utf-8").splitlines() if line.strip()]
        warm_up, timed, rows = samples[0], samples, f"the bundled example ({len(samples)} samples)"
    else:
        samples = hotpotqa_samples(args.rows + 1)
        warm_up, timed, rows = samples[-1], samples[:-1], f"{len(samples) - 1} HotpotQA dev questions, four paragraphs each"
    figures: dict[str, dict[str, float]] = {}
    with load_judge(None, threads=args.threads, cache=False) as judge:
        print(f"judge {judge.describe().get('model')}, {args.threads} threads; {rows}; each metric alone, no verdict cache\n", flush=True)
        print("| metric | grader | s / sample | errors |\n|---|---|---|---|", flush=True)
        for name in args.metrics:
            graders: list[str | None] = list(args.graders) if takes_grader(name) else [None]
            for grader in graders:
                seconds, errors = seconds_per_sample(name, grader, timed, warm_up, judge)
                figures.setdefault(name, {})[grader or "-"] = seconds
                print(f"| {name} | {grader or '-'} | {seconds:.2f} | {errors} |", flush=True)
    if args.json:
        args.json.write_text(json.dumps({"rows": rows, "threads": args.threads, "seconds_per_sample": figures}, indent=2) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
