"""training/choose_decision.py's own arithmetic: how a relevance candidate is weighed and marked,
and how the statements' cascade decides, picks its band and ships it.
The decision it prints is what ships as the default's table (issue 48), so the weighting of
samples and the "no worse than the judge rule on every shape" mark are checked by hand here."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "training"))

import choose_decision  # noqa: E402


def test_per_sample_weights_give_every_sample_the_same_total_and_average_one():
    rows = [{"verifier_logits": [0.0] * 40}, {"verifier_logits": [0.0] * 3}, {"verifier_logits": [0.0]}]
    weights = choose_decision.sample_weights(rows, per_sample=True)
    assert weights is not None
    totals = [w * len(r["verifier_logits"]) for w, r in zip(weights, rows)]
    assert totals == pytest.approx([totals[0]] * 3)
    assert sum(weights) / len(weights) == pytest.approx(1.0)
    assert choose_decision.sample_weights(rows, per_sample=False) is None


def test_no_worse_means_every_shape_at_least_the_judge_rules():
    judge = {"F1 plain": 0.84, "insufficient 10 without gold": 0.17}
    assert choose_decision.no_worse({"F1 plain": 0.84, "insufficient 10 without gold": 0.60}, judge)
    assert not choose_decision.no_worse({"F1 plain": 0.838, "insufficient 10 without gold": 0.90}, judge)


def test_shape_figures_score_selections_and_insufficient_apart():
    rows = [{"shape": "plain", "required": [1]}, {"shape": "plain", "required": [0]}, {"shape": "plain without answer", "required": []}]
    figures = choose_decision.shape_figures(rows, [{1}, {0, 1}, set()])
    assert figures == pytest.approx({"F1 plain": (1.0 + 2 / 3) / 2, "insufficient plain without answer": 1.0})


def test_the_paired_difference_is_the_figures_difference_and_its_interval_is_by_question():
    rows = [{"shape": "plain", "required": [1]}, {"shape": "plain", "required": [0]}, {"shape": "plain without answer", "required": []}, {"shape": "plain", "required": [2]}]
    groups = ["q1", "q1", "q2", "q3"]
    new = choose_decision.sample_values(rows, [{1}, {0}, set(), {2}])
    old = choose_decision.sample_values(rows, [{1}, {0, 1}, {0}, {2}])
    assert new == [("F1 plain", 1.0), ("F1 plain", 1.0), ("insufficient plain without answer", 1.0), ("F1 plain", 1.0)]
    difference, low, high = choose_decision.paired_difference(groups, choose_decision.mean_of_shapes(new), choose_decision.mean_of_shapes(old), draws=400)
    assert difference == pytest.approx(1.0 - choose_decision.figure(rows, [{1}, {0, 1}, {0}, {2}]))
    assert 0.0 <= low <= difference <= high
    same = choose_decision.paired_difference(groups, choose_decision.mean_of_shapes(old), choose_decision.mean_of_shapes(old), draws=50)
    assert same == (0.0, 0.0, 0.0)  # the same decision on both sides: no difference in any resample


def test_the_attribution_figure_on_a_resample_is_the_mean_balanced_accuracy_of_its_sources():
    rows = [{"source": "a", "label": 1}, {"source": "a", "label": 0}, {"source": "b", "label": 1}, {"source": "b", "label": 0}, {"source": "b", "label": 0}]
    of = choose_decision.mean_of_sources(rows, [1, 0, 1, 1, 0])
    assert of(range(5)) == pytest.approx((1.0 + 0.75) / 2)
    assert of([0, 1, 1]) == pytest.approx(1.0)  # source b has no row here: only a counts, repeats included


def test_the_statements_cascade_takes_the_verifier_outside_its_band_and_the_judge_rule_inside():
    rows = [{"verifier_logit": v, "judge_probability": p} for v, p in ((-3.0, 0.9), (-1.0, 0.9), (0.0, 0.1), (2.0, 0.1))]
    verdicts, asked = choose_decision.cascade_attribution(rows, -1.5, 0.5)
    assert verdicts == [0, 1, 0, 1] and asked == 0.5  # the middle two asked the judge


def test_the_best_band_is_the_cheaper_of_equal_figures():
    rows = [{"source": "s", "label": y, "verifier_logit": v, "judge_probability": p} for y, v, p in ((1, 3.0, 0.2), (0, -3.0, 0.9), (1, 0.2, 0.9), (0, 0.1, 0.1))]
    low, high = choose_decision.best_attribution_band(rows)
    verdicts, asked = choose_decision.cascade_attribution(rows, low, high)
    assert verdicts == [1, 0, 1, 0] and asked == 0.5  # only the two the verifier gets wrong ask the judge, though wider bands score the same


def test_a_shipped_band_is_read_back_by_the_stacked_grader_and_only_the_shipped_file_may_ship_one(tmp_path: Path):
    from localeval.graders.stacked import CascadeBand, cascade_band
    from localeval.models.store import DEFAULT_MODEL
    from localeval.verifier import SHIPPED_SHA256, shipped_path

    catalog = tmp_path / "catalog.toml"
    catalog.write_text(choose_decision.CATALOG_FILE.read_text(encoding="utf-8"), encoding="utf-8")
    choose_decision.ship_band({"low": -1.5, "high": 0.5, "judge_share": 0.13}, shipped_path(), catalog)
    tables = next(m for m in choose_decision.tomllib.loads(catalog.read_text(encoding="utf-8"))["model"] if m["name"] == DEFAULT_MODEL)["calibration"]
    assert cascade_band(tables, "attribution", SHIPPED_SHA256) == CascadeBand(-1.5, 0.5)
    other = tmp_path / "other.safetensors"
    other.write_bytes(shipped_path().read_bytes())
    with pytest.raises(SystemExit, match="not the shipped verifier file"):
        choose_decision.ship_band({"low": -1.5, "high": 0.5}, other, catalog)


def test_the_judge_free_candidate_reads_no_judge_feature_and_selects_by_the_threshold_alone():
    assert not any(name.startswith("judge") or name == "answer_stands_alone" for name in choose_decision.NO_JUDGE_FEATURES)
    # the judge's "one of these answers" (judge_none) and its short answer (judge_answer) change nothing
    units = [{"judge_none": -5.0, "judge_answer": 1.0}, {"judge_none": -5.0, "judge_answer": 0.0}]
    assert choose_decision.threshold_only([0.2, 0.4], units, 0.5) == []
    assert choose_decision.threshold_only([0.2, 0.6], units, 0.5) == [1]


def test_the_attribution_choice_runs_whole_and_reports_every_candidate():
    """The whole --task attribution report on made-up claims: every candidate scored, each fitted
    one fitted on all rows too (a relevance-only candidate there once stopped it with a KeyError)."""
    rows = []
    for n in range(40):
        label, source = n % 2, ("scifact", "wice")[n // 20]
        judge = (1.5 if label else -1.0) + (n % 5) * 0.3
        rows.append({"group": f"g{n}", "source": source, "label": label, "judge_probability": float(judge > 0), "verifier_logit": judge - 0.5 + (n % 3),
                     "judge_features": {"judge": judge, "best_coverage": 0.2 + 0.6 * label}})
    report, verdicts = choose_decision.choose_attribution(rows, 0.0)
    assert set(verdicts) == {"judge", "verifier", *choose_decision.attribution_fitted(rows), "cascade"}
    assert all("fitted_on_all" in report["candidates"][name] for name in choose_decision.attribution_fitted(rows))


def test_the_refitted_judge_rule_reads_only_the_judge_rules_features_and_is_written_as_a_calibration_file_the_metric_accepts(tmp_path: Path):
    """The default's candidate (the judge rule's own features refitted on validation rows) must be a
    table the judge rule can use as it is: no verifier reading among its features, and the file
    --write-calibration writes is read and checked as `localeval score --calibration` reads it."""
    from localeval.calibration.combination import checked_calibration
    from localeval.calibration.fitting import Fit
    from localeval.metrics import calibration_tasks, create_metric

    relevance = create_metric("context_relevance", {})
    judge_features = list(relevance.calibration_features)
    rows = [{"judge_features": [dict.fromkeys(judge_features, 0.0)], "verifier_logits": [0.0]}]
    for name, (features, _, _) in choose_decision.fitted_relevance(rows).items():
        if name in choose_decision.JUDGE_REFIT_CANDIDATES:
            left_out = choose_decision.JUDGE_REFIT_CANDIDATES[name][0]
            assert sorted(features) == sorted(f for f in judge_features if f not in left_out)
    kept = [f for f in judge_features if f not in choose_decision.SUBJECT_FEATURES]
    fit = Fit(intercept=-1.0, weights=dict.fromkeys(kept, 0.5))
    path = tmp_path / "candidate.json"
    choose_decision.write_calibration("judge rule refitted (without the subject features)", fit, judge_features, {"figure": 0.6}, path)
    calibration = checked_calibration(str(path), [relevance], calibration_tasks())
    assert calibration is not None
    assert calibration.tables["relevance"]["weights"] == {**dict.fromkeys(judge_features, 0.0), **dict.fromkeys(kept, 0.5)}  # left out: 0
    assert calibration.judge_mismatch(None) is None  # written for the default judge
