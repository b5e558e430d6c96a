"""faithfulness and context_precision against people's labels, through the metrics as shipped.

- faithfulness: the claims of ../shared/data/attribution_dev.jsonl (SciFact + WiCE) given as
  responses: the claim is the response, its document the one retrieved context, no question.
  A response counts as faithful when the metric scores it 1 (every statement supported); its
  label says whether people found it supported. Rows: `--claims N` of the dev half (the dev rows between those the shipped calibration was fitted on, as
  `benchmarks/accuracy.py --limit attribution=150 --shift 1` reads them). Balanced accuracy per
  source and overall, and the AUC of the least supported statement's probability.
- factual_correctness (`--factual N`): the same dev claims as responses, each with its
  document as the reference, in `precision` mode (the share of the response's statements the
  reference supports: what the label says). Balanced accuracy and AUC as faithfulness'.
- context_precision: HotpotQA questions of ../shared/data/relevance_dev.jsonl with their ten
  paragraphs in the file's order and the gold answer as the reference; the useful paragraphs are
  those holding a supporting-fact sentence (`gold_sentences`). The metric's average precision
  against the same formula on the gold labels (mean absolute difference, and how often they are
  equal), paragraph-level AUC of P(useful) and balanced accuracy of the verdicts, and the mean
  average precision of the paragraphs ranked by P(useful). Rows: `--questions N` of the
  dev half (the odd-numbered rows); no usefulness calibration was fitted on any row.
- Cost: seconds (judge seconds, as measured when each answer was first asked) and judge prompt
  tokens per sample; with `--verifier`, wall seconds (no judge).

Judge answers are cached per prompt in benchmarks/.cache/judge/<model file>/answers.jsonl (the
cache benchmarks/accuracy.py keeps, judge_cache.py), so a rerun replays them without a model.

    python benchmarks/faithfulness_accuracy.py --claims 60 --questions 20
    python benchmarks/faithfulness_accuracy.py --claims 60 --questions 20 --verifier
    python benchmarks/faithfulness_accuracy.py --claims 0 --questions 0 --fit-usefulness 8   # the catalog's usefulness table
    python benchmarks/faithfulness_accuracy.py --claims 0 --questions 0 --factual 60 [--verifier]
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from judge_cache import CACHE, CachedJudge
from labelled_rows import DATA as DEV_DATA

from localeval.calibration.fitting import auc, balanced_accuracy, balancing_weights, fit_logistic
from localeval.data.samples import Sample
from localeval.judge import Judge, load_judge
from localeval.metrics import create_metric
from localeval.metrics.ranking import average_precision
from localeval.models.store import CATALOG, DEFAULT_MODEL, resolve_model

DATA = [DEV_DATA]  # --data replaces it
ORDER_SEED = 44


def read(name: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in open(DATA[0] / name, encoding="utf-8") if line.strip()]


def fit_half(rows: Sequence[dict[str, Any]], count: int) -> list[dict[str, Any]]:
    """`count` of the even-numbered rows (never scored by this benchmark's figures), in a fixed shuffled order."""
    half = [rows[i * len(rows) // (len(rows) // 2)] for i in range(len(rows) // 2)]
    order = random.Random(ORDER_SEED).sample(range(len(half)), len(half))
    return [half[i] for i in order[:count]]


def dev_rows(rows: Sequence[dict[str, Any]], count: int) -> list[dict[str, Any]]:
    """`count` of the odd-numbered rows (the dev rows between those accuracy.py's fits read: its
    `read(name, len/2, shift=1)`), in a fixed shuffled order (seed ORDER_SEED), so a smaller
    `count` takes a prefix of a larger one's rows and a cut-short run's cached answers serve it."""
    half = [rows[i * len(rows) // (len(rows) // 2) + 1] for i in range(len(rows) // 2)]
    order = random.Random(ORDER_SEED).sample(range(len(half)), len(half))
    return [half[i] for i in order[:count]]


def _cost(score_usage: dict[str, int] | None, seconds: float) -> dict[str, float]:
    usage = score_usage or {}
    return {"seconds": seconds, "prompt_tokens": usage.get("prompt_tokens", 0), "prompt_evaluated": usage.get("prompt_evaluated", 0), "calls": usage.get("calls", 0)}


def _seconds(judge: Judge | None, before: float, started: float) -> float:
    return judge.seconds - before if isinstance(judge, CachedJudge) else time.perf_counter() - started


def faithfulness_rows(judge: Judge | None, count: int, verifier: bool) -> list[dict[str, Any]]:
    metric = create_metric("faithfulness", {"verifier": verifier})
    rows = dev_rows(read("attribution_dev.jsonl"), count)
    records = []
    for number, row in enumerate(rows, start=1):
        sample = Sample(user_input="", retrieved_contexts=[row["context"]], response=row["claim"])
        before, started = getattr(judge, "seconds", 0.0), time.perf_counter()
        score = metric.score_batch([sample], judge)[0]
        weakest = min((v["probability"] for v in score.details.get("statements", [])), default=float("nan"))  # the least supported statement's P
        records.append({"source": row["source"], "label": row["label"], "score": score.value, "weakest": weakest, "error": score.error, **_cost(score.usage, _seconds(judge, before, started))})
        print(f"faithfulness: {number}/{len(rows)}", file=sys.stderr, flush=True)
    return records


def factual_rows(judge: Judge | None, count: int, verifier: bool) -> list[dict[str, Any]]:
    """factual_correctness (precision) on the dev claims: the claim is the response, its document the reference."""
    metric = create_metric("factual_correctness", {"verifier": verifier, "mode": "precision"})
    rows = dev_rows(read("attribution_dev.jsonl"), count)
    records = []
    for number, row in enumerate(rows, start=1):
        sample = Sample(response=row["claim"], reference=row["context"])
        before, started = getattr(judge, "seconds", 0.0), time.perf_counter()
        score = metric.score_batch([sample], judge)[0]
        weakest = min((v["probability"] for v in score.details.get("response_statements", [])), default=float("nan"))
        records.append({"source": row["source"], "label": row["label"], "score": score.value, "weakest": weakest, "error": score.error, **_cost(score.usage, _seconds(judge, before, started))})
        print(f"factual_correctness: {number}/{len(rows)}", file=sys.stderr, flush=True)
    return records


def precision_rows(judge: Judge | None, count: int, verifier: bool, rows_of: Any = dev_rows) -> list[dict[str, Any]]:
    metric = create_metric("context_precision", {"verifier": verifier})
    rows = rows_of(read("relevance_dev.jsonl"), count)
    records = []
    for number, row in enumerate(rows, start=1):
        gold = [int(any(sentence in paragraph for sentence in row["gold_sentences"])) for paragraph in row["retrieved_contexts"]]
        sample = Sample(user_input=row["user_input"], retrieved_contexts=row["retrieved_contexts"], reference=row["reference"])
        before, started = getattr(judge, "seconds", 0.0), time.perf_counter()
        score = metric.score_batch([sample], judge)[0]
        contexts = score.details.get("contexts", [])
        records.append({
            "gold": gold, "score": score.value, "error": score.error,
            "useful": [c["useful"] for c in contexts], "probability": [c["probability"] for c in contexts],
            "log_odds": [c.get("judge_log_odds", 0.0) for c in contexts],
            **_cost(score.usage, _seconds(judge, before, started)),
        })
        print(f"context_precision: {number}/{len(rows)}", file=sys.stderr, flush=True)
    return records


def _mean(values: Sequence[float]) -> float:
    return statistics.fmean(values) if values else float("nan")


def faithfulness_report(records: Sequence[dict[str, Any]]) -> dict[str, Any]:
    scored = [r for r in records if r["score"] is not None]
    report: dict[str, Any] = {"rows": len(records), "errors": len(records) - len(scored)}
    for source in ["all", *sorted({r["source"] for r in scored})]:
        rows = [r for r in scored if source == "all" or r["source"] == source]
        labels = [r["label"] for r in rows]
        report[source] = {
            "rows": len(rows),
            "balanced_accuracy": balanced_accuracy(labels, [int(r["score"] >= 1.0) for r in rows]),
            "auc": auc(labels, [r["weakest"] for r in rows]),
        }
    report["cost"] = {key: _mean([r[key] for r in scored]) for key in ("seconds", "prompt_tokens", "prompt_evaluated", "calls")}
    return report


def precision_report(records: Sequence[dict[str, Any]]) -> dict[str, Any]:
    scored = [r for r in records if r["score"] is not None]
    gold_ap = [average_precision([bool(g) for g in r["gold"]]) for r in scored]
    labels = [g for r in scored for g in r["gold"]]
    ranked_ap = []
    for r in scored:
        order = sorted(range(len(r["gold"])), key=lambda i: (-r["probability"][i], i))
        ranked_ap.append(average_precision([bool(r["gold"][i]) for i in order]))
    return {
        "questions": len(records),
        "errors": len(records) - len(scored),
        "mean_score": _mean([r["score"] for r in scored]),
        "mean_gold_score": _mean(gold_ap),
        "mean_abs_difference": _mean([abs(r["score"] - g) for r, g in zip(scored, gold_ap)]),
        "equal_to_gold": _mean([float(abs(r["score"] - g) < 1e-9) for r, g in zip(scored, gold_ap)]),
        "paragraph_auc": auc(labels, [p for r in scored for p in r["probability"]]),
        "paragraph_balanced_accuracy": balanced_accuracy(labels, [u for r in scored for u in r["useful"]]),
        "useful_share": _mean([float(u) for r in scored for u in r["useful"]]),
        "ranking_map": _mean(ranked_ap),
        "cost": {key: _mean([r[key] for r in scored]) for key in ("seconds", "prompt_tokens", "prompt_evaluated", "calls")},
    }


def fit_usefulness(records: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """The usefulness calibration (intercept, weight on the judge's log-odds) fitted on the fit
    half's paragraphs, the two classes weighing the same, as the catalog stores it."""
    rows = [{"judge": value} for r in records for value in r["log_odds"]]
    labels = [g for r in records for g in r["gold"]]
    fit = fit_logistic(rows, labels, balancing_weights(labels, ["usefulness"] * len(labels)), ["judge"])
    predicted = [int(p >= 0.5) for p in fit.probabilities(rows)]
    return {"paragraphs": len(labels), "table": fit.table(), "in_sample_balanced_accuracy": balanced_accuracy(labels, predicted)}


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--claims", type=int, default=60, help="claims of the dev half scored as responses (0: skip faithfulness)")
    parser.add_argument("--factual", type=int, default=0, metavar="N", help="factual_correctness (precision mode) on N claims of the dev half, each with its document as the reference")
    parser.add_argument("--questions", type=int, default=20, help="HotpotQA questions of the dev half (0: skip context_precision)")
    parser.add_argument("--fit-usefulness", type=int, default=0, metavar="N", help="fit context_precision's usefulness calibration on N questions of the other (even-numbered) half and print its table")
    parser.add_argument("--verifier", action="store_true", help="decide with the trained verifier instead of the judge")
    parser.add_argument("--model", default=DEFAULT_MODEL, help="catalog name or GGUF path (default: the default judge)")
    parser.add_argument("--threads", type=int)
    parser.add_argument("--cache", type=Path, help="the judge answer cache (default: benchmarks/.cache/judge/MODEL/answers.jsonl)")
    parser.add_argument("--json", type=Path, help="also write the report here")
    parser.add_argument("--data", type=Path, default=DATA[0], help="the folder holding attribution_dev.jsonl and relevance_dev.jsonl (default: ../shared/data)")
    args = parser.parse_args(argv)
    DATA[0] = args.data
    judge: Judge | None = None
    report: dict[str, Any] = {"decided_by": "verifier" if args.verifier else args.model}
    if not args.verifier:
        path, catalog_name = resolve_model(args.model)
        shipped = CATALOG[catalog_name].calibration if catalog_name else {}
        judge = CachedJudge(args.cache or CACHE / path.name / "answers.jsonl", lambda: load_judge(str(path), threads=args.threads, cache=False), shipped)
    if args.claims:
        report["faithfulness"] = faithfulness_report(faithfulness_rows(judge, args.claims, args.verifier))
    if args.factual:
        report["factual_correctness"] = faithfulness_report(factual_rows(judge, args.factual, args.verifier))
    if args.fit_usefulness:
        report["usefulness_fit"] = fit_usefulness(precision_rows(judge, args.fit_usefulness, False, fit_half))
    if args.questions:
        report["context_precision"] = precision_report(precision_rows(judge, args.questions, args.verifier))
    if isinstance(judge, CachedJudge):
        judge.close()
        report["judge_cache_misses"] = judge.misses
    text = json.dumps(report, indent=2, default=float)
    print(text)
    if args.json:
        args.json.write_text(text + "\n")


if __name__ == "__main__":
    main()
