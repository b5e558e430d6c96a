"""Claim decomposition for statement verdicts (issue 19, item 4): min over a statement's parts.

MiniCheck and AlignScore judge a long claim by its parts: the claim is supported only if
every part is, each part read against its own best chunk (max over chunks). This script
measures that design on the statement sets of benchmarks/accuracy.py, with localeval's
own code: a statement of at least --min-words words is split into parts by the judge
(the prompt `context_recall --option statements=claims` uses, on the statement alone),
each part is judged as a statement of its own (`score_statements`: its best chunk, the
next under the usual rule), and the statement gets features

- parts_judge: the lowest judge log-odds over its parts (the statement's own where it
  was not split), and parts_coverage: the lowest best-sentence coverage over its parts;

then the combinations below are fitted on the four sets at once and cross-validated
exactly as accuracy.py does (10 folds by claim or summary, each set and class weighing
the same). Judge answers are cached with accuracy.py's (same file), so a rerun needs no
model; costs are those measured when each answer was first asked.

    python benchmarks/tried/claim_parts.py --limit attribution=150,recall=40,vitaminc=240,fever=120
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
import accuracy  # noqa: E402
from judge_cache import CachedJudge  # noqa: E402

from localeval.judge import load_judge  # noqa: E402
from localeval.judge.prompts import claims_messages  # noqa: E402
from localeval.metrics.recall import Claims  # noqa: E402
from localeval.models import CATALOG, DEFAULT_MODEL, resolve_model  # noqa: E402

TASKS = ("attribution", "recall", "vitaminc", "fever")
COMBINATIONS = {
    "shipped features (judge, best_coverage)": ["judge", "best_coverage"],
    "+ parts_judge": ["judge", "best_coverage", "parts_judge"],
    "+ parts_judge, parts_coverage": ["judge", "best_coverage", "parts_judge", "parts_coverage"],
    "parts_judge, best_coverage": ["parts_judge", "best_coverage"],
    "parts_judge, parts_coverage": ["parts_judge", "parts_coverage"],
}


def part_records(judge: CachedJudge, task: str, limit: int | None, min_words: int) -> list[dict[str, Any]]:
    """accuracy.statement_rows' records, each with the parts features and the parts' cost."""
    metric = accuracy.recall_metric()
    records: list[dict[str, Any]] = []
    items = accuracy.statement_items(task, limit, 0)
    started = time.perf_counter()
    for number, (row_id, source, sample, statements, labels) in enumerate(items, start=1):
        before_whole = judge.seconds
        whole = metric.score_statements(sample, statements, judge)
        cost = {**(whole.usage or {}), "seconds": judge.seconds - before_whole}  # the shipped read, as accuracy.py records it
        extra = {"calls": 0, "prompt_evaluated": 0, "completion_tokens": 0, "seconds": 0.0, "split": 0, "parts": 0}
        for statement, verdict, label in zip(statements, whole.details["statements"], labels):
            features = dict(verdict["features"])
            parts = [statement]
            if len(statement.split()) >= min_words:
                before = judge.seconds
                answer, usage = judge.ask(claims_messages(sample.user_input or "", statement), Claims)
                parts = [c.strip() for c in answer.claims if c.strip()] or [statement]
                split = metric.score_statements(sample, parts, judge)
                part_features = [v["features"] for v in split.details["statements"]]
                features["parts_judge"] = min(f["judge"] for f in part_features)
                features["parts_coverage"] = min(f["best_coverage"] for f in part_features)
                extra["calls"] += 1 + (split.usage or {}).get("calls", 0)
                extra["prompt_evaluated"] += usage.prompt_evaluated + (split.usage or {}).get("prompt_evaluated", 0)
                extra["completion_tokens"] += usage.completion_tokens
                extra["seconds"] += judge.seconds - before
                extra["split"] += 1
                extra["parts"] += len(parts)
            else:
                features["parts_judge"] = features["judge"]
                features["parts_coverage"] = features["best_coverage"]
            records.append({"group": row_id, "source": source, "label": label, "features": features, "cost": cost, "extra": extra, "statement": statement, "parts": parts})
        accuracy.progress(task, number, len(items), started)
    return records


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--limit", type=accuracy._limits, default={}, help="rows per task: TASK=N,...")
    parser.add_argument("--task", default=",".join(TASKS))
    parser.add_argument("--min-words", type=int, default=15, help="split statements of at least this many words")
    parser.add_argument("--model", default=DEFAULT_MODEL)
    parser.add_argument("--show", type=int, default=0, help="print this many split statements with their parts")
    args = parser.parse_args()
    path, catalog_name = resolve_model(args.model)
    shipped = CATALOG[catalog_name].calibration if catalog_name else {}
    judge = CachedJudge(accuracy.CACHE / path.name / "answers.jsonl", lambda: load_judge(str(path)), shipped)
    tasks = {task: part_records(judge, task, args.limit.get(task), args.min_words) for task in args.task.split(",")}
    judge.close()
    for task, records in tasks.items():
        extras = list({r["group"]: r["extra"] for r in records}.values())
        split = sum(e["split"] for e in extras)
        print(f"{task}: {len(records)} statements, {split} split into {sum(e['parts'] for e in extras) / max(split, 1):.1f} parts on average; "
              f"extra per sample: {statistics.fmean(e['calls'] for e in extras):.2f} calls, {statistics.fmean(e['prompt_evaluated'] for e in extras):.0f} prompt tokens, "
              f"{statistics.fmean(e['completion_tokens'] for e in extras):.0f} generated, {statistics.fmean(e['seconds'] for e in extras):.1f} judge s")
    shown = [r for rows in tasks.values() for r in rows if len(r["parts"]) > 1][: args.show]
    for r in shown:
        print(f"\n[{r['source']} label {r['label']}] {r['statement']}\n  " + "\n  ".join(r["parts"]) + f"\n  judge {r['features']['judge']:.2f} parts_judge {r['features']['parts_judge']:.2f}")
    print(f"\nbalanced accuracy / AUC, cross-validated ({', '.join(tasks)}):")
    for name, chosen in COMBINATIONS.items():
        report = accuracy.attribution_report(tasks, None, chosen)["combination"]
        print(f"  {name:<40} " + "  ".join(f"{task} {report[task]['balanced_accuracy']:.3f} / {report[task]['auc']:.3f}" for task in tasks))


if __name__ == "__main__":
    main()
