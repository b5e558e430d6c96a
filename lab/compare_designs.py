"""The paired-interval designs tried for issue 76, side by side on part of compare_coverage.py's grid.

The shipped rule (localeval.stats.paired) was chosen from these. Each design gives a 95% interval
for the mean of n paired differences; the script prints, per design, the lowest coverage over the
cells (at least 0.94 is the target), the cells under 0.94, and the mean width over the plain paired
t's on the spread cells (not binary, n >= 15, at least half the differences non-zero; at most 1.2
is the target) and on the rest.

- plain: Student's t on the differences, nothing added.
- previous: two pseudo-pairs at +-1 (the rule before issue 76).
- shipped: two pseudo-pairs the size the differences show (localeval.stats.paired.pseudo_squares).
- own size only: two pseudo-pairs at the differences' root mean square, no pull toward the range.
- studentized bootstrap: percentile-t over 400 resamples (the pseudo-pairs' variance floor kept
  in each resample's standard error, else a resample of zeros has none).
- sign-flip: the exact randomization test of a shift, inverted (400 random sign vectors shared by
  every shift tried; bisection for each end).

    nice python lab/compare_designs.py                 # about 5 minutes on one core
    nice python lab/compare_designs.py --draws 200 --sizes 15
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))

from compare_coverage import CORRELATIONS, PSEUDO_SQUARES, SHAPES, TARGET, shipped_pseudo_squares  # noqa: E402

from localeval.stats.intervals import t975  # noqa: E402

DIFFERENCES = (0.0, 0.1, 0.2)
SIZES = (10, 15, 20, 50)
RESAMPLES = 400
Design = Callable[[np.ndarray, np.random.Generator], tuple[np.ndarray, np.ndarray]]


def _t_interval(differences: np.ndarray, pseudo: np.ndarray | float, plain: bool = False) -> tuple[np.ndarray, np.ndarray]:
    n = differences.shape[1]
    mean = differences.mean(axis=1)
    squares = ((differences - mean[:, None]) ** 2).sum(axis=1)
    variance = squares / (n - 1) / n if plain else (squares + pseudo) / n / n
    half = t975(n - 1) * np.sqrt(variance)
    return mean - half, mean + half


def plain(differences: np.ndarray, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    return _t_interval(differences, 0.0, plain=True)


def previous(differences: np.ndarray, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    return _t_interval(differences, PSEUDO_SQUARES)


def shipped(differences: np.ndarray, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    return _t_interval(differences, shipped_pseudo_squares(differences))


def own_size_only(differences: np.ndarray, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    non_zero = (differences != 0).sum(axis=1)
    size = (differences**2).sum(axis=1) / np.maximum(non_zero, 1)
    return _t_interval(differences, np.where(non_zero > 0, 2.0 * size, PSEUDO_SQUARES))


def studentized_bootstrap(differences: np.ndarray, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    draws, n = differences.shape
    mean = differences.mean(axis=1)
    floor = shipped_pseudo_squares(differences)
    stderr = np.sqrt((((differences - mean[:, None]) ** 2).sum(axis=1) + floor) / n / n)
    picks = rng.integers(0, n, size=(RESAMPLES, n))
    resampled = differences[:, picks]  # draws x resamples x n
    boot_mean = resampled.mean(axis=2)
    boot_stderr = np.sqrt((((resampled - boot_mean[:, :, None]) ** 2).sum(axis=2) + floor[:, None]) / n / n)
    studentized = (boot_mean - mean[:, None]) / boot_stderr
    high_q, low_q = np.quantile(studentized, 0.975, axis=1), np.quantile(studentized, 0.025, axis=1)
    return mean - high_q * stderr, mean - low_q * stderr


def sign_flip(differences: np.ndarray, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    draws, n = differences.shape
    signs = rng.choice((-1.0, 1.0), size=(RESAMPLES, n))
    mean = differences.mean(axis=1)
    flipped_sum = differences @ signs.T / n  # draws x resamples: mean(signs * d)
    sign_mean = signs.mean(axis=1)  # resamples

    def accepted(shift: np.ndarray) -> np.ndarray:
        statistic = np.abs(flipped_sum - shift[:, None] * sign_mean[None, :])
        return np.abs(mean - shift) <= np.quantile(statistic, 0.95, axis=1) + 1e-12

    ends = []
    for outside in (-1.0, 1.0):
        inside_at, outside_at = mean.copy(), np.full(draws, outside)
        for _ in range(30):
            middle = (inside_at + outside_at) / 2
            ok = accepted(middle)
            inside_at, outside_at = np.where(ok, middle, inside_at), np.where(ok, outside_at, middle)
        ends.append(inside_at)
    return ends[0], ends[1]


DESIGNS: dict[str, Design] = {
    "plain paired t": plain, "previous (+-1)": previous, "shipped": shipped, "own size only": own_size_only,
    "studentized bootstrap": studentized_bootstrap, "sign-flip inversion": sign_flip,
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--draws", type=int, default=500, help="draws per cell")
    parser.add_argument("--sizes", type=int, nargs="+", default=list(SIZES))
    parser.add_argument("--seed", type=int, default=20261202)
    args = parser.parse_args()
    rng = np.random.default_rng(args.seed)
    results: dict[str, list[tuple[float, float, bool, str]]] = {name: [] for name in DESIGNS}
    for shape_name, make in SHAPES.items():
        for difference in DIFFERENCES:
            shape = make(difference)
            for n in args.sizes:
                for rho in CORRELATIONS:
                    base, candidate = shape.draw(rng, args.draws, n, rho)
                    differences = candidate - base
                    spread = not shape_name.startswith("binary") and n >= 15 and (differences != 0).sum(axis=1).mean() >= n / 2
                    where = f"{shape_name}, n {n}, difference {difference:g}, correlation {rho:g}"
                    for name, design in DESIGNS.items():
                        low, high = design(differences, rng)
                        covered = float(((low - 1e-12 <= shape.truth) & (shape.truth <= high + 1e-12)).mean())
                        results[name].append((covered, float(np.minimum(high - low, 2.0).mean()), spread, where))
    plain_widths = [width for _, width, _, _ in results["plain paired t"]]
    print(f"{args.draws} draws per cell, {len(plain_widths)} cells (sizes {args.sizes}, differences {DIFFERENCES}, correlations {CORRELATIONS})")
    print("| design | lowest coverage (cell) | cells under 0.94 | mean width / plain t, spread cells | same, other cells |")
    print("|---|---|---|---|---|")
    for name, cells in results.items():
        lowest = min(cells)
        spread = [width / plain_width for (_, width, is_spread, _), plain_width in zip(cells, plain_widths) if is_spread]
        rest = [width / plain_width for (_, width, is_spread, _), plain_width in zip(cells, plain_widths) if not is_spread and plain_width > 0]
        under = sum(covered < TARGET for covered, _, _, _ in cells)
        print(f"| {name} | {lowest[0]:.3f} ({lowest[3]}) | {under} | {np.mean(spread):.2f} (largest {np.max(spread):.2f}) | {np.mean(rest):.2f} |", flush=True)


if __name__ == "__main__":
    main()
