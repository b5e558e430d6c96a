"""A mean comes with its uncertainty: standard error and an approximate 95% interval, in the
summary JSON and every report, and a --min-mean gate inside that interval says so."""

from __future__ import annotations

import math
import statistics

from hypothesis import given
from hypothesis import strategies as st

from localeval.reports.table import summary_table
from localeval.summary import ScoreDistribution


@given(st.lists(st.floats(min_value=0.0, max_value=1.0), min_size=2, max_size=200))
def test_the_standard_error_is_the_sample_deviation_over_root_n(values):
    distribution = ScoreDistribution()
    for value in values:
        distribution.add(value)
    expected = statistics.stdev(values) / math.sqrt(len(values))
    assert math.isclose(distribution.standard_error() or 0.0, expected, rel_tol=1e-6, abs_tol=1e-12)
    low, high = distribution.interval() or (None, None)
    assert 0.0 <= low <= (distribution.mean() or 0.0) + 1e-12 and (distribution.mean() or 0.0) - 1e-12 <= high <= 1.0


def test_one_score_has_no_interval():
    distribution = ScoreDistribution()
    distribution.add(0.5)
    assert distribution.standard_error() is None and distribution.interval() is None


def test_the_table_shows_the_interval_and_warns_when_a_gate_sits_inside_it():
    metric = {"count": 40, "scored": 40, "mean": 0.62, "stderr": 0.05, "ci95": [0.522, 0.718], "median": 0.6, "nan": 0, "errors": 0, "min_mean": 0.6, "mean_ok": True}
    table = summary_table({"samples": 40, "input_errors": 0, "thresholds_met": True, "nothing_scored": False, "metrics": {"context_recall": metric}})
    assert "0.522-0.718" in table and "within the mean's 95% interval" in table
