"""Each task's decision cut and logistic slope, fitted on validation logits: numpy only.

train_verifier.py and train_device.py call `calibrate` after training, and recalibrate.py calls it
on a finished file (the forward pass on the CPU, with localeval's own encoder). It lives apart from
the torch code so that a recalibration needs no torch.

The slope is `TaskCalibration.scale` in localeval.verifier: P(yes) = sigmoid(scale * (logit - cut)).
A plain maximum-likelihood slope has no finite value when the validation logits separate the
labels (a GPU run fitted 1.56e9 and overflowed `exp`), and the runtime rightly refuses such a file.
So the fit is penalised (a small L2 term on the slope), computed with a stable log-sigmoid, taken
by damped Newton steps that never raise the loss, and bounded to [MIN_SCALE, MAX_SCALE], well
inside what localeval.verifier accepts.
"""

from __future__ import annotations

import bisect
import math
from collections import defaultdict
from typing import Any

import numpy as np

from localeval.verifier.encoder import TASKS

MIN_SCALE = 0.01  # a slope at or below zero would invert the verdicts
MAX_SCALE = 20.0  # sigmoid(20 * 0.25) is already 0.993: a steeper slope only claims more certainty
L2 = 1e-3  # on the slope, against the weighted mean log-loss (whose weights sum to 1)


def auc(scores: list[float], labels: list[int]) -> float:
    """The share of (positive, negative) pairs ranked right, ties half (NaN without both classes)."""
    positives = [s for s, y in zip(scores, labels) if y]
    negatives = [s for s, y in zip(scores, labels) if not y]
    if not positives or not negatives:
        return float("nan")
    ranked = sorted(negatives)
    wins = sum(bisect.bisect_left(ranked, p) + 0.5 * (bisect.bisect_right(ranked, p) - bisect.bisect_left(ranked, p)) for p in positives)
    return wins / (len(positives) * len(negatives))


def evaluate(rows: list[dict[str, Any]], logits: list[float], calibration: dict[str, dict[str, float]]) -> dict[str, dict[str, float]]:
    """AUC, and balanced accuracy at the task's cut, per source."""
    by_source: dict[str, list[tuple[float, int]]] = defaultdict(list)
    for row, value in zip(rows, logits):
        by_source[row["source"]].append((value, int(row["label"])))
    figures = {}
    for source, pairs in sorted(by_source.items()):
        scores, labels = [p[0] for p in pairs], [p[1] for p in pairs]
        cut = calibration[next(r["task"] for r in rows if r["source"] == source)]["cut"]
        pos = [s >= cut for s, y in pairs if y]
        neg = [s < cut for s, y in pairs if not y]
        balanced = (sum(pos) / len(pos) if pos else float("nan")) / 2 + (sum(neg) / len(neg) if neg else float("nan")) / 2
        figures[source] = {"rows": len(pairs), "auc": round(auc(scores, labels), 4), "balanced_accuracy": round(balanced, 4)}
    return figures


def mean_auc(validation: dict[str, dict[str, float]], sources: list[str] | None = None) -> float:
    """The mean over sources of validation AUC (each source counts once, whatever its size), over
    `sources` when given. train_device.py keeps an epoch by the mean over every source and logs a
    continue-run's --focus sources' mean beside it: on a relevance-only run the two disagreed about
    which epoch was better, and the whole-sample figure sided with every source's (issue 48). A
    focus source without an AUC (no validation row, or rows of one label) is skipped; with none
    left the mean is over every source."""
    finite = {name: figures["auc"] for name, figures in validation.items() if math.isfinite(figures["auc"])}
    values = [finite[name] for name in (sources or []) if name in finite] or list(finite.values())
    return round(float(np.mean(values)), 4) if values else 0.0


def _loss(x: np.ndarray, y: np.ndarray, w: np.ndarray, a: float, b: float, l2: float) -> float:
    """Weighted mean log-loss of sigmoid(a * x + b), stable for any a (logaddexp), plus l2 * a^2."""
    z = a * x + b
    return float(np.sum(w * (np.logaddexp(0.0, z) - y * z)) + l2 * a * a)


def logistic_slope(logits: list[float], labels: list[int], l2: float = L2) -> float:
    """The slope of a one-feature logistic fit, classes weighted equally, penalised and bounded.

    Damped Newton: a step that would raise the loss is halved until it does not, so the fit
    cannot run off to infinity; on separable logits the L2 term keeps the optimum finite, and the
    result is clipped to [MIN_SCALE, MAX_SCALE]. A single-class or empty task gets 1.0."""
    x = np.asarray(logits, dtype=float)
    y = np.asarray(labels, dtype=float)
    if x.size == 0 or y.min() == y.max():
        return 1.0
    w = np.where(y > 0, 0.5 / y.sum(), 0.5 / (1 - y).sum())
    a, b = 1.0, 0.0
    loss = _loss(x, y, w, a, b, l2)
    for _ in range(100):
        p = np.exp(-np.logaddexp(0.0, -(a * x + b)))  # sigmoid without overflow
        r = w * (p - y)
        s = w * p * (1 - p)
        g = np.array([np.sum(r * x) + 2 * l2 * a, np.sum(r)])
        h = np.array([[np.sum(s * x * x) + 2 * l2, np.sum(s * x)], [np.sum(s * x), np.sum(s) + 1e-9]])
        step = np.linalg.solve(h, g)
        size = 1.0
        while size > 1e-6:
            na, nb = a - size * step[0], b - size * step[1]
            new = _loss(x, y, w, na, nb, l2)
            if new <= loss:
                break
            size /= 2
        else:
            break
        converged = abs(na - a) < 1e-10 and abs(nb - b) < 1e-10
        a, b, loss = na, nb, new
        if converged:
            break
    return float(min(MAX_SCALE, max(MIN_SCALE, a))) if math.isfinite(a) else MAX_SCALE


def quality(pairs: list[tuple[float, int]], task: str, cut: float) -> float:
    """F1 of the pairs at or above `cut` for relevance, balanced accuracy for attribution."""
    positives = sum(y for _, y in pairs)
    tp = sum(1 for v, y in pairs if v >= cut and y)
    fp = sum(1 for v, y in pairs if v >= cut and not y)
    if task == "relevance":
        return 2 * tp / (2 * tp + fp + (positives - tp)) if tp else 0.0
    return tp / positives / 2 + (len(pairs) - positives - fp) / (len(pairs) - positives) / 2


def calibrate(rows: list[dict[str, Any]], logits: list[float], tasks: tuple[str, ...] = TASKS) -> dict[str, dict[str, float]]:
    """Per task, the cut on validation rows: best F1 for relevance (few sentences are required), best
    balanced accuracy for attribution; and the logistic slope (localeval.verifier's TaskCalibration).

    `tasks` names the tasks to fit (recalibrate.py --task refits one and leaves the other's as it is);
    each needs rows."""
    out = {}
    for task in tasks:
        pairs = [(v, int(r["label"])) for r, v in zip(rows, logits) if r["task"] == task]
        if not pairs:
            raise ValueError(f"no validation rows of task {task!r} to fit its cut on")
        cut = max(sorted({round(v, 2) for v, _ in pairs}), key=lambda c: quality(pairs, task, c))
        slope = logistic_slope([v for v, _ in pairs], [y for _, y in pairs])
        out[task] = {"scale": round(slope, 4), "cut": round(cut, 4), "validation_quality": round(quality(pairs, task, cut), 4)}
    return out
