"""How often the prediction-powered interval covers the human mean, and how wide it is, by simulation.

Issue 45 measured classic PPI (ARES: the metric's weight fixed at 1) on labelled rows with the
default judge: it covered the human mean, but was WIDER than the interval from the same labels
alone, because the judge's verdicts carry little of the human signal. localeval now uses PPI++
(localeval.stats.ppi: the weight chosen to minimise the variance, a variance floor and Student's t for
few labels). This script draws labelled and unlabelled samples from known populations and prints,
for each estimator, the share of 95% intervals that cover the true human mean (it should be at
least 0.95) and their mean width:

- tracks: the metric agrees with the person 90% of the time;
- weak: like issue 45's judge (metric mean 0.82, human mean 0.46: it says yes far more often,
  and only a little more often when the person does);
- unrelated: the metric is independent of the person.

Each population is drawn at several human means (issue 50: intervals near 0 and 1 covered less
than near 0.46), and the last lines give each estimator's lowest coverage over every cell.

    python benchmarks/ppi_coverage.py                          # 1,000 draws per cell, a few minutes
    python benchmarks/ppi_coverage.py --draws 500 --means 0.46
"""

from __future__ import annotations

import argparse
import math
import statistics
from collections.abc import Callable

import numpy as np

from localeval.stats.ppi import prediction_powered, t_quantile_975

HUMAN_MEANS = (0.05, 0.1, 0.25, 0.46, 0.75, 0.9, 0.95)
LABELS = (10, 20, 50)
SCORED = 200
Z95 = 1.959964

# P(metric says 1 | human 1), P(metric says 1 | human 0)
POPULATIONS: dict[str, tuple[float, float]] = {"tracks": (0.9, 0.1), "weak": (0.9, 0.75), "unrelated": (0.8, 0.8)}


def classic_ppi(metric: np.ndarray, human: np.ndarray, labelled: np.ndarray) -> tuple[float, float]:
    """ARES's interval as localeval computed it before PPI++: weight 1, the metric's mean over
    every sample, normal quantile, no floor."""
    residual = human[labelled] - metric[labelled]
    mean = metric.mean() + residual.mean()
    error = math.sqrt(metric.var(ddof=1) / len(metric) + residual.var(ddof=1) / len(residual))
    return max(0.0, mean - Z95 * error), min(1.0, mean + Z95 * error)


def labels_alone(human: np.ndarray, labelled: np.ndarray) -> tuple[float, float]:
    """Student's t interval from the labels alone, without a floor."""
    values = human[labelled]
    error = math.sqrt(values.var(ddof=1) / len(values))
    quantile = t_quantile_975(len(values) - 1)
    return max(0.0, values.mean() - quantile * error), min(1.0, values.mean() + quantile * error)


def localeval_figures(metric: np.ndarray, human: np.ndarray, labelled: np.ndarray, key: str) -> tuple[float, float]:
    """localeval's interval (`ci95`), or its labels-only one computed the same way (`labels_only_ci95`)."""
    pairs = [(float(f), float(h)) for f, h in zip(metric[labelled], human[labelled])]
    low, high = getattr(prediction_powered(len(metric), float(metric.mean()), float(metric.var(ddof=1)), pairs), key)
    return low, high


ESTIMATORS: dict[str, Callable[[np.ndarray, np.ndarray, np.ndarray], tuple[float, float]]] = {
    "classic PPI": classic_ppi,
    "labels alone, plain t": lambda metric, human, labelled: labels_alone(human, labelled),
    "labels alone, localeval": lambda metric, human, labelled: localeval_figures(metric, human, labelled, "labels_only_ci95"),
    "PPI++ (localeval)": lambda metric, human, labelled: localeval_figures(metric, human, labelled, "ci95"),
}


def _numbers(text: str) -> list[float]:
    return [float(part) for part in text.split(",") if part.strip()]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--draws", type=int, default=1000)
    parser.add_argument("--means", type=_numbers, default=list(HUMAN_MEANS), help="human means, comma-separated")
    parser.add_argument("--labels", type=_numbers, default=list(LABELS), help="labelled samples per draw, comma-separated")
    args = parser.parse_args()
    rng = np.random.default_rng(45)
    print(f"{SCORED} scored samples, {args.draws} draws per cell: coverage of the human mean / mean width")
    print(f"{'population':<10} {'human':>5} {'labels':>6}  " + "  ".join(f"{name:>24}" for name in ESTIMATORS))
    lowest = {name: (2.0, "") for name in ESTIMATORS}
    for population, (yes_when_yes, yes_when_no) in POPULATIONS.items():
        for human_mean in args.means:
            for count in (int(c) for c in args.labels):
                covered = {name: 0 for name in ESTIMATORS}
                widths: dict[str, list[float]] = {name: [] for name in ESTIMATORS}
                for _ in range(args.draws):
                    human = (rng.random(SCORED) < human_mean).astype(float)
                    metric = (rng.random(SCORED) < np.where(human == 1, yes_when_yes, yes_when_no)).astype(float)
                    labelled = rng.choice(SCORED, size=count, replace=False)
                    for name, estimator in ESTIMATORS.items():
                        low, high = estimator(metric, human, labelled)
                        covered[name] += low <= human_mean <= high
                        widths[name].append(high - low)
                for name in ESTIMATORS:
                    lowest[name] = min(lowest[name], (covered[name] / args.draws, f"{population}, human mean {human_mean}, {count} labels"))
                cells = [f"{covered[name] / args.draws:>13.3f} / {statistics.fmean(widths[name]):.3f}" for name in ESTIMATORS]
                print(f"{population:<10} {human_mean:>5.2f} {count:>6}  " + "  ".join(cells), flush=True)
    for name, (coverage, where) in lowest.items():
        print(f"lowest coverage, {name}: {coverage:.3f} ({where})")


if __name__ == "__main__":
    main()
