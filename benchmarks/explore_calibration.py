"""The alternatives to the shipped combinations, measured on the same rows and the same cached
judge answers as benchmarks/accuracy.py (no model runs when the cache has the rows).

Prints, cross-validated as accuracy.py does (10 folds by claim, summary or question):

- attribution + QAGS, one joint calibration: other feature sets (all seven, subsets,
  interaction terms, statement and context length); each task's own fit applied to the
  other task; the mean of each feature per task and label (why one boundary cannot
  serve both);
- relevance: other selection rules (a share of the best unit's probability, a margin
  in log-odds), other features (position in the paragraph, overlap relative to the
  paragraph's best sentence, new content words), fitting without the negatives, and
  weighing the negatives in the choice of the selection threshold.

    python benchmarks/explore_calibration.py --limit attribution=300,recall=80,relevance=80
"""

from __future__ import annotations

import argparse
import math
import statistics
import sys
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import accuracy  # noqa: E402  (benchmarks are scripts, not a package)
from calibrate import balanced_accuracy, balancing_weights, fit_logistic, folds_by_group, selection_f1  # noqa: E402
from judge_cache import CachedJudge  # noqa: E402

from localeval.evidence import content_words  # noqa: E402
from localeval.judge import load_judge  # noqa: E402
from localeval.models import CATALOG, resolve_model  # noqa: E402
from localeval.text import split_sentences  # noqa: E402

Rule = tuple[list[Any], Callable[[Sequence[float], Any], set[int]]]


def _log_odds(p: float) -> float:
    p = min(max(p, 1e-9), 1 - 1e-9)
    return math.log(p / (1 - p))


ABSOLUTE: Rule = ([t / 40 for t in range(1, 40)], lambda p, t: {i for i, v in enumerate(p) if v >= t})
SHARE_COARSE: Rule = (
    [(t, a) for t in (0.02, 0.05, 0.1, 0.15, 0.2) for a in (0.3, 0.4, 0.5, 0.6, 0.7, 0.8)],
    lambda p, prm: {i for i, v in enumerate(p) if v >= max(prm[0], prm[1] * max(p, default=0.0))},
)
SHARE_FINE: Rule = ([(t, a / 20) for t in (0.02, 0.05, 0.1, 0.15, 0.2, 0.25, 0.3) for a in range(4, 19)], SHARE_COARSE[1])
MARGIN: Rule = (
    [(t, d) for t in (0.02, 0.05, 0.1, 0.15, 0.2) for d in (0.5, 1.0, 1.5, 2.0, 2.5, 3.0)],
    lambda p, prm: {i for i, v in enumerate(p) if v >= prm[0] and _log_odds(v) >= _log_odds(max(p, default=0.0)) - prm[1]},
)


# -- attribution ---------------------------------------------------------------------


def _add_lengths(tasks: Mapping[str, list[dict[str, Any]]], limits: Mapping[str, int | None]) -> None:
    """Statement length (content words) and context length (sentences) as extra features."""
    claims = {r["id"]: r for r in accuracy.read("attribution_dev.jsonl", limits["attribution"])}
    summaries = {r["id"]: r for r in accuracy.read("recall_dev.jsonl", limits["recall"])}
    for task, rows in tasks.items():
        seen: dict[str, int] = {}
        for r in rows:
            if "error" in r:
                continue
            k = seen.get(r["group"], 0)
            seen[r["group"]] = k + 1
            if task == "attribution":
                statement, contexts = claims[r["group"]]["claim"], [claims[r["group"]]["context"]]
            else:
                statement, contexts = summaries[r["group"]]["statements"][k], summaries[r["group"]]["retrieved_contexts"]
            f = r["features"]
            f["statement_length"] = min(len(content_words(statement)), 20) / 20
            f["context_length"] = math.log1p(len(split_sentences("\n".join(contexts)))) / 5
            f["judge_x_coverage"] = f["judge"] * f["coverage"]
            f["judge_x_best_coverage"] = f["judge"] * f["best_coverage"]
            f["best_coverage_squared"] = f["best_coverage"] ** 2
            f["nothing_missing"] = 1.0 if f["missing"] == 0 else 0.0


def explore_attribution(tasks: Mapping[str, list[dict[str, Any]]]) -> None:
    print("attribution + QAGS, one joint calibration (balanced accuracy / AUC, cross-validated)")
    every = ["judge", *accuracy.EVIDENCE_FEATURES]
    variants = {
        "shipped: judge, best_coverage": accuracy.ATTRIBUTION_FEATURES,
        "all seven": every,
        "judge, best_coverage, missing": ["judge", "best_coverage", "missing"],
        "judge, coverage, missing": ["judge", "coverage", "missing"],
        "judge, best_coverage, number_coverage, missing": ["judge", "best_coverage", "number_coverage", "missing"],
        "all seven + judge x coverage": [*every, "judge_x_coverage"],
        "all seven + judge x best_coverage": [*every, "judge_x_best_coverage"],
        "all seven + best_coverage squared": [*every, "best_coverage_squared"],
        "all seven + nothing missing": [*every, "nothing_missing"],
        "shipped + statement length": [*accuracy.ATTRIBUTION_FEATURES, "statement_length"],
        "shipped + context length": [*accuracy.ATTRIBUTION_FEATURES, "context_length"],
    }
    for label, features in variants.items():
        combination = accuracy.attribution_report(tasks, None, features)["combination"]
        cells = "   ".join(f"{task} {f['balanced_accuracy']:.3f} / {f['auc']:.3f}" for task, f in combination.items())
        print(f"  {label:<50} {cells}")
    records = {task: [r for r in rows if "error" not in r] for task, rows in tasks.items()}
    print("each task's own fit (all seven features, in-sample) applied to the other task (balanced accuracy)")
    for source in records:
        rows = records[source]
        model = fit_logistic([r["features"] for r in rows], [r["label"] for r in rows], balancing_weights([r["label"] for r in rows], [source] * len(rows)), every)
        cells = "   ".join(
            f"{task} {balanced_accuracy([r['label'] for r in target], [int(p >= 0.5) for p in model.probabilities([r['features'] for r in target])]):.3f}"
            for task, target in records.items()
        )
        print(f"  fitted on {source:<12} {cells}")
    print("mean of each feature, per task and label")
    for task, rows in records.items():
        for label in (0, 1):
            chosen = [r for r in rows if r["label"] == label]
            means = ", ".join(f"{k} {statistics.fmean(r['features'][k] for r in chosen):.2f}" for k in every)
            print(f"  {task} label {label} (n={len(chosen)}): {means}")


# -- relevance -----------------------------------------------------------------------


def _add_unit_features(records: list[dict[str, Any]], limit: int | None) -> None:
    """Position in the paragraph, overlap relative to the paragraph's best unit, new content words."""
    rows = {r["id"]: r for r in accuracy.read("relevance_dev.jsonl", limit)}
    for r in records:
        paragraph, position, paragraphs = -1, 0, []
        for f in r["features"]:
            paragraph, position = (paragraph + 1, 0) if f["opens_passage"] else (paragraph, position + 1)
            paragraphs.append(paragraph)
            f["position"] = 1.0 / (1 + position)
        for p in set(paragraphs):
            members = [i for i, g in enumerate(paragraphs) if g == p]
            top = max(r["features"][i]["overlap"] for i in members)
            for i in members:
                r["features"][i]["overlap_in_paragraph"] = r["features"][i]["overlap"] / top if top > 0 else 0.0
        question = set(content_words(rows[r["group"]]["user_input"]))
        units = _unit_texts(rows[r["group"]], negative=r["source"] == "negative")
        for f, text in zip(r["features"], units, strict=True):
            f["new_words"] = min(sum(1 for w in content_words(text) if w not in question), 10) / 10


def _unit_texts(row: Mapping[str, Any], negative: bool) -> list[str]:
    contexts = row["retrieved_contexts"]
    if negative:
        contexts = [c for c in contexts if not any(accuracy._same_sentence(s, g) for s in split_sentences(c) for g in row["gold_sentences"])]
    return [s for c in contexts for s in split_sentences(c)]


def _relevance_cv(records: list[dict[str, Any]], features: list[str], rule: Rule, with_negatives: bool = True, negative_weight: float = 0.0) -> tuple[float, float]:
    """Mean F1 on the questions and the share of negatives answered "insufficient", cross-validated."""
    grid, select = rule
    assignment = folds_by_group([r["group"] for r in records], accuracy.FOLDS)
    f1s: list[float] = []
    insufficient: list[float] = []
    for fold in range(accuracy.FOLDS):
        train = [r for r, f in zip(records, assignment) if f != fold and (with_negatives or r["source"] != "negative")]
        units = [(f, int(i in set(r["gold"]))) for r in train for i, f in enumerate(r["features"])]
        model = fit_logistic([f for f, _ in units], [g for _, g in units], [1.0] * len(units), features)
        probabilities = [list(model.probabilities(r["features"])) for r in train]

        def objective(parameter: Any, model_probabilities: list[list[float]] = probabilities, rows: list[dict[str, Any]] = train) -> float:
            questions = [selection_f1(select(p, parameter), set(r["gold"]))[2] for p, r in zip(model_probabilities, rows) if r["source"] != "negative"]
            negatives = [0.0 if select(p, parameter) else 1.0 for p, r in zip(model_probabilities, rows) if r["source"] == "negative"]
            return (1 - negative_weight) * statistics.fmean(questions) + (negative_weight * statistics.fmean(negatives) if negatives else 0.0)

        best = max(grid, key=objective)
        for r, f in zip(records, assignment):
            if f == fold:
                chosen = select(list(model.probabilities(r["features"])), best)
                if r["source"] == "negative":
                    insufficient.append(0.0 if chosen else 1.0)
                else:
                    f1s.append(selection_f1(chosen, set(r["gold"]))[2])
    return statistics.fmean(f1s), statistics.fmean(insufficient)


def explore_relevance(records: list[dict[str, Any]]) -> None:
    print("relevance (F1 on the questions; share of 'insufficient' on the questions without their supporting paragraphs; cross-validated)")
    shipped = accuracy.RELEVANCE_FEATURES
    without_new_facts = [f for f in shipped if f != "new_facts"]
    variants: dict[str, tuple[list[str], Rule, bool, float]] = {
        "shipped (absolute threshold, with negatives)": (shipped, ABSOLUTE, True, 0.0),
        "without the new-facts feature": (without_new_facts, ABSOLUTE, True, 0.0),
        "fitted on the questions only": (shipped, ABSOLUTE, False, 0.0),
        "threshold weighs negatives 0.1": (shipped, ABSOLUTE, True, 0.1),
        "threshold weighs negatives 0.25": (shipped, ABSOLUTE, True, 0.25),
        "threshold weighs negatives 0.5": (shipped, ABSOLUTE, True, 0.5),
        "share of the best unit (coarse grid)": (shipped, SHARE_COARSE, True, 0.0),
        "share of the best unit (fine grid)": (shipped, SHARE_FINE, True, 0.0),
        "log-odds margin to the best unit": (shipped, MARGIN, True, 0.0),
        "+ position in the paragraph": ([*shipped, "position"], ABSOLUTE, True, 0.0),
        "+ overlap relative to the paragraph's best": ([*shipped, "overlap_in_paragraph"], ABSOLUTE, True, 0.0),
        "+ new content words": ([*shipped, "new_words"], ABSOLUTE, True, 0.0),
        "without opens_passage": ([f for f in shipped if f != "opens_passage"], ABSOLUTE, True, 0.0),
        "without judge_passage_gap": ([f for f in shipped if f != "judge_passage_gap"], ABSOLUTE, True, 0.0),
    }
    for label, (features, rule, with_negatives, weight) in variants.items():
        f1, insufficient = _relevance_cv(records, features, rule, with_negatives, weight)
        print(f"  {label:<46} F1 {f1:.3f}   insufficient on negatives {insufficient:.3f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--limit", type=accuracy._limits, default={}, help="as in accuracy.py: N, or TASK=N,...")
    parser.add_argument("--task", default="attribution,relevance", help="attribution (with QAGS), relevance")
    parser.add_argument("--model", default=accuracy.DEFAULT_MODEL)
    args = parser.parse_args()
    limit = args.limit.get
    limits = {task: limit(task, limit("*")) for task in ("attribution", "recall", "relevance")}
    path, name = resolve_model(args.model)
    judge = CachedJudge(accuracy.CACHE / path.name / "answers.jsonl", lambda: load_judge(str(path)), CATALOG[name].calibration if name else {})
    if "attribution" in args.task:
        tasks = {task: accuracy.statement_rows(judge, task, limits[task], 0) for task in ("attribution", "recall")}
        _add_lengths(tasks, limits)
        explore_attribution(tasks)
    if "relevance" in args.task:
        records = [r for r in accuracy.relevance_rows(judge, limits["relevance"], 0) if "error" not in r]
        _add_unit_features(records, limits["relevance"])
        explore_relevance(records)
    judge.close()
    print(f"judge answers not in the cache: {judge.misses}")


if __name__ == "__main__":
    main()
