"""The paired difference of two runs' scores on the same samples, with its 95% interval.

Two runs of a pipeline that scored the same questions are not two independent samples: a hard
question is hard for both, so most of each run's spread cancels in the per-sample difference. The
interval of the mean difference is read on those differences (n - 1 degrees of freedom), which is
why it is several times narrower than the two runs' own intervals side by side, and why a change
those overlapping intervals hide can be shown.

The differences are bounded (in [-1, 1]) and lumpy: a binary metric's are -1, 0 or 1, and at
n = 10 all ten may be 0. A plain paired t interval then has no width and would call "no change"
certain; with a few +1 among many 0 it covers the truth in as few as 71% of draws (the Wald
interval's failure). So the variance is computed as if two more pairs disagreed with the mean
difference, one above it and one below, and the interval uses Student's t with n - 1 degrees of
freedom (the mean's small-sample rule, localeval.stats.intervals, with two pseudo-pairs, not one).

How far the pseudo-pairs sit from the mean is the size the differences themselves show (issue 76):
the root mean square of the non-zero differences, pulled toward the full range 1 while few of them
are non-zero (the pull halves with each non-zero difference). Differences that are all -1, 0 or +1 therefore get
exactly the old rule (pseudo-pairs at +-1), and ten zeros still give +-0.32. Differences spread
over small steps (-0.5, -0.33, 0.25 ...) get pseudo-pairs of their own size: the old fixed +-1 made
such intervals up to 2.4 times as wide as a plain paired t and left a 16-question run with 7 drops
and no rise "no difference shown". benchmarks/compare_coverage.py measures this rule, the old one
and the plain paired t on the same grid (docs/compare.md): every cell covers at least 0.94.

Kept in plain Python (math.fsum): `localeval compare` is imported by the command line, and a run
that needs no numpy must not load it; 20,000 pairs take milliseconds.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from enum import Enum
from typing import Any

from localeval.stats.intervals import t975

# The pseudo-pairs' squared deviations from the mean difference when the differences show no size of
# their own (all 0, or all -1/+1): two more pairs, one 1 above the mean difference and one 1 below.
PSEUDO_SQUARES = 2.0
# How many differences of the full range (1) the pseudo-pairs' size counts with ONE non-zero
# difference seen; the count halves with each more (see pseudo_squares).
FULL_RANGE_WEIGHT = 2.0


class Verdict(str, Enum):
    """What the interval shows: never "no regression" where the data cannot tell."""

    BETTER = "better"  # the whole interval is above 0
    WORSE = "worse"  # the whole interval is below 0
    NO_DIFFERENCE = "no difference shown"  # the interval holds 0 (or there is none): not "the same"


def pseudo_squares(differences: Sequence[float]) -> float:
    """The two pseudo-pairs' squared deviations from the mean difference: 2 x their size squared.

    With k non-zero differences, their size squared is the mean of those differences' squares and
    of FULL_RANGE_WEIGHT x 2^(1 - k) more differences of the full range (1): two such with one
    non-zero difference, one with two, 1/32 with seven. With no non-zero difference the size is 1;
    with every non-zero difference at +-1 it is 1 too (the old rule)."""
    non_zero = [d * d for d in differences if d != 0]
    if not non_zero:
        return PSEUDO_SQUARES
    full_range = FULL_RANGE_WEIGHT * 2.0 ** (1 - len(non_zero))
    return 2.0 * (math.fsum(non_zero) + full_range) / (len(non_zero) + full_range)


def difference_half_width(count: int, squares: float, pseudo: float) -> float:
    """The 95% half-width of a mean of `count` paired differences whose squared deviations from
    their mean sum to `squares`: Student's t with count - 1 degrees of freedom, on the variance
    with the two pseudo-pairs' squares (`pseudo`, from pseudo_squares) added to `squares`."""
    return t975(count - 1) * math.sqrt((max(squares, 0.0) + pseudo) / count / count)


def mean_half_width(count: int, squares: float) -> float:
    """The half-width of one run's own mean interval, with the mean's rule (localeval.stats.intervals):
    what the unpaired comparison adds up."""
    return t975(count - 1) * math.sqrt((max(squares, 0.0) + count / (count + 1)) / count / count)


@dataclass(frozen=True)
class PairedDifference:
    """One metric compared over the samples both runs scored: `count` pairs, each run's mean,
    the mean difference (candidate minus base), its standard error and 95% interval, how many
    samples went up, down or stayed level, and, for the record, the interval that two unpaired
    means would give (`unpaired_ci95`: the square root of the two runs' own half-widths squared)."""

    count: int
    base_mean: float | None
    candidate_mean: float | None
    mean: float | None
    stderr: float | None
    ci95: tuple[float, float] | None
    unpaired_ci95: tuple[float, float] | None
    up: int
    down: int
    level: int
    # The interval's half-width: the smallest difference (either way) this many pairs, with this
    # spread, could show. A change smaller than it reads "no difference shown" whatever it is.
    smallest_shown: float | None = None

    @property
    def verdict(self) -> Verdict:
        if self.ci95 is None:
            return Verdict.NO_DIFFERENCE
        low, high = self.ci95
        if low > 0:
            return Verdict.BETTER
        if high < 0:
            return Verdict.WORSE
        return Verdict.NO_DIFFERENCE

    @property
    def decimals(self) -> int:
        """How many decimals show this difference: 3, or, when the interval's half-width is below
        0.005 (thousands of pairs: a retrieval run), enough for its first two significant digits, at
        most 6. Three decimals would print such a comparison as -0.000 (-0.000 to +0.000)."""
        half = self.smallest_shown
        if not half or half >= 0.005:
            return 3
        return min(6, 1 - math.floor(math.log10(half)))

    @property
    def width_ratio(self) -> float | None:
        """The unpaired interval's width over the paired one's: how much the pairing narrowed it."""
        if self.ci95 is None or self.unpaired_ci95 is None or self.ci95[1] <= self.ci95[0]:
            return None
        return (self.unpaired_ci95[1] - self.unpaired_ci95[0]) / (self.ci95[1] - self.ci95[0])

    def to_json_dict(self) -> dict[str, Any]:
        return {
            "paired": self.count, "base_mean": self.base_mean, "candidate_mean": self.candidate_mean, "difference": self.mean,
            "stderr": self.stderr, "ci95": list(self.ci95) if self.ci95 else None,
            "unpaired_ci95": list(self.unpaired_ci95) if self.unpaired_ci95 else None, "width_ratio": self.width_ratio,
            "up": self.up, "down": self.down, "level": self.level, "verdict": self.verdict.value,
            "smallest_shown": self.smallest_shown,
        }


def _squares(values: Sequence[float], mean: float) -> float:
    return math.fsum((value - mean) ** 2 for value in values)


def paired_difference(base: Sequence[float], candidate: Sequence[float], *, one_pipeline: bool = False) -> PairedDifference:
    """The paired comparison of `candidate` against `base`, each a score in [0, 1] per sample, in
    the same order (one pair per index). Fewer than 2 pairs have no interval.

    `one_pipeline`: the two runs scored the same input file with the same setup, so they are one
    pipeline's outputs scored twice. Where every difference is then 0, the difference IS 0 (no
    other question could differ: there is no second pipeline), and the interval is 0-0; a
    difference that is not 0 is the scorer's own variation and gets the interval as usual."""
    if len(base) != len(candidate):
        raise ValueError(f"{len(base)} base scores and {len(candidate)} candidate scores: a pair needs one of each")
    count = len(base)
    differences = [c - b for b, c in zip(base, candidate)]
    up = sum(1 for d in differences if d > 0)
    down = sum(1 for d in differences if d < 0)
    if count == 0:
        return PairedDifference(0, None, None, None, None, None, None, 0, 0, 0)
    base_mean, candidate_mean = math.fsum(base) / count, math.fsum(candidate) / count
    mean = math.fsum(differences) / count
    if count < 2:
        return PairedDifference(count, base_mean, candidate_mean, mean, None, None, None, up, down, count - up - down)
    squares = _squares(differences, mean)
    if one_pipeline and up == down == 0:
        return PairedDifference(count, base_mean, candidate_mean, 0.0, 0.0, (0.0, 0.0), (0.0, 0.0), 0, 0, count, 0.0)
    stderr = math.sqrt(squares / (count - 1) / count)
    half = difference_half_width(count, squares, pseudo_squares(differences))
    unpaired = math.hypot(mean_half_width(count, _squares(base, base_mean)), mean_half_width(count, _squares(candidate, candidate_mean)))
    return PairedDifference(
        count, base_mean, candidate_mean, mean, stderr, (max(-1.0, mean - half), min(1.0, mean + half)),
        (max(-1.0, mean - unpaired), min(1.0, mean + unpaired)), up, down, count - up - down, half,
    )
