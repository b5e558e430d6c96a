"""Fitting the calibrated combinations, and the statistics reported about them.

A small logistic regression (Newton's method, L2-regularised, numpy only), fitted
with per-row weights so that each task and each class weighs the same: the
fitted probability's 0.5 is then the threshold of balanced accuracy. Every figure
reported for a fitted model is cross-validated: rows are split into folds by
group (a claim, a summary, a question), each fold is scored by a model fitted on
the others. tests/test_calibration.py checks these functions on cases whose
answers are known.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from localeval.errors import LocalevalError

L2 = 1.0  # ridge penalty on the weights (not the intercept): a few features, a few hundred rows
NEWTON_STEPS = 50
FOLDS = 10


@dataclass(frozen=True)
class Fit:
    intercept: float
    weights: dict[str, float]

    def logits(self, rows: Sequence[Mapping[str, float]]) -> np.ndarray:
        return np.array([self.intercept + sum(w * row[name] for name, w in self.weights.items()) for row in rows], dtype=float)

    def probabilities(self, rows: Sequence[Mapping[str, float]]) -> np.ndarray:
        probabilities: np.ndarray = 1.0 / (1.0 + np.exp(-np.clip(self.logits(rows), -30, 30)))
        return probabilities

    def table(self, digits: int = 4) -> dict[str, Any]:
        return {"intercept": round(self.intercept, digits), "weights": {k: round(v, digits) for k, v in self.weights.items()}}


def fit_logistic(rows: Sequence[Mapping[str, float]], labels: Sequence[int], weights: Sequence[float], features: Sequence[str], l2: float = L2) -> Fit:
    """Weighted L2-regularised logistic regression on the named features."""
    x = np.c_[np.ones(len(rows)), np.array([[row[name] for name in features] for row in rows], dtype=float).reshape(len(rows), len(features))]
    y = np.asarray(labels, dtype=float)
    w = np.asarray(weights, dtype=float)
    penalty = l2 * np.diag([0.0] + [1.0] * len(features))
    beta = np.zeros(x.shape[1])
    for _ in range(NEWTON_STEPS):
        p = 1.0 / (1.0 + np.exp(-np.clip(x @ beta, -30, 30)))
        gradient = x.T @ (w * (p - y)) + penalty @ beta
        hessian = (x * (w * p * (1 - p))[:, None]).T @ x + penalty
        try:
            step = np.linalg.solve(hessian, gradient)
        except np.linalg.LinAlgError:
            raise LocalevalError("the labelled rows cannot be fitted (the features do not vary: label more varied rows)") from None
        beta -= step
        if np.abs(step).max() < 1e-9:
            break
    return Fit(float(beta[0]), {name: float(b) for name, b in zip(features, beta[1:])})


def balancing_weights(labels: Sequence[int], tasks: Sequence[str]) -> list[float]:
    """Weights that give every task the same total, split equally between its two classes."""
    totals: dict[tuple[str, int], int] = {}
    for label, task in zip(labels, tasks):
        totals[(task, label)] = totals.get((task, label), 0) + 1
    count = len(labels)
    classes = {task for task in tasks}
    return [count / (len(classes) * 2 * totals[(task, label)]) for label, task in zip(labels, tasks)]


def folds_by_group(groups: Sequence[str], folds: int = FOLDS, seed: int = 0) -> list[int]:
    """A fold number per row; rows of a group share it. Deterministic."""
    unique = sorted(set(groups))
    order = np.random.default_rng(seed).permutation(len(unique))
    fold_of = {unique[i]: rank % folds for rank, i in enumerate(order)}
    return [fold_of[g] for g in groups]


def cross_validated(
    rows: Sequence[Mapping[str, float]], groups: Sequence[str], fit: Callable[[list[int]], Callable[[list[int]], np.ndarray]], folds: int = FOLDS
) -> np.ndarray:
    """Out-of-fold predictions: `fit(train_indices)` returns a predictor of test indices."""
    assignment = folds_by_group(groups, folds)
    predictions = np.zeros(len(rows))
    for fold in range(folds):
        train = [i for i, f in enumerate(assignment) if f != fold]
        test = [i for i, f in enumerate(assignment) if f == fold]
        if test and train:
            predictions[test] = fit(train)(test)
    return predictions


def balanced_accuracy(labels: Sequence[int], predicted: Sequence[int]) -> float:
    pairs = list(zip(labels, predicted))
    positives = [p for g, p in pairs if g == 1]
    negatives = [p for g, p in pairs if g == 0]
    if not positives or not negatives:
        return float("nan")
    return (sum(positives) / len(positives) + sum(1 - p for p in negatives) / len(negatives)) / 2


def auc(labels: Sequence[int], scores: Sequence[float]) -> float:
    """Area under the ROC curve: how well the scores rank positives above negatives (ties count half)."""
    positives = [s for g, s in zip(labels, scores) if g == 1]
    negatives = [s for g, s in zip(labels, scores) if g == 0]
    if not positives or not negatives:
        return float("nan")
    wins = sum((p > n) + 0.5 * (p == n) for p in positives for n in negatives)
    return wins / (len(positives) * len(negatives))


def selection_f1(selected: set[int], gold: set[int]) -> tuple[float, float, float]:
    """Precision, recall and F1 of a selection against the gold set (an empty selection scores 0)."""
    if not selected or not gold:
        return 0.0, 0.0, 0.0
    hits = len(selected & gold)
    precision, recall = hits / len(selected), hits / len(gold)
    return precision, recall, (2 * precision * recall / (precision + recall) if hits else 0.0)


def logit(p: float) -> float:
    return math.log(p / (1 - p))


SELECTION_THRESHOLDS = [round(float(t), 3) for t in np.linspace(0.05, 0.8, 31)]


# A metric's selection rule: the units it selects given their probabilities, their features and
# the threshold (context_relevance's `select_units`). The threshold is searched with the rule
# the metric applies, so a rule that adds to plain thresholding is fitted with it.
Selector = Callable[[Sequence[float], Sequence[Mapping[str, float]], float], Iterable[int]]


def selection_objective(selections: Sequence[set[int]], gold: Sequence[set[int]], unanswerable_weight: float) -> float:
    """What a selection threshold is chosen for: the mean F1 over the rows something answers,
    plus `unanswerable_weight` times the share of the other rows where nothing is selected
    ("insufficient information", the right answer there)."""
    answerable = [selection_f1(s, g)[2] for s, g in zip(selections, gold) if g]
    unanswerable = [float(not s) for s, g in zip(selections, gold) if not g]
    return (float(np.mean(answerable)) if answerable else 0.0) + unanswerable_weight * (float(np.mean(unanswerable)) if unanswerable else 0.0)


# Fitted with both kinds of rows, the threshold that maximises F1 alone seldom says
# "insufficient". Over HotpotQA's and SQuAD's eight shapes, each counted once (F1 where
# something answers, the "insufficient" share where nothing does), 0.25 scored 0.461 and
# 0.1 scored 0.440: 0.25 says "insufficient" more often and selects better on single
# paragraphs, for less F1 on HotpotQA's two-hop shapes (lab/explore_relevance.py, docs/HISTORY.md).
UNANSWERABLE_WEIGHT = 0.25


def fit_selection(
    rows: Sequence[Sequence[Mapping[str, float]]],
    gold: Sequence[set[int]],
    features: Sequence[str],
    selector: Selector,
    unanswerable_weight: float = UNANSWERABLE_WEIGHT,
    row_weights: Sequence[float] | None = None,
) -> Fit:
    """A per-unit logistic model of "required" (each unit weighing its row's weight: 1 unless
    given), with the threshold at which `selector` maximises `selection_objective` over the rows
    folded into its intercept (so 0.5 selects)."""
    weights = row_weights if row_weights is not None else [1.0] * len(rows)
    units = [(f, int(i in g), w) for unit_rows, g, w in zip(rows, gold, weights) for i, f in enumerate(unit_rows)]
    model = fit_logistic([f for f, _, _ in units], [y for _, y, _ in units], [w for _, _, w in units], features)
    probabilities = [model.probabilities(unit_rows) for unit_rows in rows]

    def objective(threshold: float) -> float:
        return selection_objective([set(selector(p.tolist(), unit_rows, threshold)) for p, unit_rows in zip(probabilities, rows)], gold, unanswerable_weight)

    threshold = max(SELECTION_THRESHOLDS, key=objective)
    return Fit(model.intercept - logit(threshold), model.weights)
