"""Two judges of different size on the same statements: does the smaller one's verdict add to the default's? (issue 19)

The catalog's judges were trained apart (1.5B and 0.5B Qwen2.5-Coder), so their mistakes need
not coincide; an ensemble of unequal models often ranks better than the larger alone. Each
judge runs context_recall as `localeval score` would (its own reads: the gate on a Yes and the
30% rule follow its own verdicts), through accuracy.py's judge cache, and the smaller judge's
log-odds on its deciding chunk becomes the feature

- judge_small: the 0.5B judge's Yes/No log-odds

beside the shipped features (judge, best_coverage), fitted on the four statement sets at once
and cross-validated exactly as accuracy.py does. The rows are the same for both judges (same
task, limit and shift), so they are joined in order.

    python benchmarks/tried/second_judge.py --limit attribution=150,recall=40,vitaminc=240,fever=120
    python benchmarks/tried/second_judge.py --relevance --limit relevance=60,squad=80

With --relevance, the same for context_relevance's passage verdict: both judges read the same
paragraphs (chosen by overlap, not by a judge), so the 0.5B's verdict on each becomes the unit
feature judge_passage_small; the script prints each verdict's AUC against HotpotQA's gold
paragraphs and SQuAD's, and the shipped relevance features refitted and cross-validated with
the smaller judge's verdict added, or averaged with the default's, as explore_relevance.py does.

Cost in a run: a second model in memory (491 MB) and every statement read again by it, about
0.4 of the default judge's seconds on 2 cores (prefill 150-185 against 60-70 tokens/s).

Measured 2026-11-25 (this machine; the 0.5B's answers read afresh, the default judge's from the
cache): not shipped. Balanced accuracy / AUC, claims / QAGS / VitaminC / FEVER: shipped features
0.700 / 0.792, 0.767 / 0.849, 0.633 / 0.742, 0.784 / 0.877; + judge_small 0.667 / 0.788, 0.706 /
0.868, 0.650 / 0.740, 0.801 / 0.884. Relevance (--relevance, 60 / 80 rows): passage verdict AUC
at 10 / 3 contexts and SQuAD among three, default 0.722 / 0.770 / 0.849, small 0.644 / 0.664 /
0.591, their mean 0.747 / 0.799 / 0.816; F1 H10 / H3 / H1, S1 / S3: shipped 0.441 / 0.591 /
0.754, 0.769 / 0.747 (mean of the eight shapes 0.490); + judge_passage_small 0.425 / 0.572 /
0.733, 0.756 / 0.712 (0.499, from "insufficient" 0.23 / 0.43 / 0.12); averaged verdict 0.424 /
0.562 / 0.746, 0.769 / 0.722 (0.480).
"""

from __future__ import annotations

import argparse
import copy
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
import accuracy  # noqa: E402
import explore_relevance  # noqa: E402
from judge_cache import CachedJudge  # noqa: E402

from localeval.fitting import UNANSWERABLE_WEIGHT  # noqa: E402
from localeval.judge import load_judge  # noqa: E402
from localeval.metrics import relevance  # noqa: E402
from localeval.models import CATALOG, DEFAULT_MODEL, resolve_model  # noqa: E402

TASKS = ("attribution", "recall", "vitaminc", "fever")
SMALL_MODEL = "qwen2.5-coder-0.5b"
COMBINATIONS = {
    "shipped features (judge, best_coverage)": ["judge", "best_coverage"],
    "+ judge_small": ["judge", "best_coverage", "judge_small"],
    "judge, judge_small": ["judge", "judge_small"],
    "judge_small, best_coverage": ["judge_small", "best_coverage"],
}


def cached_judge(model: str) -> CachedJudge:
    path, catalog_name = resolve_model(model)
    shipped = CATALOG[catalog_name].calibration if catalog_name else {}
    return CachedJudge(accuracy.CACHE / path.name / "answers.jsonl", lambda: load_judge(str(path)), shipped)


def _relevance_records(model: str, limit: dict) -> list[dict]:
    judge = cached_judge(model)
    records = accuracy.relevance_rows(judge, limit.get("relevance"), 0) + accuracy.squad_rows(judge, limit.get("squad"), 0)
    print(f"relevance, {model}: {judge.misses} answers asked of the model", file=sys.stderr)
    judge.close()
    return records


def relevance_ensemble(limit: dict) -> None:
    """The smaller judge's passage verdict beside, or averaged with, the default's."""
    records = _relevance_records(DEFAULT_MODEL, limit)
    for record, small in zip(records, _relevance_records(SMALL_MODEL, limit), strict=True):
        assert record["group"] == small["group"] and record["shape"] == small["shape"]
        for unit, other in zip(record["features"], small["features"], strict=True):
            unit["judge_passage_small"] = other["judge_passage"]
    for shape in ("10", "3", "squad 3"):
        values: dict[str, tuple[list[float], list[float]]] = {name: ([], []) for name in ("default", "small", "mean")}
        for record in (r for r in records if r["shape"] == shape):
            for paragraph in explore_relevance._paragraphs(record["features"]):
                unit = record["features"][paragraph[0]]
                if unit["judge_passage"] == relevance.UNREAD_VERDICT:
                    continue
                gold = bool(set(paragraph) & set(record["gold"]))
                for name, value in (("default", unit["judge_passage"]), ("small", unit["judge_passage_small"]),
                                    ("mean", (unit["judge_passage"] + unit["judge_passage_small"]) / 2)):
                    values[name][0 if gold else 1].append(value)
        print(f"[{shape}] passage verdict AUC against the gold paragraphs read: " + ", ".join(
            f"{name} {explore_relevance._auc(gold, other):.3f}" for name, (gold, other) in values.items()))
    shipped = list(accuracy.RELEVANCE_FEATURES)
    print(f"{'shipped features':<40} {explore_relevance.figures(records, shipped, UNANSWERABLE_WEIGHT)}", flush=True)
    print(f"{'+ judge_passage_small':<40} {explore_relevance.figures(records, [*shipped, 'judge_passage_small'], UNANSWERABLE_WEIGHT)}", flush=True)
    averaged = copy.deepcopy(records)
    for record in averaged:
        for unit in record["features"]:
            unit["judge_passage"] = (unit["judge_passage"] + unit["judge_passage_small"]) / 2
    print(f"{'judge_passage averaged over both':<40} {explore_relevance.figures(averaged, shipped, UNANSWERABLE_WEIGHT)}", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--limit", type=accuracy._limits, default={}, help="rows per task: TASK=N,...")
    parser.add_argument("--task", default=",".join(TASKS))
    parser.add_argument("--shift", type=int, default=0, help="held-out rows, as accuracy.py --shift")
    parser.add_argument("--relevance", action="store_true", help="context_relevance's passage verdict instead (--limit relevance=N,squad=N)")
    args = parser.parse_args()
    if args.relevance:
        relevance_ensemble(args.limit)
        return
    tasks = {}
    for task in args.task.split(","):
        rows = {}
        for model in (DEFAULT_MODEL, SMALL_MODEL):
            judge = cached_judge(model)
            rows[model] = accuracy.statement_rows(judge, task, args.limit.get(task), args.shift)
            print(f"{task}, {model}: {judge.misses} answers asked of the model", file=sys.stderr)
            judge.close()
        joined = []
        for big, small in zip(rows[DEFAULT_MODEL], rows[SMALL_MODEL], strict=True):
            if "error" in big or "error" in small:
                joined.append(big if "error" in big else small)
                continue
            assert big["group"] == small["group"] and big["label"] == small["label"]
            joined.append({**big, "features": {**big["features"], "judge_small": small["features"]["judge"]}})
        tasks[task] = joined
    accuracy.print_combinations(tasks, COMBINATIONS)


if __name__ == "__main__":
    main()
