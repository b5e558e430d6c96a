"""Choose context_relevance's decision among the judge rule, the verifier, a stacked model and a cascade, on validation rows only.

Reads decision_rows.py's file (both graders' answers for every unit of the validation relevance
samples) and scores each candidate the way the metric is judged: per shape, the mean selection F1
where something answers and the share said "insufficient information" where nothing does, then
the mean over shapes (tune_cut.py's figure). Every fitted candidate is scored out of fold, folds
by question, so no candidate is scored on the questions it was fitted on:

- judge: the judge rule as shipped (its selection, unchanged);
- verifier: the verifier file's own rule (its tuned cut and passage weight);
- stacked: a per-unit logistic model of "required" on the judge rule's features plus the
  verifier's logit and its context's best logit (localeval.calibration.fitting.fit_selection, the
  metric's selection rule, its threshold fitted with it);
- cascade: the verifier decides a unit whose logit is outside a band; inside it, the judge rule
  does. The band is chosen on the training folds; a sample with no unit inside the band never
  asks the judge, which is what it saves.

    python training/choose_decision.py --file training/.cache/candidate/verifier.safetensors
"""

from __future__ import annotations

import argparse
import json
import statistics
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
from splits import refuse_sealed

from localeval.calibration.fitting import fit_selection, folds_by_group, selection_f1
from localeval.graders.judge_units import select_units
from localeval.verifier import Verifier

ROOT = Path(__file__).resolve().parents[1]
CACHE = ROOT / "training" / ".cache"
FOLDS = 5
BAND_EDGES = [round(float(x), 2) for x in np.arange(-4.0, 8.01, 0.5)]

Selections = list[set[int]]


def shape_figures(rows: Sequence[dict[str, Any]], selections: Selections) -> dict[str, float]:
    """Per shape: mean F1 where something answers, the share left empty where nothing does."""
    by_shape: dict[str, list[float]] = {}
    for row, selected in zip(rows, selections):
        if row["required"]:
            by_shape.setdefault(f"F1 {row['shape']}", []).append(selection_f1(selected, set(row["required"]))[2])
        else:
            by_shape.setdefault(f"insufficient {row['shape']}", []).append(float(not selected))
    return {shape: statistics.fmean(values) for shape, values in sorted(by_shape.items())}


def figure(rows: Sequence[dict[str, Any]], selections: Selections) -> float:
    """The one number candidates are chosen by: the mean of shape_figures."""
    return statistics.fmean(shape_figures(rows, selections).values())


def passage_best(row: dict[str, Any]) -> list[float]:
    """Each unit's context's best verifier logit."""
    best: dict[int, float] = {}
    for value, p in zip(row["verifier_logits"], row["contexts_of_units"]):
        best[p] = max(best.get(p, value), value)
    return [best[p] for p in row["contexts_of_units"]]


def verifier_selections(rows: Sequence[dict[str, Any]], cut: float, passage_weight: float) -> Selections:
    return [{i for i, (v, b) in enumerate(zip(r["verifier_logits"], passage_best(r))) if v + passage_weight * b >= cut} for r in rows]


def cascade_selections(rows: Sequence[dict[str, Any]], low: float, high: float) -> tuple[Selections, float]:
    """The verifier above `high` selects, below `low` leaves out, the judge rule decides between;
    with the share of samples that asked the judge at all."""
    selections, asked = [], 0
    for row in rows:
        judged = set(row["judge_selected"])
        band = [low <= v < high for v in row["verifier_logits"]]
        asked += any(band)
        selections.append({i for i, v in enumerate(row["verifier_logits"]) if v >= high or (band[i] and i in judged)})
    return selections, asked / len(rows)


def unit_features(row: dict[str, Any]) -> list[dict[str, float]]:
    """The judge rule's features of each unit, with the verifier's logit and its context's best."""
    return [{**f, "verifier": v, "verifier_passage": b} for f, v, b in zip(row["judge_features"], row["verifier_logits"], passage_best(row))]


def out_of_fold(rows: Sequence[dict[str, Any]], choose: Callable[[list[dict[str, Any]]], Callable[[dict[str, Any]], set[int]]]) -> Selections:
    """Each row's selection by a rule chosen on the other folds (folds by question)."""
    fold_of = folds_by_group([r["group"] for r in rows], FOLDS)
    selections: Selections = [set() for _ in rows]
    for fold in range(FOLDS):
        train = [r for r, f in zip(rows, fold_of) if f != fold]
        rule = choose(train)
        for i, (row, f) in enumerate(zip(rows, fold_of)):
            if f == fold:
                selections[i] = rule(row)
    return selections


def stacked_rule(features: Sequence[str]) -> Callable[[list[dict[str, Any]]], Callable[[dict[str, Any]], set[int]]]:
    def choose(train: list[dict[str, Any]]) -> Callable[[dict[str, Any]], set[int]]:
        fit = fit_selection([unit_features(r) for r in train], [set(r["required"]) for r in train], features, select_units)

        def rule(row: dict[str, Any]) -> set[int]:
            units = unit_features(row)
            return set(select_units(fit.probabilities(units).tolist(), units, 0.5))

        return rule

    return choose


def best_band(rows: Sequence[dict[str, Any]]) -> tuple[float, float]:
    """The band with the best figure on `rows`, the cheaper (fewer samples asking the judge) on a tie."""

    def merit(band: tuple[float, float]) -> tuple[float, float]:
        selections, asked = cascade_selections(rows, *band)
        return figure(rows, selections), -asked

    return max(((low, high) for low in BAND_EDGES for high in BAND_EDGES if high >= low), key=merit)


def cascade_rule(train: list[dict[str, Any]]) -> Callable[[dict[str, Any]], set[int]]:
    low, high = best_band(train)
    return lambda row: cascade_selections([row], low, high)[0][0]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rows", type=Path, default=CACHE / "decision" / "relevance_rows.jsonl")
    parser.add_argument("--file", type=Path, required=True, help="the verifier file decision_rows.py read (its tuned relevance rule)")
    parser.add_argument("--json", type=Path, help="also write the figures and the rules fitted on all rows here")
    args = parser.parse_args()
    refuse_sealed(args.rows)
    rows = [json.loads(line) for line in args.rows.read_text(encoding="utf-8").splitlines() if line.strip()]
    calibration = Verifier(str(args.file), args.file.read_bytes()).calibration["relevance"]
    judge_features = sorted(rows[0]["judge_features"][0]) if rows[0]["judge_features"] else []
    candidates: dict[str, Selections] = {
        "judge": [set(r["judge_selected"]) for r in rows],
        "verifier": verifier_selections(rows, calibration.cut, calibration.passage_weight),
        "stacked (judge features + verifier)": out_of_fold(rows, stacked_rule([*judge_features, "verifier", "verifier_passage"])),
        "stacked (verifier + judge_passage, judge_choice)": out_of_fold(rows, stacked_rule(["verifier", "verifier_passage", "judge_passage", "judge_choice"])),
        "cascade": out_of_fold(rows, cascade_rule),
    }
    print(f"{len(rows)} validation samples, {len({r['group'] for r in rows})} questions, {FOLDS} folds by question")
    report: dict[str, Any] = {"samples": len(rows), "questions": len({r["group"] for r in rows}), "candidates": {}}
    for name, selections in candidates.items():
        cells = shape_figures(rows, selections)
        report["candidates"][name] = {"figure": round(figure(rows, selections), 4), **{k: round(v, 4) for k, v in cells.items()}}
        print(f"{name:50s} {figure(rows, selections):.3f}  " + ", ".join(f"{k} {v:.3f}" for k, v in cells.items()))
    low, high = best_band(rows)
    share = cascade_selections(rows, low, high)[1]
    report["cascade_band"] = {"low": low, "high": high, "judge_share": round(share, 4)}
    print(f"cascade band on all rows: verifier logit in [{low:+.2f}, {high:+.2f}) asks the judge; {share:.0%} of samples ask it")
    if args.json:
        args.json.write_text(json.dumps(report, indent=1) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
