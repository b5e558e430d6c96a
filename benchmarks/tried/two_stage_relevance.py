"""A two-stage context_relevance rule, measured and not shipped (README, "Judge accuracy").

Stage one selects units for F1 alone (the per-unit model with the threshold chosen where
something answers, and at least the most probable unit); stage two is a per-question gate,
a logistic model of "something here answers" over the question's best unit logit, its best
passage verdict and the choice's "none" log-odds, whose threshold is chosen for the usual
objective (F1 plus 0.25 times the "insufficient" share). The shipped rule does both with
one threshold. Both are refitted and cross-validated by question on the same cached judge
answers, and applied, fitted on every dev row, to the hand-written plain cases.

    python benchmarks/accuracy.py --task relevance,squad,plain --limit relevance=60,squad=80   # fills the cache
    python benchmarks/tried/two_stage_relevance.py --limit relevance=60,squad=80
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
import accuracy  # noqa: E402
from explore_relevance import _no_model, dev_records  # noqa: E402
from judge_cache import CachedJudge  # noqa: E402

from localeval.fitting import (  # noqa: E402
    FOLDS,
    SELECTION_THRESHOLDS,
    UNANSWERABLE_WEIGHT,
    Fit,
    balancing_weights,
    fit_logistic,
    fit_selection,
    folds_by_group,
    logit,
    selection_objective,
)
from localeval.metrics import relevance  # noqa: E402
from localeval.models import resolve_model  # noqa: E402

GATES = {
    "best unit, best passage, none": ("best_logit", "best_passage", "none"),
    "+ the best unit's choice share": ("best_logit", "best_passage", "none", "best_choice"),
    "best unit, none": ("best_logit", "none"),
}


def one_stage(train: Sequence[Mapping[str, Any]]) -> Any:
    """The shipped rule, refitted on `train`: one threshold selects and says "insufficient"."""
    model = fit_selection([r["features"] for r in train], [set(r["gold"]) for r in train], accuracy.RELEVANCE_FEATURES, relevance.select_units, row_weights=accuracy.source_weights(train))
    return lambda r: set(relevance.select_units(model.probabilities(r["features"]).tolist(), r["features"], 0.5))


def _gate_row(features: Sequence[Mapping[str, float]], probabilities: np.ndarray) -> dict[str, float]:
    top = int(np.argmax(probabilities))
    return {
        "best_logit": logit(float(np.clip(probabilities[top], 1e-6, 1 - 1e-6))),
        "best_passage": max(f["judge_passage"] for f in features),
        "none": features[0]["judge_none"],
        "best_choice": features[top]["judge_choice"],
    }


def two_stage(train: Sequence[Mapping[str, Any]], gate: Sequence[str]) -> Any:
    """Stage one fitted for F1 alone (at least one unit), stage two a gate fitted on whether the question has gold."""
    model: Fit = fit_selection([r["features"] for r in train], [set(r["gold"]) for r in train], accuracy.RELEVANCE_FEATURES, relevance.select_units, 0.0, accuracy.source_weights(train))

    def stage_one(r: Mapping[str, Any]) -> tuple[set[int], dict[str, float]]:
        probabilities = model.probabilities(r["features"])
        return ({i for i, p in enumerate(probabilities) if p >= 0.5} or {int(np.argmax(probabilities))}), _gate_row(r["features"], probabilities)

    first = [stage_one(r) for r in train]
    answerable = [int(bool(r["gold"])) for r in train]
    gate_model = fit_logistic([g for _, g in first], answerable, balancing_weights(answerable, [r["source"] for r in train]), list(gate))
    passes = gate_model.probabilities([g for _, g in first])

    def objective(threshold: float) -> float:
        return selection_objective([s if p >= threshold else set() for (s, _), p in zip(first, passes)], [set(r["gold"]) for r in train], UNANSWERABLE_WEIGHT)

    threshold = max(SELECTION_THRESHOLDS, key=objective)

    def rule(r: Mapping[str, Any]) -> set[int]:
        selected, row = stage_one(r)
        return selected if gate_model.probabilities([row])[0] >= threshold else set()

    return rule


def cross_validated(records: Sequence[Mapping[str, Any]], fit: Any) -> list[set[int]]:
    folds = folds_by_group([r["group"] for r in records], FOLDS)
    selections: list[set[int]] = [set() for _ in records]
    for fold in range(FOLDS):
        rule = fit([r for r, f in zip(records, folds) if f != fold])
        for index, (r, f) in enumerate(zip(records, folds)):
            if f == fold:
                selections[index] = rule(r)
    return selections


def line(name: str, records: Sequence[Mapping[str, Any]], plain: Sequence[Mapping[str, Any]], fit: Any) -> str:
    shapes = accuracy._shape_figures(records, cross_validated(records, fit))
    cells = [f"[{s}] " + (f"insufficient {v['insufficient']:.2f}" if "without" in s else f"F1 {v['f1']:.3f}") for s, v in shapes.items()]
    mean = float(np.mean([v["insufficient"] if "without" in s else v["f1"] for s, v in shapes.items()]))
    rule = fit(records)
    right = sum(rule(r) == set(r["gold"]) for r in plain)
    return f"{name:<44} " + "  ".join(cells) + f"  mean over the shapes {mean:.3f}  plain {right} of {len(plain)}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--limit", type=accuracy._limits, default={"relevance": 60, "squad": 80}, help="as accuracy.py's")
    args = parser.parse_args()
    path, _ = resolve_model(None)
    judge = CachedJudge(accuracy.CACHE / path.name / "answers.jsonl", _no_model, {})
    records, plain = dev_records(judge, args.limit.get), accuracy.plain_relevance_records(judge)
    print(line("one stage (shipped rule, refitted)", records, plain, one_stage), flush=True)
    for name, gate in GATES.items():
        print(line(f"two stages, gate: {name}", records, plain, lambda train, gate=gate: two_stage(train, gate)), flush=True)


if __name__ == "__main__":
    main()
