"""answer_relevancy with a real judge: does it rank answers as a person would, and what does it cost?

1. Order: the hand-written cases of tests/data/answer_relevancy_cases.jsonl (per question: a
   direct answer, a partly relevant one, an evasive one, an answer to another question) scored
   by the judge (the default judge unless --model). Target: in every group
   direct > partial > evasive and direct > partial > other_question, and evasive (noncommittal) = 0.
2. Cost: seconds per sample of answer_relevancy beside faithfulness on the README example
   (examples/rag_samples.jsonl), each timed by the runner on the same judge, faithfulness first
   and answer_relevancy second, then the reverse (the judge's prefix cache favours neither).
   Target: answer_relevancy at most 1.5x faithfulness' time per sample.

Both need the judge and the embedding model pulled (`localeval models pull`, `localeval models
pull all-minilm-l6-v2`). On a shared machine run it niced:

    nice -n 10 python benchmarks/answer_relevancy.py --threads 2
    python benchmarks/answer_relevancy.py --only order --model smollm2-135m   # the plumbing, quickly
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
from pathlib import Path
from typing import Any

from judged_cases import add_judge_options, read

ROOT = Path(__file__).resolve().parents[1]
CASES = ROOT / "tests" / "data" / "answer_relevancy_cases.jsonl"
EXAMPLE = ROOT / "examples" / "rag_samples.jsonl"
RANKS = ("direct", "partial", "other_question", "evasive")


def arguments() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter)
    add_judge_options(parser)
    parser.add_argument("--only", choices=("order", "cost"), help="run one part only")
    parser.add_argument("--cases", type=Path, default=CASES, help="hand-written cases (JSON Lines with group and kind)")
    parser.add_argument("--example", type=Path, default=EXAMPLE, help="the samples the cost is measured on")
    parser.add_argument("--json", type=Path, help="also write the figures here")
    return parser.parse_args()


def order(judge: Any, path: Path) -> dict[str, Any]:
    from localeval.run.runner import score

    rows = read(path)
    samples = [{k: v for k, v in row.items() if k not in ("group", "kind")} for row in rows]
    groups: dict[str, dict[str, float]] = {}
    for row, result in zip(rows, score(samples, ["answer_relevancy"], judge=judge)):  # printed as each is scored
        value = result.scores["answer_relevancy"]
        details = result.details.get("answer_relevancy", {})
        usage = result.usage.get("answer_relevancy", {})
        groups.setdefault(row["group"], {})[row["kind"]] = value
        shown = [f"{q['question']} ({q['similarity']:.2f})" for q in details.get("questions", [])]
        print(f"{row['id']:>18}: {value if value is None else round(value, 3)}  noncommittal={details.get('noncommittal')} "
              f"reason={details.get('reason')!r}  questions={shown}  ({result.timing['answer_relevancy']['seconds']:.1f} s, "
              f"{usage.get('completion_tokens')} tokens written){'  error: ' + result.errors['answer_relevancy'] if result.errors else ''}", flush=True)
    failures = []
    for group, scores in groups.items():
        direct, partial, evasive, other = (scores[k] for k in ("direct", "partial", "evasive", "other_question"))
        if not direct > partial > other:
            failures.append(f"{group}: direct {direct:.3f} > partial {partial:.3f} > other {other:.3f} does not hold")
        if not partial > evasive:
            failures.append(f"{group}: partial {partial:.3f} > evasive {evasive:.3f} does not hold")
        if evasive != 0.0:
            failures.append(f"{group}: the evasive answer scores {evasive:.3f}, not 0 (noncommittal)")
    print(f"order: {len(groups) - len({f.split(':')[0] for f in failures})} of {len(groups)} groups in the order a person ranks them")
    for failure in failures:
        print(f"  {failure}")
    return {"groups": groups, "failures": failures}


def cost(judge: Any, path: Path) -> dict[str, Any]:
    from localeval import evaluate

    samples = read(path)
    evaluate(samples[:1], ["faithfulness", "answer_relevancy"], judge=judge)  # warm-up, untimed: the embedding model loads once
    seconds: dict[str, list[float]] = {"faithfulness": [], "answer_relevancy": []}
    for names in (["faithfulness", "answer_relevancy"], ["answer_relevancy", "faithfulness"]):
        for sample in samples:  # one sample at a time, each metric timed by the runner
            result = evaluate([sample], names, judge=judge).results[0]
            for name in names:
                seconds[name].append(result["timing"][name]["seconds"])
    figures = {name: statistics.fmean(values) for name, values in seconds.items()}
    ratio = figures["answer_relevancy"] / figures["faithfulness"]
    print(f"cost on {path.name} ({len(samples)} samples, both orders): faithfulness {figures['faithfulness']:.2f} s/sample, "
          f"answer_relevancy {figures['answer_relevancy']:.2f} s/sample: {ratio:.2f}x (target <= 1.5x)")
    return {"seconds_per_sample": figures, "ratio": ratio}


def main() -> int:
    args = arguments()
    from localeval import load_judge

    figures: dict[str, Any] = {}
    with load_judge(args.model, threads=args.threads, n_ctx=args.n_ctx, cache=False) as judge:  # its cost is measured: no verdict cache
        print(f"judge: {judge.describe().get('model')}, {args.threads} threads", flush=True)
        if args.only in (None, "order"):
            figures["order"] = order(judge, args.cases)
        if args.only in (None, "cost"):
            figures["cost"] = cost(judge, args.example)
    if args.json:
        args.json.write_text(json.dumps(figures, indent=2) + "\n")
    met = not figures.get("order", {}).get("failures") and figures.get("cost", {}).get("ratio", 0.0) <= 1.5
    return 0 if met else 1


if __name__ == "__main__":
    sys.exit(main())
