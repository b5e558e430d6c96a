"""A statement table (a logistic model over a grader's statement features) fitted on dumped rows,
against the grader's shipped decision on the same rows.

The judge rule decides a statement by a logistic table over the judge's log-odds and best_coverage
(the share of the statement's words in the context's closest sentence), fitted on the benchmarks'
fit rows; `--verifier` by its logit alone at the file's cut. This fits a table over the features
named (`--features`, repeated: one candidate each) on rows `verifier_accuracy.py --dump-rows`
wrote (`--grader verifier` or `judge`), classes balanced and every file (a set) weighing the
same, 10 folds by row, beside the dumped decision (probability >= 0.5); `--held-out` applies the
table `--chosen` fitted on every fit row to other dumps (read once, after the choice).
Rule 18 (docs/experiments.md): the verifier's logit with best_coverage (and coverage), on the fit
rows (QAGS `--task recall --limit 60`, claims `--task attribution --limit 150 --forms "no
question"`, unshifted). Rule 19: the judge's table refitted with claims against long documents of
the validation split beside them (`--task validation-claims --limit 15`). Rule 20: a table fitted on
one kind's validation claims (`--sources summedits_ectsum,summedits_qmsumm,summedits_sales_call`),
applied to the same sources' sealed claims (`--task sealed-claims --limit 15` dump).

    python benchmarks/verifier_accuracy.py --task recall --limit 60 --dump-rows qags.jsonl  (and attribution)
    python lab/statement_table.py --fit qags.jsonl claims.jsonl --features verifier,best_coverage [--held-out ... --chosen verifier,best_coverage]
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from localeval.calibration.fitting import Fit, balanced_accuracy, balancing_weights, cross_validated, fit_logistic


def read_dumps(paths: Sequence[Path], sources: set[str] | None = None) -> list[dict[str, Any]]:
    """Every dumped statement (only those of `sources` when given), its set named by the file it came from."""
    rows = []
    for path in paths:
        for line in path.read_text(encoding="utf-8").splitlines():
            if line.strip():
                row = json.loads(line)
                if sources is None or row["source"] in sources:
                    rows.append({**row, "set": path.stem})
    return rows


def per_set(rows: Sequence[dict[str, Any]], verdicts: Sequence[int]) -> dict[str, Any]:
    """Balanced accuracy of each set, their mean, and each set's attributed share beside the people's."""
    accuracy: dict[str, float] = {}
    shares: dict[str, tuple[float, float]] = {}
    for name in sorted({r["set"] for r in rows}):
        picked = [(r["label"], v) for r, v in zip(rows, verdicts) if r["set"] == name]
        accuracy[name] = balanced_accuracy([y for y, _ in picked], [v for _, v in picked])
        shares[f"{name} attributed / people"] = float(np.mean([v for _, v in picked])), float(np.mean([y for y, _ in picked]))
    return {**accuracy, **shares, "mean": float(np.mean(list(accuracy.values())))}


def fit(rows: Sequence[dict[str, Any]], features: Sequence[str]) -> Fit:
    labels = [r["label"] for r in rows]
    return fit_logistic(rows, labels, balancing_weights(labels, [r["set"] for r in rows]), features)


def cross_validated_verdicts(rows: Sequence[dict[str, Any]], features: Sequence[str]) -> list[int]:
    def fitted(train: list[int]) -> Any:
        model = fit([rows[i] for i in train], features)
        return lambda test: model.probabilities([rows[i] for i in test])

    predicted = cross_validated(rows, [str(i) for i in range(len(rows))], fitted, folds=10)
    return [int(p >= 0.5) for p in predicted]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--fit", type=Path, nargs="+", required=True, help="dumps the tables are fitted on, one set each")
    parser.add_argument("--features", action="append", default=[], help="comma-separated features of one candidate table (repeat for more)")
    parser.add_argument("--held-out", type=Path, nargs="+", help="dumps the --chosen table, fitted on every fit row, is applied to")
    parser.add_argument("--chosen", help="with --held-out: the candidate step 1 chose (its --features)")
    parser.add_argument("--sources", help="comma-separated: only the statements of these sources, in every dump")
    args = parser.parse_args()
    sources = set(args.sources.split(",")) if args.sources else None
    rows = read_dumps(args.fit, sources)
    print(f"{len(rows)} fit statements; the dumped decision: {per_set(rows, [int(r['probability'] >= 0.5) for r in rows])}")
    for features in args.features:
        print(f"{features}, 10 folds by row: {per_set(rows, cross_validated_verdicts(rows, features.split(',')))}")
        print(f"  fitted on all fit rows: {fit(rows, features.split(',')).table()}")
    if args.held_out:
        chosen = fit(rows, args.chosen.split(","))
        held = read_dumps(args.held_out, sources)
        print(f"held out ({len(held)} statements): the dumped decision {per_set(held, [int(r['probability'] >= 0.5) for r in held])}")
        print(f"held out, {args.chosen}: {per_set(held, [int(p >= 0.5) for p in chosen.probabilities(held)])}")


if __name__ == "__main__":
    main()
