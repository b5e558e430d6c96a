"""The 95% interval of a mean of scores in [0, 1], from the running moments the summary keeps.

Apart from the accumulation (localeval.stats.summary) so that the rule is read in one place: the
interval follows the small-sample rule of the prediction-powered interval's labelled part
(localeval.stats.ppi). Its variance is computed as if one more sample disagreed with the others by the
whole [0, 1] range, and it uses Student's t with n - 1 degrees of freedom. Two samples of 1.0 have
no spread, and a plain mean +- 1.96 standard errors would call 1.0 certain; with the rule a handful
of samples always gives the whole 0-1 (localeval.stats.gates.FEWEST_TO_SETTLE), and the extra fades as 1 / n.
"""

from __future__ import annotations

import math

from localeval.stats.ppi import t_quantile_975

# Student's t 0.975 quantiles where ppi's expansion is not yet within 2e-5 of them (below 9 degrees of freedom)
_T975_FEW = {1: 12.706205, 2: 4.302653, 3: 3.182446, 4: 2.776445, 5: 2.570582, 6: 2.446912, 7: 2.364624, 8: 2.306004}


def t975(freedom: int) -> float:
    """Student's t two-sided 95% quantile with `freedom` degrees of freedom (>= 1)."""
    return _T975_FEW.get(freedom) or t_quantile_975(freedom)


def narrowest_half_width(count: int) -> float:
    """The half-width of the 95% interval of `count` scores that all agree: the rule's extra
    sample alone ((n / (n + 1)) / n / n of variance), times t."""
    return t975(count - 1) * math.sqrt(1.0 / ((count + 1) * count))


def mean_interval(count: int, mean: float | None, squares: float) -> tuple[float, float] | None:
    """An approximate 95% interval for the mean of the population `count` scores come from
    (within [0, 1]), from their `mean` and sum of squared deviations `squares`: how far the mean
    of another sample of the same pipeline may fall. The variance as if one more score disagreed
    by the whole range, ((n - 1) var + n / (n + 1)) / n, and Student's t with n - 1 degrees of
    freedom. None below 2 scores."""
    if mean is None or count < 2:
        return None
    half = t975(count - 1) * math.sqrt((max(squares, 0.0) + count / (count + 1)) / count / count)
    return max(0.0, mean - half), min(1.0, mean + half)
