"""Decide the judge rule's statement table across kinds of text, and measure it once on the sealed split.

The default judge's statement table (localeval/catalog.toml, "attribution") turns the judge's
log-odds and the evidence features into P(attributed) for context_recall, faithfulness and
factual_correctness. A refit chosen on halves the benchmarks had read many times lost claims on
unseen rows, so a table is now decided only on the training split's validation rows, by a rule
fixed before any figure is seen:

1. Candidates are fitted on the validation dump of benchmarks/statement_kinds.py, every kind
   weighing the same and both classes within it (balancing_weights), and measured by 5-fold
   cross-validation by case (a summary's statements stay together).
2. A candidate is eligible when no kind's cross-validated balanced accuracy is below what the
   shipped table gives that kind on the same rows; the eligible one with the highest mean over
   kinds is chosen, if its mean beats the shipped table's. Otherwise the shipped table stays and
   the sealed split decides nothing.
3. The chosen table, fitted on every validation row, and the shipped table are then measured on
   the sealed dump, once (a line in benchmarks/SEALED_LEDGER.md first): ship only if no kind loses
   more than 0.01 and the mean over kinds gains.

A kind's figure is its balanced accuracy (news: the summary's, called factual when every statement
is attributed) and its share gap: the share the metric attributes (news: calls factual) minus the
people's. The candidates: the shipped table's logit recalibrated (slope and intercept); the judge
and best_coverage refitted; every evidence feature; and the text's own measures (the log of the
context's words and sentences and of the statement's words, the share of numbers in the
statement), which let one table tell a news article from a transcript; and the judge's log-odds on a
fixed statement no context supports, read against the case's context (`--probe` dumps): how readily
the judge says Yes to this text.

    python training/statement_table_kinds.py --fit validation.jsonl [--sealed sealed.jsonl]
"""

from __future__ import annotations

import argparse
import json
import math
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from localeval.calibration.fitting import Fit, balanced_accuracy, balancing_weights, cross_validated, fit_logistic
from localeval.graders.judge_rule import ATTRIBUTION_FEATURES
from localeval.models.store import CATALOG, DEFAULT_MODEL

FOLDS = 5
EVIDENCE = ATTRIBUTION_FEATURES  # every feature the judge rule computes (what `localeval calibrate` fits)
TEXT = ("log_context_words", "log_context_sentences", "log_statement_words", "numeric_share")
CANDIDATES: dict[str, tuple[str, ...]] = {
    "shipped logit recalibrated": ("shipped_logit",),
    "judge, best_coverage refitted": ("judge", "best_coverage"),
    "every evidence feature": EVIDENCE,
    "judge, best_coverage and the text's measures": ("judge", "best_coverage", *TEXT),
    "every evidence feature and the text's measures": (*EVIDENCE, *TEXT),
    "judge, best_coverage and the probe": ("judge", "best_coverage", "probe"),
    "judge, best_coverage, the text's measures and the probe": ("judge", "best_coverage", *TEXT, "probe"),
}
SEALED_TOLERANCE = 0.01  # step 3: no kind may lose more than this on the sealed split


def shipped_table() -> Mapping[str, Any]:
    return CATALOG[DEFAULT_MODEL].calibration["attribution"]


def read_dump(path: Path) -> list[dict[str, Any]]:
    """The dumped statements with the derived measures each candidate may use."""
    table = shipped_table()
    rows = []
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip():
            continue
        row = json.loads(line)
        try:
            row["shipped_logit"] = table["intercept"] + sum(w * row[name] for name, w in table["weights"].items())
            row["log_context_words"] = math.log1p(row["context_words"])
            row["log_context_sentences"] = math.log1p(row["context_sentences"])
            row["log_statement_words"] = math.log1p(row["statement_words"])
        except KeyError as missing:
            raise SystemExit(f"{path}:{number}: no field {missing}; dump it with benchmarks/statement_kinds.py") from None
        rows.append(row)
    return rows


def figures(rows: Sequence[Mapping[str, Any]], probabilities: Sequence[float]) -> dict[str, dict[str, float]]:
    """Each kind's balanced accuracy and share gap (news: by summary), and the mean over kinds."""
    out: dict[str, dict[str, float]] = {}
    for kind in sorted({r["kind"] for r in rows}):
        picked = [(r, p >= 0.5) for r, p in zip(rows, probabilities) if r["kind"] == kind]
        if kind == "news":
            cases: dict[str, list[Any]] = {}
            for row, attributed in picked:
                cases.setdefault(row["case"], [row["summary_label"], True])[1] &= attributed
            labels, predicted = [int(y) for y, _ in cases.values()], [int(a) for _, a in cases.values()]
        else:
            labels, predicted = [int(r["label"]) for r, _ in picked], [int(a) for _, a in picked]
        out[kind] = {"n": len(labels), "balanced_accuracy": balanced_accuracy(labels, predicted), "share_gap": float(np.mean(predicted) - np.mean(labels))}
    out["mean over kinds"] = {"balanced_accuracy": float(np.mean([f["balanced_accuracy"] for f in out.values()]))}
    return out


def fit_table(rows: Sequence[Mapping[str, Any]], features: Sequence[str]) -> Fit:
    """A table over `features` fitted on the statements whose label is known, each kind weighing the same."""
    known = [r for r in rows if r["label"] is not None]
    labels = [int(r["label"]) for r in known]
    return fit_logistic(known, labels, balancing_weights(labels, [r["kind"] for r in known]), features)


def fitted(rows: Sequence[Mapping[str, Any]], features: Sequence[str]) -> Callable[[Sequence[Mapping[str, Any]]], np.ndarray]:
    """fit_table's P(attributed), as a function of other rows."""
    model = fit_table(rows, features)
    return lambda test: 1.0 / (1.0 + np.exp(-model.logits(test)))


def cross_validated_probabilities(rows: Sequence[Mapping[str, Any]], features: Sequence[str]) -> np.ndarray:
    def fit_on(train: list[int]) -> Callable[[list[int]], np.ndarray]:
        predict = fitted([rows[i] for i in train], features)
        return lambda test: predict([rows[i] for i in test])

    return cross_validated(rows, [r["case"] for r in rows], fit_on, folds=FOLDS)


def shipped_probabilities(rows: Sequence[Mapping[str, Any]]) -> list[float]:
    return [1.0 / (1.0 + math.exp(-r["shipped_logit"])) for r in rows]


def choose(rows: Sequence[Mapping[str, Any]]) -> tuple[str | None, dict[str, dict[str, dict[str, float]]]]:
    """Step 2: the eligible candidate with the best mean over kinds, if it beats the shipped table."""
    results = {"shipped table": figures(rows, shipped_probabilities(rows))}
    for name, features in CANDIDATES.items():
        if all(feature in rows[0] for feature in features):  # the probe only where the dump has it (statement_kinds.py --probe)
            results[name] = figures(rows, list(cross_validated_probabilities(rows, features)))
    shipped = results["shipped table"]
    kinds = [k for k in shipped if k != "mean over kinds"]
    eligible = [name for name in CANDIDATES if name in results and all(results[name][k]["balanced_accuracy"] >= shipped[k]["balanced_accuracy"] for k in kinds)]
    best = max(eligible, key=lambda n: results[n]["mean over kinds"]["balanced_accuracy"], default=None)
    if best is not None and results[best]["mean over kinds"]["balanced_accuracy"] <= shipped["mean over kinds"]["balanced_accuracy"]:
        best = None
    return best, results


def sealed_decision(fit_rows: Sequence[Mapping[str, Any]], sealed_rows: Sequence[Mapping[str, Any]], chosen: str) -> tuple[bool, dict[str, dict[str, dict[str, float]]]]:
    """Step 3: the chosen table, fitted on every validation row, against the shipped table on the sealed rows."""
    results = {"shipped table": figures(sealed_rows, shipped_probabilities(sealed_rows)),
               chosen: figures(sealed_rows, list(fitted(fit_rows, CANDIDATES[chosen])(sealed_rows)))}
    before, after = results["shipped table"], results[chosen]
    kinds = [k for k in before if k != "mean over kinds"]
    ships = all(after[k]["balanced_accuracy"] >= before[k]["balanced_accuracy"] - SEALED_TOLERANCE for k in kinds) and (
        after["mean over kinds"]["balanced_accuracy"] > before["mean over kinds"]["balanced_accuracy"])
    return ships, results


def own_kind_calibration(fit_rows: Sequence[Mapping[str, Any]], sealed_rows: Sequence[Mapping[str, Any]]) -> dict[str, dict[str, float]]:
    """What `localeval calibrate` gives a user of one kind: a table over every evidence feature (the
    features calibrate fits) fitted on that kind's validation rows alone (a few dozen labels, as a
    user would bring), measured on the kind's sealed rows. A record beside the decision, not part of it."""
    out: dict[str, dict[str, float]] = {}
    for kind in sorted({r["kind"] for r in sealed_rows}):
        own = [r for r in fit_rows if r["kind"] == kind]
        if len({r["label"] for r in own if r["label"] is not None}) < 2:
            continue
        test = [r for r in sealed_rows if r["kind"] == kind]
        out[kind] = figures(test, list(fitted(own, EVIDENCE)(test)))[kind]
    return out


def print_results(title: str, results: Mapping[str, Mapping[str, Mapping[str, float]]]) -> None:
    print(title)
    for name, by_kind in results.items():
        cells = "; ".join(f"{kind} {f['balanced_accuracy']:.3f}" + (f" (gap {f['share_gap']:+.2f}, n {f['n']:.0f})" if "share_gap" in f else "") for kind, f in by_kind.items())
        print(f"  {name}: {cells}")


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--fit", type=Path, required=True, help="the validation dump (benchmarks/statement_kinds.py --split validation)")
    parser.add_argument("--sealed", type=Path, help="the sealed dump: step 3, once, after the choice (a ledger line first); with no choice, the shipped table's record")
    args = parser.parse_args(argv)
    rows = read_dump(args.fit)
    chosen, results = choose(rows)
    print_results(f"validation, {len(rows)} statements ({FOLDS}-fold cross-validation by case for the refits):", results)
    print(f"chosen: {chosen or 'none (the shipped table stays)'}")
    if chosen is not None:
        model = fit_table(rows, CANDIDATES[chosen])
        print(f"  fitted on every validation row: intercept {model.intercept:.4f}, weights {json.dumps({k: round(v, 4) for k, v in model.weights.items()})}")
    if args.sealed:
        sealed_rows = read_dump(args.sealed)
        print_results("sealed, each kind calibrated on its own validation rows (what `localeval calibrate` fits; a record):",
                      {"own-kind table": own_kind_calibration(rows, sealed_rows)})
        if chosen is None:  # a record of the shipped table's figures per kind; it decides nothing
            print_results("sealed (a record: nothing was chosen, so this decides nothing):", {"shipped table": figures(sealed_rows, shipped_probabilities(sealed_rows))})
            return
        ships, sealed = sealed_decision(rows, sealed_rows, chosen)
        print_results("sealed:", sealed)
        print(f"ship {chosen!r}: {'yes' if ships else 'no (the shipped table stays)'}")


if __name__ == "__main__":
    main()
