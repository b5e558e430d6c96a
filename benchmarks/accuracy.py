"""How well the judge agrees with people, on the human-labelled dev sets in ../shared/data.

Runs localeval's own metrics (the same prompts, grammar and scoring code as
`localeval score`) and prints one table:

- context relevance on HotpotQA supporting facts: sentence precision / recall / F1
  of the selected sentences against the gold sentences, macro-averaged, and the
  share of "insufficient information" answers;
- claim attribution on SciFact + WiCE: balanced accuracy, positive-class F1 and
  the confusion matrix, overall and per source;
- context recall on QAGS: statement accuracy and balanced accuracy with the given
  statements, and the Pearson correlation of sample scores with the human share;
- for both verdict tasks, the AUC of the judge's probability of "attributed", the
  threshold used, and the threshold that would maximise their mean balanced accuracy
  on these rows (how the catalog's calibrated thresholds are chosen);
- retrieval: id_context_recall against the file's id_recall (must match on every
  row) and nonllm_context_recall with every string measure.

    python benchmarks/accuracy.py --limit 20            # a quick look
    python benchmarks/accuracy.py --json accuracy.json  # the whole dev split
"""

from __future__ import annotations

import argparse
import json
import math
import statistics
import sys
import time
from pathlib import Path
from typing import Any, Callable, Iterable

from localeval import evaluate, load_judge
from localeval.errors import JudgeError
from localeval.judge import Judge
from localeval.metrics import create_metric
from localeval.metrics.recall import ContextRecall, decision_threshold
from localeval.metrics.string_recall import MEASURES
from localeval.samples import Sample

DATA = Path(__file__).resolve().parents[2] / "shared" / "data"


def read(name: str, limit: int | None, shift: int = 0) -> list[dict[str, Any]]:
    """All rows, or `limit` rows evenly spaced through the file (the files are grouped by
    source, so the first rows alone would leave whole sources out), each moved `shift`
    rows on: a shift smaller than the spacing picks rows disjoint from the unshifted
    choice, to check a threshold on rows it was not chosen on."""
    rows = [json.loads(line) for line in open(DATA / name, encoding="utf-8") if line.strip()]
    if not limit or limit >= len(rows):
        return rows
    return [rows[(i * len(rows) // limit + shift) % len(rows)] for i in range(limit)]


def balanced(pairs: list[tuple[int, int]]) -> dict[str, Any]:
    """Balanced accuracy, accuracy, positive F1 and confusion matrix of (gold, predicted) pairs."""
    tp = sum(1 for g, p in pairs if g == 1 and p == 1)
    tn = sum(1 for g, p in pairs if g == 0 and p == 0)
    fp = sum(1 for g, p in pairs if g == 0 and p == 1)
    fn = sum(1 for g, p in pairs if g == 1 and p == 0)
    tpr = tp / (tp + fn) if tp + fn else float("nan")
    tnr = tn / (tn + fp) if tn + fp else float("nan")
    f1 = 2 * tp / (2 * tp + fp + fn) if tp else 0.0
    return {
        "n": len(pairs),
        "accuracy": (tp + tn) / len(pairs) if pairs else float("nan"),
        "balanced_accuracy": (tpr + tnr) / 2,
        "f1_positive": f1,
        "confusion": {"tp": tp, "fn": fn, "fp": fp, "tn": tn},
    }


def auc(scored: list[tuple[int, float]]) -> float:
    """Area under the ROC curve of (gold, probability) pairs: how well the probability ranks
    supported above unsupported, whatever the threshold (0.5 = chance)."""
    positives = [p for g, p in scored if g == 1]
    negatives = [p for g, p in scored if g == 0]
    if not positives or not negatives:
        return float("nan")
    wins = sum((p > n) + 0.5 * (p == n) for p in positives for n in negatives)
    return wins / (len(positives) * len(negatives))


def best_threshold(tasks: list[list[tuple[int, float]]]) -> tuple[float, float]:
    """The decision threshold that maximises the mean balanced accuracy over `tasks`
    (midpoints between neighbouring probabilities), and that mean."""
    values = sorted({p for task in tasks for _, p in task})
    candidates = [(a + b) / 2 for a, b in zip(values, values[1:])] or [0.5]

    def mean_balanced(threshold: float) -> float:
        return statistics.fmean(balanced([(g, int(p >= threshold)) for g, p in task])["balanced_accuracy"] for task in tasks)

    threshold = max(candidates, key=mean_balanced)
    return round(threshold, 3), mean_balanced(threshold)


def pearson(xs: list[float], ys: list[float]) -> float:
    if len(xs) < 2 or statistics.pstdev(xs) == 0 or statistics.pstdev(ys) == 0:
        return float("nan")
    return statistics.correlation(xs, ys)


def timed(run: Callable[[], Any]) -> tuple[Any, float]:
    started = time.perf_counter()
    result = run()
    return result, time.perf_counter() - started


def same_sentence(a: str, b: str) -> bool:
    """pysbd and HotpotQA split a few sentences differently; containment counts as the same sentence."""
    a, b = a.strip(), b.strip()
    return a == b or (len(a) > 20 and a in b) or (len(b) > 20 and b in a)


def relevance_task(judge: Judge, limit: int | None, mode: str, shift: int = 0) -> dict[str, Any]:
    rows = read("relevance_dev.jsonl", limit, shift)
    metric = create_metric("context_relevance", {"mode": mode})
    samples = [Sample(id=r["id"], user_input=r["user_input"], retrieved_contexts=r["retrieved_contexts"]) for r in rows]
    run, seconds = timed(lambda: evaluate(samples, [metric], judge=judge))
    precisions, recalls, f1s, empty, errors = [], [], [], 0, 0
    for row, result in zip(rows, run.results):
        if "context_relevance" in result["errors"]:
            errors += 1
            continue
        selected = result["details"]["context_relevance"]["selected_sentences"]
        gold = row["gold_sentences"]
        empty += not selected
        hits = sum(1 for s in selected if any(same_sentence(s, g) for g in gold))
        found = sum(1 for g in gold if any(same_sentence(s, g) for s in selected))
        p = hits / len(selected) if selected else 0.0
        r = found / len(gold)
        precisions.append(p)
        recalls.append(r)
        f1s.append(2 * p * r / (p + r) if p + r else 0.0)
    return {
        "n": len(rows),
        "precision": statistics.fmean(precisions),
        "recall": statistics.fmean(recalls),
        "f1": statistics.fmean(f1s),
        "insufficient_share": empty / len(rows),
        "unparsable": errors,
        "seconds": seconds,
        "samples_per_s": len(rows) / seconds,
    }


def attribution_task(judge: Judge, limit: int | None, options: dict[str, str], shift: int = 0) -> dict[str, Any]:
    rows = read("attribution_dev.jsonl", limit, shift)
    metric: ContextRecall = create_metric("context_recall", options)  # type: ignore[assignment]
    pairs: dict[str, list[tuple[int, int]]] = {"all": []}
    scored: list[tuple[int, float]] = []
    errors = 0
    started = time.perf_counter()
    for number, row in enumerate(rows, start=1):
        question = f"A claim from the Wikipedia article '{row['wiki_title']}'." if row.get("wiki_title") else "Check the claim."
        sample = Sample(user_input=question, retrieved_contexts=[row["context"]])
        try:
            score = metric.score_statements(sample, [row["claim"]], judge)
        except JudgeError as error:
            errors += 1
            print(f"{row['id']}: {error}", file=sys.stderr)
            continue
        verdict = score.details["statements"][0]
        for key in ("all", row["source"]):
            pairs.setdefault(key, []).append((row["label"], verdict["attributed"]))
        scored.append((row["label"], verdict["probability"]))
        progress("attribution", number, len(rows), started)
    seconds = time.perf_counter() - started
    out: dict[str, Any] = {key: balanced(value) for key, value in pairs.items()}
    out["all"].update({"auc": auc(scored), "unparsable": errors, "seconds": seconds, "samples_per_s": len(rows) / seconds})
    out["scored"] = scored
    return out


def recall_task(judge: Judge, limit: int | None, options: dict[str, str], shift: int = 0) -> dict[str, Any]:
    rows = read("recall_dev.jsonl", limit, shift)
    metric: ContextRecall = create_metric("context_recall", options)  # type: ignore[assignment]
    pairs: list[tuple[int, int]] = []
    scored: list[tuple[int, float]] = []
    scores, human = [], []
    errors = 0
    started = time.perf_counter()
    for number, row in enumerate(rows, start=1):
        sample = Sample(user_input=row["user_input"], retrieved_contexts=row["retrieved_contexts"])
        try:
            score = metric.score_statements(sample, row["statements"], judge)
        except JudgeError as error:
            errors += 1
            print(f"{row['id']}: {error}", file=sys.stderr)
            continue
        verdicts = score.details["statements"]
        pairs.extend(zip(row["statement_labels"], [v["attributed"] for v in verdicts]))
        scored.extend(zip(row["statement_labels"], [v["probability"] for v in verdicts]))
        scores.append(score.value)
        human.append(sum(row["statement_labels"]) / len(row["statement_labels"]))
        progress("recall", number, len(rows), started)
    seconds = time.perf_counter() - started
    out = balanced(pairs)
    out.update(
        {"auc": auc(scored), "pearson_sample_score": pearson(scores, human), "unparsable": errors, "seconds": seconds, "samples_per_s": len(rows) / seconds, "scored": scored}
    )
    return out


def progress(task: str, done: int, total: int, started: float) -> None:
    print(f"{task}: {done}/{total} ({time.perf_counter() - started:.0f} s)", file=sys.stderr, flush=True)


def retrieval_task(limit: int | None) -> dict[str, Any]:
    rows = read("retrieval_dev.jsonl", limit)
    samples = [Sample(**{k: r[k] for k in ("retrieved_contexts", "reference_contexts", "retrieved_context_ids", "reference_context_ids")}) for r in rows]
    run, seconds = timed(lambda: evaluate(samples, ["id_context_recall"]))
    mismatches = sum(1 for r, res in zip(rows, run.results) if res["scores"]["id_context_recall"] != r["id_recall"])
    out: dict[str, Any] = {"n": len(rows), "id_recall_mismatches": mismatches, "id_seconds": seconds, "mean_id_recall": run.summary["metrics"]["id_context_recall"]["mean"]}
    for measure in MEASURES:
        run, seconds = timed(lambda: evaluate(samples, [create_metric("nonllm_context_recall", {"measure": measure})]))
        out[f"nonllm_{measure}"] = {"mean": run.summary["metrics"]["nonllm_context_recall"]["mean"], "seconds": seconds}
    return out


def fmt(value: Any) -> str:
    return "-" if value is None or (isinstance(value, float) and math.isnan(value)) else f"{value:.3f}" if isinstance(value, float) else str(value)


def print_table(report: dict[str, Any]) -> None:
    judge = report["judge"]
    print(f"recall options: {report['recall_options'] or 'defaults'}")
    print(f"judge: {judge.get('model')} ({judge.get('file')}, sha256 {judge.get('sha256')}), n_ctx {judge.get('n_ctx')}, threads {judge.get('n_threads')}, seed {judge.get('seed')}")
    if "relevance" in report:
        r = report["relevance"]
        print(f"\ncontext relevance (HotpotQA, n={r['n']}): precision {fmt(r['precision'])}  recall {fmt(r['recall'])}  F1 {fmt(r['f1'])}  "
              f"insufficient {fmt(r['insufficient_share'])}  unparsable {r['unparsable']}  {fmt(r['samples_per_s'])} samples/s  {r['seconds']:.0f} s")
    if "attribution" in report:
        print("\nclaim attribution (SciFact + WiCE):")
        for key, a in report["attribution"].items():
            c = a["confusion"]
            print(f"  {key:<8} n={a['n']:<4} balanced acc {fmt(a['balanced_accuracy'])}  F1+ {fmt(a['f1_positive'])}  acc {fmt(a['accuracy'])}  "
                  f"tp {c['tp']} fn {c['fn']} fp {c['fp']} tn {c['tn']}")
        a = report["attribution"]["all"]
        print(f"  AUC {fmt(a['auc'])}  unparsable {a['unparsable']}  {fmt(a['samples_per_s'])} samples/s  {a['seconds']:.0f} s")
    if "recall" in report:
        r = report["recall"]
        c = r["confusion"]
        print(f"\ncontext recall (QAGS statements, n={r['n']}): balanced acc {fmt(r['balanced_accuracy'])}  acc {fmt(r['accuracy'])}  AUC {fmt(r['auc'])}  "
              f"tp {c['tp']} fn {c['fn']} fp {c['fp']} tn {c['tn']}\n  pearson(sample score, human share) {fmt(r['pearson_sample_score'])}  "
              f"unparsable {r['unparsable']}  {fmt(r['samples_per_s'])} samples/s  {r['seconds']:.0f} s")
    if "calibration" in report:
        c = report["calibration"]
        print(f"\nthreshold used for 'attributed': {c['threshold_used']}; the one that maximises the mean balanced accuracy "
              f"of {' and '.join(c['tasks'])} on these rows: {c['best_threshold']} (mean balanced acc {fmt(c['best_mean_balanced_accuracy'])})")
    if "retrieval" in report:
        r = report["retrieval"]
        print(f"\nretrieval (SciFact BM25 top-5, n={r['n']}): id_context_recall mismatches vs id_recall: {r['id_recall_mismatches']}  mean {fmt(r['mean_id_recall'])}")
        for measure in MEASURES:
            m = r[f"nonllm_{measure}"]
            print(f"  nonllm_context_recall {measure:<16} mean {fmt(m['mean'])}  {m['seconds']:.2f} s")


def main(argv: Iterable[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--limit", type=int, help="rows per task (default: the whole dev split)")
    parser.add_argument("--tasks", default="relevance,attribution,recall,retrieval")
    parser.add_argument("--model", help="GGUF path or catalog name (default: the default judge)")
    parser.add_argument("--n-ctx", type=int, default=4096)
    parser.add_argument("--threads", type=int)
    parser.add_argument("--relevance-mode", default="select", choices=["select", "classify"])
    parser.add_argument("--recall-option", action="append", default=[], metavar="KEY=VALUE", help="context_recall option for the attribution and recall tasks")
    parser.add_argument("--json", type=Path, help="also write the report here")
    parser.add_argument("--shift", type=int, default=0, help="with --limit: take the rows this many rows after the usual ones")
    args = parser.parse_args(argv)
    tasks = args.tasks.split(",")
    judge = load_judge(args.model, n_ctx=args.n_ctx, n_threads=args.threads) if set(tasks) - {"retrieval"} else None
    recall_options = dict(option.split("=", 1) for option in args.recall_option)
    report: dict[str, Any] = {"judge": judge.describe() if judge else {}, "limit": args.limit, "shift": args.shift, "recall_options": recall_options}
    runners = {
        "relevance": lambda: relevance_task(judge, args.limit, args.relevance_mode, args.shift),
        "attribution": lambda: attribution_task(judge, args.limit, recall_options, args.shift),
        "recall": lambda: recall_task(judge, args.limit, recall_options, args.shift),
        "retrieval": lambda: retrieval_task(args.limit),
    }
    for task in tasks:
        report[task] = runners[task]()
    scored = {task: report[task].pop("scored") for task in ("attribution", "recall") if task in report}
    if judge is not None and scored:
        threshold, mean_balanced = best_threshold(list(scored.values()))
        used = decision_threshold(create_metric("context_recall", recall_options).params, judge)  # type: ignore[arg-type]
        report["calibration"] = {"tasks": list(scored), "threshold_used": used, "best_threshold": threshold, "best_mean_balanced_accuracy": mean_balanced}
    print_table(report)
    if args.json:
        args.json.write_text(json.dumps(report, indent=2, default=str) + "\n")


if __name__ == "__main__":
    main()
