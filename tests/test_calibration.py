"""The statistics behind the catalog's calibrated thresholds (benchmarks/accuracy.py).

The default judge's decision threshold comes from `best_threshold`, and the README's
AUC figures from `auc`: a mistake here would ship a wrong default, so they are checked
on cases whose answer is known by hand.
"""

from __future__ import annotations

import importlib.util
import math
from pathlib import Path

import pytest

_SPEC = importlib.util.spec_from_file_location("accuracy", Path(__file__).resolve().parents[1] / "benchmarks" / "accuracy.py")
assert _SPEC and _SPEC.loader
accuracy = importlib.util.module_from_spec(_SPEC)
_SPEC.loader.exec_module(accuracy)


def test_auc_counts_ranked_pairs_and_ties_as_half():
    assert accuracy.auc([(1, 0.9), (0, 0.1)]) == 1.0
    assert accuracy.auc([(1, 0.1), (0, 0.9)]) == 0.0
    # positives 0.8, 0.4; negatives 0.6, 0.4: wins 1 + 1 + 0 + 0.5 = 2.5 of 4
    assert accuracy.auc([(1, 0.8), (1, 0.4), (0, 0.6), (0, 0.4)]) == pytest.approx(0.625)
    assert math.isnan(accuracy.auc([(1, 0.8), (1, 0.4)]))


def test_best_threshold_separates_the_classes_when_they_can_be_separated():
    threshold, mean_balanced = accuracy.best_threshold([[(0, 0.2), (0, 0.6), (1, 0.7), (1, 0.9)]])
    assert threshold == pytest.approx(0.65)
    assert mean_balanced == 1.0


def test_best_threshold_maximises_the_mean_over_tasks_not_one_task():
    # Task a is separated by any threshold in (0.3, 0.8]; task b only in (0.7, 0.8].
    task_a = [(0, 0.3), (1, 0.8)]
    task_b = [(0, 0.7), (1, 0.8)]
    threshold, mean_balanced = accuracy.best_threshold([task_a, task_b])
    assert 0.7 < threshold <= 0.8
    assert mean_balanced == 1.0


def test_balanced_accuracy_weighs_both_classes_equally():
    # 9 negatives all right, 1 positive missed: accuracy 0.9, balanced 0.5
    pairs = [(0, 0)] * 9 + [(1, 0)]
    result = accuracy.balanced(pairs)
    assert result["accuracy"] == pytest.approx(0.9)
    assert result["balanced_accuracy"] == pytest.approx(0.5)
    assert result["confusion"] == {"tp": 0, "fn": 1, "fp": 0, "tn": 9}
