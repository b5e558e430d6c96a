"""How many questions `localeval compare` needs to show a drop of 0.02, 0.05 or 0.10.

A drop is shown when the whole 95% interval of the paired difference is below 0, so a run can show
no drop smaller than its interval's half-width (compare prints it per metric as "with n = 16 and
this spread, a drop smaller than X cannot be shown"). The half-width depends on n and on the
spread of the per-question differences: their standard deviation, which compare's JSON gives as
`stderr` x sqrt(n). Typical spreads: 0.1 where few questions move (a retriever change that touches
a few in ten), 0.2-0.3 where many move a little or some move a lot, 0.5 where most questions flip
between 0 and 1.

For each spread and drop the table gives two numbers of questions, with the shipped interval
(localeval.stats.paired: Student's t on the differences plus two pseudo-pairs, here taken at the
differences' own root mean square, sqrt(spread^2 + drop^2), as they are once most differences are
not 0):

- "can be shown": the smallest n whose half-width is at most the drop, so that a run whose mean
  difference equals the true drop is called worse (about half of such runs are);
- "80% of runs": the smallest n at which the half-width plus 0.84 standard errors is at most the
  drop, so that 4 runs in 5 call it worse (the usual power calculation, normal approximation).

It also counts, over every set of seven drops drawn from the steps a metric's scores take (0.2 to
1) among eighteen pairs with no rise, the sets that the shipped interval, the earlier rule
(pseudo-pairs at +-1) and a plain paired t do not call worse.

    python benchmarks/compare_power.py
    python benchmarks/compare_power.py --spreads 0.15 0.4 --drops 0.03
"""

from __future__ import annotations

import argparse
import itertools
import math
from statistics import NormalDist

from localeval.stats.intervals import t975
from localeval.stats.paired import PSEUDO_SQUARES, Verdict, difference_half_width, paired_difference

SPREADS = (0.1, 0.2, 0.3, 0.5)
DROPS = (0.02, 0.05, 0.10)
POWER = 0.8
LARGEST = 1_000_000
DROP_STEPS = (0.2, 0.25, 0.333, 0.5, 0.667, 0.75, 1.0)


def half_width(n: int, spread: float, drop: float) -> float:
    """The shipped interval's half-width for n differences of this spread around this mean."""
    return difference_half_width(n, (n - 1) * spread * spread, 2.0 * (spread * spread + drop * drop))


def questions_needed(spread: float, drop: float, power: float | None = None) -> int:
    """The smallest n (found by bisection) at which a drop of `drop` is shown: at the mean, or in
    `power` of runs."""
    extra = 0.0 if power is None else NormalDist().inv_cdf(power)

    def shown(n: int) -> bool:
        return half_width(n, spread, drop) + extra * spread / math.sqrt(n) <= drop

    low, high = 2, LARGEST
    if not shown(high):
        return LARGEST
    while low < high:
        middle = (low + high) // 2
        low, high = (low, middle) if shown(middle) else (middle + 1, high)
    return low


def seven_drops_not_shown() -> tuple[int, int, int, int]:
    """Over every multiset of seven drops from DROP_STEPS beside eleven 0s: how many sets there are,
    and how many the shipped interval, the earlier rule and a plain paired t leave short of worse."""
    sets = shipped = earlier = plain = 0
    for drops in itertools.combinations_with_replacement(DROP_STEPS, 7):
        differences = [-drop for drop in drops] + [0.0] * 11
        n = len(differences)
        mean = math.fsum(differences) / n
        squares = math.fsum((d - mean) ** 2 for d in differences)
        sets += 1
        shipped += paired_difference([1.0] * n, [1.0 + d for d in differences]).verdict is not Verdict.WORSE
        earlier += mean + t975(n - 1) * math.sqrt((squares + PSEUDO_SQUARES) / n / n) >= 0
        plain += mean + t975(n - 1) * math.sqrt(squares / (n - 1) / n) >= 0
    return sets, shipped, earlier, plain


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--spreads", type=float, nargs="+", default=list(SPREADS), help="standard deviations of the per-question differences")
    parser.add_argument("--drops", type=float, nargs="+", default=list(DROPS), help="drops of the mean to show")
    args = parser.parse_args()
    print("| spread of the differences | " + " | ".join(f"drop {drop:g}: can be shown / 80% of runs" for drop in args.drops) + " |")
    print("|---|" + "---|" * len(args.drops))
    for spread in args.spreads:
        cells = [f"{questions_needed(spread, drop):,} / {questions_needed(spread, drop, POWER):,}" for drop in args.drops]
        print(f"| {spread:g} | " + " | ".join(cells) + " |")
    sets, shipped, earlier, plain = seven_drops_not_shown()
    print(f"\nseven drops from {DROP_STEPS} among eighteen pairs, no rise: {sets:,} sets; not called worse by the shipped "
          f"interval {shipped:,}, the earlier rule {earlier:,}, a plain paired t {plain:,}")


if __name__ == "__main__":
    main()
