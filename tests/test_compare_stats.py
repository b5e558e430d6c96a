"""The paired difference's arithmetic and its gate, on numbers worked by hand."""

from __future__ import annotations

import math

import pytest

from localeval.stats.gates import drop_gate
from localeval.stats.intervals import t975
from localeval.stats.paired import PSEUDO_SQUARES, PairedDifference, Verdict, paired_difference, pseudo_squares


def test_ten_equal_pairs_that_do_not_come_from_one_pipeline_never_give_a_zero_width_interval():
    found = paired_difference([1.0] * 10, [1.0] * 10)
    half = t975(9) * math.sqrt(PSEUDO_SQUARES / 100)
    assert found.ci95 == pytest.approx((-half, half)) and found.verdict is Verdict.NO_DIFFERENCE
    assert half == pytest.approx(0.320, abs=0.001)


def test_one_pipelines_equal_pairs_are_exactly_zero_but_its_differences_are_not_trusted_blindly():
    assert paired_difference([0.5, 1.0], [0.5, 1.0], one_pipeline=True).ci95 == (0.0, 0.0)
    varied = paired_difference([0.5, 1.0, 1.0], [0.5, 1.0, 0.0], one_pipeline=True)
    assert varied.ci95 is not None and varied.ci95[0] < varied.ci95[1]


def test_the_interval_is_the_mean_difference_plus_minus_t_times_the_floored_standard_error():
    base, candidate = [0.0, 0.5, 1.0, 1.0, 0.5, 0.0], [0.5, 0.5, 1.0, 0.0, 1.0, 1.0]
    found = paired_difference(base, candidate)
    d = [c - b for b, c in zip(base, candidate)]
    mean = sum(d) / 6
    squares = sum((x - mean) ** 2 for x in d)
    # non-zero differences 0.5, -1, 0.5, 1 (k = 4): their squares and 2 x 2^-3 differences of 1, averaged
    assert pseudo_squares(d) == pytest.approx(2 * (0.25 + 1 + 0.25 + 1 + 0.25) / 4.25)
    half = t975(5) * math.sqrt((squares + pseudo_squares(d)) / 36)
    assert found.smallest_shown == pytest.approx(half)
    assert found.mean == pytest.approx(mean) and found.ci95 == pytest.approx((mean - half, min(1.0, mean + half)))
    assert (found.up, found.down, found.level) == (3, 1, 2) and found.stderr == pytest.approx(math.sqrt(squares / 5 / 6))


def test_differences_of_minus_one_zero_and_one_keep_pseudo_pairs_at_the_full_range():
    assert pseudo_squares([0.0, 1.0, -1.0, 0.0, 1.0]) == PSEUDO_SQUARES
    assert pseudo_squares([0.0] * 10) == PSEUDO_SQUARES
    # one small non-zero difference shows little size of its own: two differences of the full range count beside it
    assert pseudo_squares([0.0] * 9 + [0.1]) == pytest.approx(2 * (0.01 + 2.0) / 3)


def test_pseudo_pairs_take_the_size_of_differences_that_show_one():
    drops = [-0.25] * 8 + [0.0] * 8
    # eight differences of 0.25: 2 x 2^-7 differences of the full range count beside them
    assert pseudo_squares(drops) == pytest.approx(2 * (8 * 0.0625 + 1 / 64) / (8 + 1 / 64))


def test_sixteen_questions_with_seven_drops_and_no_rise_are_worse():
    """Issue 76's example: string context precision, 7 drops, nine 0s (a plain paired t gives -0.322 to -0.064)."""
    drops = [-0.5, -0.5, -0.5, -0.5, -0.583, -0.333, -0.167] + [0.0] * 9
    found = paired_difference([0.7] * 16, [0.7 + d for d in drops])
    assert found.verdict is Verdict.WORSE and found.ci95 is not None
    assert found.ci95[0] == pytest.approx(-0.345, abs=0.001) and found.ci95[1] == pytest.approx(-0.040, abs=0.001)


@pytest.mark.parametrize("size", [1.0, 0.5, 0.333, 0.25, 0.1, 0.05])
def test_eighteen_pairs_with_seven_equal_drops_and_no_rise_are_worse_whatever_the_drop(size: float):
    found = paired_difference([0.9] * 18, [0.9 - size] * 7 + [0.9] * 11)
    assert found.verdict is Verdict.WORSE


def test_too_few_pairs_have_no_interval_and_no_verdict():
    assert paired_difference([], []).ci95 is None
    one = paired_difference([0.0], [1.0])
    assert one.ci95 is None and one.mean == 1.0 and one.verdict is Verdict.NO_DIFFERENCE
    with pytest.raises(ValueError):
        paired_difference([0.0], [])


def test_every_pair_up_by_one_is_better_at_ten_and_correlated_runs_narrow_the_interval():
    assert paired_difference([0.0] * 10, [1.0] * 10).verdict is Verdict.BETTER
    base = [0.1 * (i % 10) for i in range(100)]
    found = paired_difference(base, [min(1.0, b + 0.05) for b in base])
    assert found.verdict is Verdict.BETTER and found.width_ratio is not None and found.width_ratio > 3


@pytest.mark.parametrize(
    ("on", "interval", "mean", "ok"),
    [
        ("fail-if-confidently-below", (-0.2, -0.06), -0.1, False),  # worse by more than 0.05 with confidence
        ("fail-if-confidently-below", (-0.2, -0.04), -0.1, True),  # could be within 0.05: the benefit of the doubt
        ("pass-if-confidently-above", (-0.04, 0.1), 0.0, True),  # shown to cost at most 0.05
        ("pass-if-confidently-above", (-0.06, 0.1), 0.0, False),  # not shown
        ("mean", (-0.2, 0.1), -0.05, True),
        ("mean", (-0.2, 0.1), -0.06, False),
    ],
)
def test_the_drop_gate_modes(on, interval, mean, ok):
    assert drop_gate(on, 0.05, paired=50, mean=mean, interval=interval, uncompared=0).ok is ok


def test_a_sample_not_compared_or_no_interval_fails_the_drop_gate_with_its_reason():
    gate = drop_gate("fail-if-confidently-below", 0.5, paired=50, mean=0.0, interval=(-0.1, 0.1), uncompared=2)
    assert not gate.ok and "2 sample(s) could not be compared" in (gate.reason or "")
    gate = drop_gate("pass-if-confidently-above", 0.5, paired=1, mean=0.0, interval=None, uncompared=0)
    assert not gate.ok and "an interval needs 2" in (gate.reason or "")


def test_thousands_of_pairs_are_printed_with_the_decimals_their_interval_needs():
    """A retrieval comparison of 20,000 queries printed -0.000 (-0.000 to +0.000): the difference
    is now written to its interval's first two significant digits (at most 6 decimals); an
    interval of 0.005 or wider keeps 3."""
    from localeval.comparison.compare import MetricComparison
    from localeval.reports.comparison import difference_interval, signed

    base = [0.5] * 20_000
    candidate = [0.5] * 18_000 + [0.6] * 1_000 + [0.41] * 1_000
    found = paired_difference(base, candidate)
    assert found.ci95 is not None and found.smallest_shown == pytest.approx(0.000417, abs=0.000001) and found.decimals == 5
    assert difference_interval(found.ci95, 3) == "+0.000 to +0.001" and difference_interval(found.ci95, found.decimals) == "+0.00008 to +0.00092"
    assert signed(found.mean, found.decimals) == "+0.00050"
    sentence = MetricComparison("ndcg_at_k", found, (), 0, None, (), ()).sentence()
    assert sentence == "better: +0.00050 (95% interval +0.00008 to +0.00092)"
    assert paired_difference([0.0, 0.5, 1.0] * 10, [0.5, 0.5, 1.0] * 10).decimals == 3
    tiny = PairedDifference(10**8, 0.5, 0.5, 0.0, 1e-9, (-1e-8, 1e-8), (-1e-8, 1e-8), 0, 0, 10**8, 1e-8)  # far below 1e-6: six decimals at most
    assert tiny.decimals == 6
    figures = MetricComparison("ndcg_at_k", found, (), 0, None, (), ()).to_json_dict()  # the JSON keeps every figure unrounded
    assert figures["ci95"] == list(found.ci95) and figures["difference"] == found.mean and figures["smallest_shown"] == found.smallest_shown
