"""How often `localeval compare`'s 95% interval on a paired difference covers the true difference, by simulation.

Draws two runs' scores on the same n samples from populations whose true mean difference is known,
and counts the share of intervals that hold it (at least 0.94 in every cell is the target; 4,000
draws measure 0.95 within about 0.0035). The scores are shaped like the metrics' own:

- binary: 0 or 1 per sample (id_context_recall on one reference, a one-statement recall), at a base
  mean of 0.5 and of 0.75 (the candidate up to 0.95: most differences 0);
- ratios: the share of 1 to 4 statements attributed (context_recall, faithfulness), the statements
  of one sample alike (a shared sample effect), at base means 0.5 and 0.75;
- average precision: five ranked contexts, each useful with its own probability (0.6 down to 0.15
  for the base; the candidate's raised most at the top), 0 when none is (context_precision).

The two runs are tied by a Gaussian copula: each sample's (or statement's, or context's) latent
score in the candidate has correlation rho with the base's (0, 0.5 or 0.9). Each run's mean depends
only on its own marginal, so the true difference is exact (binary, ratios) or enumerated
(average precision). Checked against the package: a few draws of every cell go through
localeval.stats.paired.paired_difference itself, and the script stops if an interval differs.

    nice python benchmarks/compare_coverage.py                 # 4,000 draws per cell, about a minute
    nice python benchmarks/compare_coverage.py --draws 500 --sizes 10 50
"""

from __future__ import annotations

import argparse
import itertools
import math
from collections.abc import Callable
from dataclasses import dataclass
from statistics import NormalDist

import numpy as np

from localeval.stats.intervals import t975
from localeval.stats.paired import PSEUDO_SQUARES, paired_difference

SIZES = (10, 20, 50, 100, 200, 1000)
DIFFERENCES = (0.0, 0.05, 0.1, 0.2)
CORRELATIONS = (0.0, 0.5, 0.9)
TARGET = 0.94
BLOCK = 500_000  # draws x samples x parts generated at once, to bound memory
SAMPLE_EFFECT = 0.5  # ratios: the share of a statement's latent variance its sample shares
BASE_USEFUL = np.array([0.6, 0.45, 0.35, 0.25, 0.15])  # average precision: P(context at rank r is useful), base run
RAISE = np.array([1.0, 0.8, 0.6, 0.4, 0.2])  # how the candidate raises those, most at the top
PROBIT = NormalDist().inv_cdf

Draw = Callable[[np.random.Generator, int, int, float], tuple[np.ndarray, np.ndarray]]


@dataclass(frozen=True)
class Shape:
    """A kind of score at one base level: `draw(rng, draws, n, rho)` gives (base, candidate) arrays of draws x n."""

    name: str
    draw: Draw
    truth: float


def _correlated(rng: np.random.Generator, shape: tuple[int, ...], rho: float, base_latent: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    base = rng.standard_normal(shape) if base_latent is None else base_latent
    return base, rho * base + math.sqrt(1.0 - rho * rho) * rng.standard_normal(shape)


def binary(p_base: float, difference: float) -> Shape:
    cut_base, cut_candidate = PROBIT(p_base), PROBIT(p_base + difference)

    def draw(rng: np.random.Generator, draws: int, n: int, rho: float) -> tuple[np.ndarray, np.ndarray]:
        base, candidate = _correlated(rng, (draws, n), rho)
        return (base < cut_base).astype(float), (candidate < cut_candidate).astype(float)

    return Shape(f"binary, base {p_base}", draw, difference)


def ratios(p_base: float, difference: float) -> Shape:
    cut_base, cut_candidate = PROBIT(p_base), PROBIT(p_base + difference)

    def draw(rng: np.random.Generator, draws: int, n: int, rho: float) -> tuple[np.ndarray, np.ndarray]:
        statements = rng.integers(1, 5, size=(draws, n))
        present = np.arange(4)[None, None, :] < statements[:, :, None]
        shared = math.sqrt(SAMPLE_EFFECT) * rng.standard_normal((draws, n, 1))
        latent = shared + math.sqrt(1.0 - SAMPLE_EFFECT) * rng.standard_normal((draws, n, 4))
        base, candidate = _correlated(rng, (draws, n, 4), rho, latent)
        return ((base < cut_base) & present).sum(axis=2) / statements, ((candidate < cut_candidate) & present).sum(axis=2) / statements

    return Shape(f"ratios, base {p_base}", draw, difference)


def average_precision(useful: np.ndarray) -> np.ndarray:
    """Average precision of 0/1 usefulness over ranks (last axis); 0 where nothing is useful."""
    hits = np.cumsum(useful, axis=-1)
    ranks = np.arange(1, useful.shape[-1] + 1)
    total = useful.sum(axis=-1)
    return np.where(total > 0, (useful * hits / ranks).sum(axis=-1) / np.maximum(total, 1), 0.0)


def expected_average_precision(p: np.ndarray) -> float:
    """The exact mean average precision of independent ranks useful with probabilities `p`."""
    patterns = np.array(list(itertools.product((0.0, 1.0), repeat=len(p))))
    weights = np.prod(np.where(patterns > 0, p, 1.0 - p), axis=1)
    return float((weights * average_precision(patterns)).sum())


def raised_useful(difference: float) -> np.ndarray:
    """The candidate's usefulness probabilities whose mean average precision is the base's plus `difference` (bisection)."""
    goal = expected_average_precision(BASE_USEFUL) + difference
    low, high = 0.0, 1.0
    for _ in range(60):
        middle = (low + high) / 2
        low, high = (middle, high) if expected_average_precision(np.clip(BASE_USEFUL + middle * RAISE, 0, 0.99)) < goal else (low, middle)
    return np.clip(BASE_USEFUL + low * RAISE, 0, 0.99)


def ap_shape(difference: float) -> Shape:
    p_candidate = raised_useful(difference)
    cut_base, cut_candidate = np.array([PROBIT(p) for p in BASE_USEFUL]), np.array([PROBIT(p) for p in p_candidate])
    truth = expected_average_precision(p_candidate) - expected_average_precision(BASE_USEFUL)

    def draw(rng: np.random.Generator, draws: int, n: int, rho: float) -> tuple[np.ndarray, np.ndarray]:
        base, candidate = _correlated(rng, (draws, n, len(BASE_USEFUL)), rho)
        return average_precision((base < cut_base).astype(float)), average_precision((candidate < cut_candidate).astype(float))

    return Shape("average precision", draw, truth)


SHAPES: dict[str, Callable[[float], Shape]] = {
    "binary, base 0.5": lambda d: binary(0.5, d),
    "binary, base 0.75": lambda d: binary(0.75, d),
    "ratios, base 0.5": lambda d: ratios(0.5, d),
    "ratios, base 0.75": lambda d: ratios(0.75, d),
    "average precision": ap_shape,
}


@dataclass(frozen=True)
class Cell:
    coverage: float
    plain_coverage: float
    width: float
    unpaired_width: float


def intervals(base: np.ndarray, candidate: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Per draw (rows): the mean difference, the shipped half-width, the plain paired t half-width, and the unpaired one."""
    n = base.shape[1]
    differences = candidate - base
    mean = differences.mean(axis=1)
    squares = ((differences - mean[:, None]) ** 2).sum(axis=1)
    t = t975(n - 1)
    half = t * np.sqrt((squares + PSEUDO_SQUARES) / n / n)
    plain = t * np.sqrt(squares / (n - 1) / n)
    own = [t * np.sqrt((((x - x.mean(axis=1)[:, None]) ** 2).sum(axis=1) + n / (n + 1)) / n / n) for x in (base, candidate)]
    return mean, half, plain, np.hypot(*own)


def check_against_package(base: np.ndarray, candidate: np.ndarray, mean: np.ndarray, half: np.ndarray) -> None:
    """The vectorised interval is the package's: a few draws through paired_difference."""
    for row in range(min(3, len(base))):
        found = paired_difference(base[row].tolist(), candidate[row].tolist())
        assert found.ci95 is not None
        expected = (max(-1.0, mean[row] - half[row]), min(1.0, mean[row] + half[row]))
        if not np.allclose(found.ci95, expected, atol=1e-9):
            raise SystemExit(f"the simulated interval {expected} is not the package's {found.ci95}")


def run_cell(shape: Shape, n: int, rho: float, draws: int, rng: np.random.Generator) -> Cell:
    covered = plain_covered = 0
    widths = unpaired = 0.0
    block = max(1, BLOCK // (n * 5))
    done = 0
    while done < draws:
        size = min(block, draws - done)
        base, candidate = shape.draw(rng, size, n, rho)
        mean, half, plain, apart = intervals(base, candidate)
        if done == 0:
            check_against_package(base, candidate, mean, half)
        error = np.abs(mean - shape.truth)
        covered += int((error <= half + 1e-12).sum())
        plain_covered += int((error <= plain + 1e-12).sum())
        widths += float(np.minimum(2 * half, 2.0).sum())
        unpaired += float(np.minimum(2 * apart, 2.0).sum())
        done += size
    return Cell(covered / draws, plain_covered / draws, widths / draws, unpaired / draws)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--draws", type=int, default=4000, help="draws per cell")
    parser.add_argument("--sizes", type=int, nargs="+", default=list(SIZES), help="numbers of paired samples")
    parser.add_argument("--seed", type=int, default=20261128)
    parser.add_argument("--cells", action="store_true", help="also print every cell")
    args = parser.parse_args()
    rng = np.random.default_rng(args.seed)
    print(f"{args.draws} draws per cell; differences {DIFFERENCES}; correlations {CORRELATIONS}; target coverage {TARGET}")
    print("| scores | n | lowest coverage (difference, correlation) | plain paired t, lowest | mean width at correlation 0 / 0.5 / 0.9 | unpaired width, same |")
    print("|---|---|---|---|---|---|")
    lowest_all, plain_all, failing = 1.0, 1.0, []
    for name, make in SHAPES.items():
        shapes = {d: make(d) for d in DIFFERENCES}
        for n in args.sizes:
            cells = {(d, rho): run_cell(shapes[d], n, rho, args.draws, rng) for d in DIFFERENCES for rho in CORRELATIONS}
            (d_low, rho_low), low = min(cells.items(), key=lambda item: item[1].coverage)
            plain_low = min(c.plain_coverage for c in cells.values())
            widths = " / ".join(f"{np.mean([cells[(d, rho)].width for d in DIFFERENCES]):.3f}" for rho in CORRELATIONS)
            apart = " / ".join(f"{np.mean([cells[(d, rho)].unpaired_width for d in DIFFERENCES]):.3f}" for rho in CORRELATIONS)
            print(f"| {name} | {n} | {low.coverage:.3f} ({d_low:g}, {rho_low:g}) | {plain_low:.3f} | {widths} | {apart} |", flush=True)
            if args.cells:
                for (d, rho), cell in cells.items():
                    print(f"    difference {d:g} (true {shapes[d].truth:.4f}), correlation {rho:g}: coverage {cell.coverage:.3f}, plain t {cell.plain_coverage:.3f}, width {cell.width:.3f}")
            lowest_all, plain_all = min(lowest_all, low.coverage), min(plain_all, plain_low)
            failing += [f"{name}, n {n}, difference {d:g}, correlation {rho:g}: {c.coverage:.3f}" for (d, rho), c in cells.items() if c.coverage < TARGET]
    print(f"\nlowest coverage over every cell: {lowest_all:.3f} (plain paired t: {plain_all:.3f}); cells under {TARGET}: {len(failing)}")
    for line in failing:
        print(f"  {line}")


if __name__ == "__main__":
    main()
