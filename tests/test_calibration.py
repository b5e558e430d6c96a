"""The statistics behind the catalog's calibrations (localeval.calibration.fitting), and the model
that applies them (localeval.calibration.combination).

The shipped calibrations are fitted by these functions and the README's figures come
from them: a mistake here would ship a wrong default, so each is checked on cases
whose answer is known by hand.
"""

from __future__ import annotations

import json
import math

import pytest

from localeval.calibration import fitting as calibrate
from localeval.calibration.combination import LogisticModel
from localeval.errors import ConfigError

FEATURES = ("judge", "missing")


def test_auc_counts_ranked_pairs_and_ties_as_half():
    assert calibrate.auc([1, 0], [0.9, 0.1]) == 1.0
    assert calibrate.auc([1, 0], [0.1, 0.9]) == 0.0
    # positives 0.8, 0.4; negatives 0.6, 0.4: wins 1 + 1 + 0 + 0.5 = 2.5 of 4
    assert calibrate.auc([1, 1, 0, 0], [0.8, 0.4, 0.6, 0.4]) == pytest.approx(0.625)
    assert math.isnan(calibrate.auc([1, 1], [0.8, 0.4]))


def test_balanced_accuracy_weighs_both_classes_equally():
    # 9 negatives all right, 1 positive missed: accuracy 0.9, balanced 0.5
    assert calibrate.balanced_accuracy([0] * 9 + [1], [0] * 10) == pytest.approx(0.5)
    assert calibrate.balanced_accuracy([0, 1, 1, 0], [0, 1, 0, 0]) == pytest.approx(0.75)


def test_the_logistic_fit_recovers_a_known_model():
    # Labels drawn from sigmoid(-1 + 2x) at many x: the fit finds about (-1, 2).
    # Each x appears as a positive weighted p and a negative weighted 1 - p: the exact expectation.
    rows, labels, weights = [], [], []
    for i in range(-50, 51):
        x = i / 10
        p = 1 / (1 + math.exp(-(-1 + 2 * x)))
        for outcome, weight in ((1, p), (0, 1 - p)):
            rows.append({"x": x})
            labels.append(outcome)
            weights.append(weight)
    fit = calibrate.fit_logistic(rows, labels, weights, ["x"], l2=0.0)
    assert fit.intercept == pytest.approx(-1, abs=1e-3) and fit.weights["x"] == pytest.approx(2, abs=1e-3)


def test_balancing_weights_give_each_task_and_class_the_same_total():
    labels = [1, 1, 1, 0, 1, 0, 0, 0, 0, 0]
    tasks = ["a", "a", "a", "a", "b", "b", "b", "b", "b", "b"]
    weights = calibrate.balancing_weights(labels, tasks)
    totals = {}
    for w, label, task in zip(weights, labels, tasks):
        totals[(task, label)] = totals.get((task, label), 0) + w
    assert len(set(round(v, 9) for v in totals.values())) == 1


def test_folds_keep_groups_together_and_cover_every_row():
    groups = [f"g{i // 3}" for i in range(30)]
    folds = calibrate.folds_by_group(groups, folds=5)
    for group in set(groups):
        assert len({f for f, g in zip(folds, groups) if g == group}) == 1
    assert set(folds) == set(range(5))
    assert folds == calibrate.folds_by_group(groups, folds=5)  # deterministic


def test_cross_validated_predictions_never_see_their_own_fold():
    rows = [{"x": float(i)} for i in range(20)]
    groups = [str(i) for i in range(20)]

    def fit(train):
        seen = set(train)
        return lambda test: [1.0 if i in seen else 0.0 for i in test]

    assert list(calibrate.cross_validated(rows, groups, fit, folds=4)) == [0.0] * 20


def test_selection_f1():
    assert calibrate.selection_f1({1, 2}, {2, 3}) == (0.5, 0.5, 0.5)
    assert calibrate.selection_f1(set(), {1}) == (0.0, 0.0, 0.0)  # insufficient information scores 0


def test_the_selection_threshold_is_searched_with_the_metrics_own_rule():
    # Four questions answered by their first unit, six answered by none; one feature cannot
    # tell them apart (P ~ 0.4 for a first unit), a second one, outside the model, can.
    rows = [[{"x": 1.0, "answers": float(i < 4)}, {"x": 0.0, "answers": float(i < 4)}] for i in range(10)]
    gold = [{0} if i < 4 else set() for i in range(10)]

    def plain(probabilities, features, threshold):
        return [i for i, p in enumerate(probabilities) if p >= threshold]

    def with_fallback(probabilities, features, threshold):
        """Plain thresholding, then the top unit where the second feature says one answers."""
        selected = plain(probabilities, features, threshold)
        return selected or ([max(range(len(probabilities)), key=probabilities.__getitem__)] if features[0]["answers"] else [])

    plain_fit = calibrate.fit_selection(rows, gold, ["x"], plain)
    rule_fit = calibrate.fit_selection(rows, gold, ["x"], with_fallback)
    # Thresholding alone must select every first unit (F1 1 on four rows beats "insufficient" on six
    # at weight 0.25); with the rule, a threshold above P lets the rule answer and stay silent right.
    assert plain_fit.probabilities(rows[0])[0] >= 0.5
    assert rule_fit.probabilities(rows[0])[0] < 0.5
    assert [set(with_fallback(rule_fit.probabilities(r).tolist(), r, 0.5)) for r in rows] == gold


def test_the_logistic_model_applies_and_validates_a_catalog_table():
    model = LogisticModel.from_table({"intercept": -1.0, "weights": {"judge": 2.0}}, "here", ["judge"])
    assert model.probability({"judge": 0.5, "unused": 9.0}) == pytest.approx(0.5)
    assert model.probability({"judge": 1e9}) < 1.0  # bounded, never overflows
    with pytest.raises(ConfigError, match="here"):
        LogisticModel.from_table({"weights": {"judge": 1.0}}, "here", ["judge"])
    with pytest.raises(ConfigError, match="finite"):
        LogisticModel.from_table({"intercept": float("nan"), "weights": {"judge": 1.0}}, "here", ["judge"])


def test_a_calibration_must_weigh_exactly_the_metrics_features():
    with pytest.raises(ConfigError, match="no such feature bogus"):
        LogisticModel.from_table({"intercept": 0.0, "weights": {"judge": 1.0, "bogus": 1.0}}, "here", ["judge"])
    with pytest.raises(ConfigError, match="no weight for coverage"):
        LogisticModel.from_table({"intercept": 0.0, "weights": {"judge": 1.0}}, "here", ["judge", "coverage"])


@pytest.mark.parametrize("value", [1e308, -1e308, 1001.0, "0.5", True, None, float("nan")])
def test_a_calibration_coefficient_out_of_bounds_or_not_a_number_is_refused(value):
    with pytest.raises(ConfigError, match="calibration 'x'"):
        LogisticModel.from_table({"intercept": 0.0, "weights": {"judge": value, "missing": 0.0}}, "calibration 'x'", FEATURES)
    with pytest.raises(ConfigError, match="calibration 'x'"):
        LogisticModel.from_table({"intercept": value, "weights": {"judge": 1.0, "missing": 0.0}}, "calibration 'x'", FEATURES)


def test_the_largest_allowed_weights_still_give_a_probability():
    model = LogisticModel.from_table({"intercept": 1000, "weights": {"judge": 1000, "missing": -1000}}, "c", FEATURES)
    assert model.probability({"judge": -1e6, "missing": 1e6}) == pytest.approx(0.0, abs=1e-12)


def test_calibrate_says_why_nothing_can_be_fitted_instead_of_crashing():
    from localeval.calibration.fitting import fit_logistic
    from localeval.errors import LocalevalError
    from localeval.metrics.relevance import DEFAULT_CALIBRATION
    from localeval.run.calibrate import LabelledRows, fit_relevance

    with pytest.raises(LocalevalError, match="nothing to fit"):
        fit_relevance(LabelledRows(questions=[[] for _ in range(25)], required=[set() for _ in range(25)]), DEFAULT_CALIBRATION)
    one_class = [[{"overlap": 0.5}] for _ in range(25)]
    with pytest.raises(LocalevalError, match="no sentence is labelled required"):
        fit_relevance(LabelledRows(questions=one_class, required=[set() for _ in range(25)]), DEFAULT_CALIBRATION)
    with pytest.raises(LocalevalError, match="cannot be fitted"):
        fit_logistic([], [], [], ["a"])


def test_a_bad_table_in_a_calibration_file_names_the_file(tmp_path):
    from localeval.calibration.combination import CALIBRATION_FORMAT, CALIBRATION_VERSION, checked_calibration
    from localeval.metrics import create_metric

    path = tmp_path / "cal.json"
    path.write_text(json.dumps({"format": CALIBRATION_FORMAT, "version": CALIBRATION_VERSION, "tables": {"attribution": {"intercept": 0, "weights": {"judge": 1}}}}))
    with pytest.raises(ConfigError, match=f"{path}: calibration 'attribution': no weight for"):
        checked_calibration(str(path), [create_metric("context_recall")], ["attribution", "relevance"])
