"""The context_relevance variants the README reports, from the cached judge answers (no model).

For HotpotQA questions in every shape (10, 3 and 1 contexts; distractors only), each
feature set is fitted and cross-validated by question (10 folds) with the selection
threshold chosen for F1 plus a weight on saying "insufficient information" where nothing
answers; per shape it prints F1 or the "insufficient" share.

    python benchmarks/accuracy.py --task relevance --limit 30     # fills the judge cache once
    python benchmarks/explore_relevance.py --limit 30
"""

from __future__ import annotations

import argparse
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import accuracy  # noqa: E402
from judge_cache import CachedJudge  # noqa: E402

from localeval.fitting import FOLDS, fit_selection, folds_by_group, select, selection_f1  # noqa: E402
from localeval.metrics.relevance import FEATURES  # noqa: E402
from localeval.models import resolve_model  # noqa: E402

WITHOUT_UNITS = [f for f in FEATURES if f not in ("judge_sentence", "judge_sentence_gap", "named_by_pronoun")]
VARIANTS = {
    "no sentence verdicts": WITHOUT_UNITS,
    "+ sentence verdict": [*WITHOUT_UNITS, "judge_sentence"],
    "+ sentence verdict gap to the best": [*WITHOUT_UNITS, "judge_sentence_gap"],
    "+ both": [*WITHOUT_UNITS, "judge_sentence", "judge_sentence_gap"],
    "+ both + named by a pronoun (shipped)": list(FEATURES),
    "shipped without opens_passage": [f for f in FEATURES if f != "opens_passage"],
}


def _no_model() -> None:
    raise SystemExit("a judge answer is not cached: run benchmarks/accuracy.py --task relevance with the same --limit first")


def figures(records: list[dict], features: list[str], weight: float) -> str:
    folds = folds_by_group([r["group"] for r in records], FOLDS)
    selections: list[set[int]] = [set() for _ in records]
    for fold in range(FOLDS):
        train = [r for r, f in zip(records, folds) if f != fold]
        model = fit_selection([r["features"] for r in train], [set(r["gold"]) for r in train], features, weight)
        for index, (r, f) in enumerate(zip(records, folds)):
            if f == fold:
                selections[index] = select(model.probabilities(r["features"]), 0.5)
    cells = []
    for shape in accuracy.RELEVANCE_SHAPES:
        picked = [(s, set(r["gold"])) for s, r in zip(selections, records) if r["shape"] == shape]
        if "without" in shape:
            cells.append(f"[{shape}] insufficient {statistics.fmean(not s for s, _ in picked):.2f}")
        else:
            cells.append(f"[{shape}] F1 {statistics.fmean(selection_f1(s, g)[2] for s, g in picked):.3f}")
    return "   ".join(cells)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--limit", type=int, default=30)
    parser.add_argument("--weights", default="0,0.1,0.25", help="weights of 'insufficient' where nothing answers, comma-separated")
    args = parser.parse_args()
    path, _ = resolve_model(None)
    judge = CachedJudge(accuracy.CACHE / path.name / "answers.jsonl", _no_model, {})
    records = accuracy.relevance_rows(judge, args.limit, 0)
    for weight in (float(w) for w in args.weights.split(",")):
        for name, features in VARIANTS.items():
            print(f"weight {weight:<5} {name:<40} {figures(records, features, weight)}", flush=True)


if __name__ == "__main__":
    main()
