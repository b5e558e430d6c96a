"""The prediction-powered interval (localeval.stats.ppi) keeps its 95% promise across the range of human
means, near 0 and 1 as near the middle: the labelled part's spread is read at the Agresti-Coull
mean, so labels that are nearly all 0 (or 1) do not make the interval shrink onto them."""

from __future__ import annotations

import json
import math
import statistics

import numpy as np
import pytest
from click.testing import CliRunner
from conftest import run_score, statement_labels
from hypothesis import given, settings
from hypothesis import strategies as st

from localeval.cli import cli
from localeval.stats.ppi import MIN_LABELS, prediction_powered, t_quantile_975


def test_the_labelled_spread_is_read_at_the_agresti_coull_mean_by_hand():
    # 10 labelled samples (metric f, human h; human mean 0.3) and 6 unlabelled metric scores.
    pairs = [(0.9, 1.0), (0.8, 1.0), (0.7, 0.0), (0.6, 0.0), (0.4, 0.0), (0.3, 0.0), (0.9, 1.0), (0.2, 0.0), (0.5, 0.0), (0.1, 0.0)]
    unlabelled = [0.9, 0.1, 0.5, 0.7, 0.3, 0.6]
    every = [f for f, _ in pairs] + unlabelled
    figures = prediction_powered(len(every), statistics.fmean(every), statistics.variance(every), pairs)
    f, h = [p[0] for p in pairs], [p[1] for p in pairs]
    n, big_n, t9 = len(pairs), len(unlabelled), 2.262157
    # The labels' spread scaled by m (1 - m) / (h (1 - h)), m = (n h + t^2/2) / (n + t^2): 0.3 -> 0.3695.
    pulled = (n * 0.3 + t9**2 / 2) / (n + t9**2)
    scale = pulled * (1 - pulled) / (0.3 * 0.7)
    shrink = (n - 1) / n**2 * scale
    weight = shrink * statistics.covariance(h, f) / (shrink * statistics.variance(f) + statistics.variance(unlabelled) / big_n)
    assert 0 < weight < 1 and math.isclose(figures.weight, weight, rel_tol=1e-5)
    rectified = [y - weight * x for x, y in pairs]
    estimate = weight * statistics.fmean(unlabelled) + statistics.fmean(rectified)
    error = math.sqrt(weight**2 * statistics.variance(unlabelled) / big_n + ((n - 1) * statistics.variance(rectified) * scale + n / (n + 1)) / n**2)
    alone = math.sqrt(((n - 1) * statistics.variance(h) * scale + n / (n + 1)) / n**2)
    assert math.isclose(figures.mean, estimate, rel_tol=1e-5) and math.isclose(figures.stderr, error, rel_tol=1e-5)
    assert figures.ci95 == pytest.approx([max(0.0, estimate - t9 * error), estimate + t9 * error], abs=1e-4)
    assert figures.labels_only_ci95 == pytest.approx([max(0.0, 0.3 - t9 * alone), 0.3 + t9 * alone], abs=1e-4)
    assert figures.width_ratio < 1 and math.isclose(figures.width_ratio, error / alone, rel_tol=1e-6)


def test_fifty_labels_of_0_do_not_rule_out_a_human_mean_of_0_05():
    # By hand: m = (t^2/2) / (50 + t^2) = 0.03737 (t = 2.0096, 49 degrees of freedom); standard error
    # sqrt((50 m (1 - m) + 50/51) / 50^2) = 0.03334; upper bound 0.0670 (Wilson's: 0.071). Before
    # issue 50 it was 0.040, and a human mean of 0.05 was outside.
    metric = [float(i % 2) for i in range(200)]
    figures = prediction_powered(200, statistics.fmean(metric), statistics.variance(metric), [(m, 0.0) for m in metric[:50]])
    t49 = t_quantile_975(49)
    pulled = (t49**2 / 2) / (50 + t49**2)
    assert math.isclose(figures.stderr, math.sqrt((50 * pulled * (1 - pulled) + 50 / 51) / 2500), rel_tol=1e-6)
    assert figures.ci95[0] == 0.0 and figures.ci95[1] == pytest.approx(0.0670, abs=1e-4) and figures.ci95[1] > 0.05
    mirrored = prediction_powered(200, statistics.fmean(metric), statistics.variance(metric), [(m, 1.0) for m in metric[:50]])
    assert mirrored.ci95[0] == pytest.approx(1 - 0.0670, abs=1e-4)


@pytest.mark.parametrize("human_mean", [0.05, 0.95])
def test_the_interval_covers_a_human_mean_near_0_or_1_at_least_95_percent_of_the_time(human_mean):
    """benchmarks/ppi_coverage.py's cell, smaller: 400 draws of 200 scored samples, 50 labelled, a
    metric unrelated to the person (issue 50 measured 0.909-0.922 here with 1,000 draws)."""
    rng = np.random.default_rng(50)
    covered = 0
    draws = 400
    for _ in range(draws):
        human = (rng.random(200) < human_mean).astype(float)
        metric = (rng.random(200) < 0.8).astype(float)
        labelled = rng.choice(200, size=50, replace=False)
        pairs = [(float(f), float(h)) for f, h in zip(metric[labelled], human[labelled])]
        low, high = prediction_powered(200, float(metric.mean()), float(metric.var(ddof=1)), pairs).ci95
        covered += low <= human_mean <= high
    assert covered / draws >= 0.95


def test_the_t_quantile_matches_the_table():
    for freedom, tabled in ((9, 2.262157), (19, 2.093024), (29, 2.045230), (99, 1.984217)):
        assert math.isclose(t_quantile_975(freedom), tabled, abs_tol=2e-5)
    assert math.isclose(t_quantile_975(10**6), 1.959964, abs_tol=1e-5)


def test_ppi_plus_plus_matches_a_hand_calculation():
    # 10 labelled samples (metric f, human h) and 6 unlabelled metric scores.
    pairs = [(0.9, 1.0), (0.8, 1.0), (0.7, 0.0), (0.6, 1.0), (0.4, 0.0), (0.3, 0.0), (0.9, 1.0), (0.2, 0.0), (0.5, 1.0), (0.1, 0.0)]
    unlabelled = [0.9, 0.1, 0.5, 0.7, 0.3, 0.6]
    every = [f for f, _ in pairs] + unlabelled
    figures = prediction_powered(len(every), statistics.fmean(every), statistics.variance(every), pairs)
    f, h = [p[0] for p in pairs], [p[1] for p in pairs]
    n, big_n = len(pairs), len(unlabelled)
    # The variance: lambda^2 var(u)/N + ((n-1) var(h - lambda f) + n/(n+1)) / n^2 (one unseen label
    # disagreeing by the whole range); its minimiser: lambda = s cov(h, f) / (s var(f) + var(u)/N), s = (n-1)/n^2.
    shrink = (n - 1) / n**2
    weight = shrink * statistics.covariance(h, f) / (shrink * statistics.variance(f) + statistics.variance(unlabelled) / big_n)
    assert 0 < weight < 1 and math.isclose(figures.weight, weight)
    rectified = [y - weight * x for x, y in pairs]
    estimate = weight * statistics.fmean(unlabelled) + statistics.fmean(rectified)
    error = math.sqrt(weight**2 * statistics.variance(unlabelled) / big_n + ((n - 1) * statistics.variance(rectified) + n / (n + 1)) / n**2)
    alone = math.sqrt(((n - 1) * statistics.variance(h) + n / (n + 1)) / n**2)
    assert math.isclose(figures.mean, estimate) and math.isclose(figures.stderr, error)
    t9 = 2.262157
    assert figures.ci95 == pytest.approx([estimate - t9 * error, estimate + t9 * error], abs=1e-4)
    assert figures.labels_only_ci95 == pytest.approx([0.5 - t9 * alone, 0.5 + t9 * alone], abs=1e-4)
    assert math.isclose(figures.width_ratio, error / alone) and figures.width_ratio < 1
    assert math.isclose(figures.effective_labels, n * (alone / error) ** 2) and figures.labelled == n


def test_labels_that_all_agree_do_not_give_a_zero_width_interval():
    # 20 samples scored 0.0, 10 of them labelled 1.0: no spread at all. By hand: lambda 0 (the
    # metric does not vary); ten binary labels, their spread m (1 - m) at the Agresti-Coull mean
    # m = (10 + t^2 / 2) / (10 + t^2) = 0.83075 (t = 2.262157, 9 degrees of freedom), plus an 11th
    # label disagreeing by 1: (10 * m (1 - m) + 10/11) / 10^2, standard error 0.15216, lower bound
    # 1 - 2.262157 * 0.15216 = 0.6558 (issue 50: near 0 and 1 the labels' own spread understates it).
    figures = prediction_powered(20, 0.0, 0.0, [(0.0, 1.0)] * 10)
    assert figures.weight == 0.0 and figures.mean == 1.0
    t9 = 2.262157
    pulled = (10 + t9**2 / 2) / (10 + t9**2)
    assert math.isclose(figures.stderr, math.sqrt((10 * pulled * (1 - pulled) + 10 / 11) / 100), rel_tol=1e-5)
    assert figures.ci95[0] == pytest.approx(0.6558, abs=1e-4) and figures.ci95[1] == 1.0
    assert prediction_powered(20, 0.0, 0.0, [(0.0, 1.0)] * (MIN_LABELS - 1)).mean is None


@settings(max_examples=200, deadline=None)
@given(
    st.lists(st.tuples(st.floats(0, 1), st.floats(0, 1)), min_size=MIN_LABELS, max_size=40),
    st.lists(st.floats(0, 1), min_size=0, max_size=60),
)
def test_ppi_plus_plus_is_never_wider_than_the_labels_alone(pairs, unlabelled):
    every = [f for f, _ in pairs] + unlabelled
    figures = prediction_powered(len(every), statistics.fmean(every), statistics.variance(every), pairs)
    assert 0.0 <= figures.weight <= 1.0 and figures.width_ratio <= 1.0 + 1e-9
    assert 0.0 <= figures.ci95[0] <= figures.mean <= figures.ci95[1] <= 1.0


def test_a_metric_that_tracks_the_labels_narrows_the_interval():
    pairs = [(v, v) for v in (0.0, 1.0) * 10]  # the metric agrees with every label
    unlabelled = [0.0, 1.0] * 100
    every = [f for f, _ in pairs] + unlabelled
    figures = prediction_powered(len(every), statistics.fmean(every), statistics.variance(every), pairs)
    # the residuals are all 0, so the unseen label is all of the labelled part's variance: about half the width
    assert figures.weight > 0.9 and figures.width_ratio < 0.6 and figures.effective_labels > 3 * len(pairs)


def test_every_format_says_how_many_labels_the_figure_rests_on_and_how_much_the_metric_helped(tmp_path):
    from xml.etree import ElementTree

    contexts = tmp_path / "contexts.jsonl"
    rows = [{"id": f"s{i}", "user_input": "What is the capital?", "retrieved_contexts": ["Paris is the capital of France."], "reference": "Paris is the capital of France." if i % 2 else "Berlin has a zoo."} for i in range(30)]
    contexts.write_text("".join(json.dumps(r) + "\n" for r in rows))
    labels = statement_labels(tmp_path, [(f"s{i}", i % 2) for i in range(12)], contexts=["Paris is the capital of France."])
    out = {kind: tmp_path / f"out.{kind}" for kind in ("json", "xml", "md")}
    results, page = tmp_path / "r.jsonl", tmp_path / "r.html"
    result = run_score(contexts, "-m", "context_recall", "--verifier", "--labels", labels, "-o", results, "--summary-json", out["json"], "--junit-xml", out["xml"], "--markdown", out["md"])
    assert result.exit_code == 0, result.output
    ppi = json.loads(out["json"].read_text())["metrics"]["context_recall"]["ppi"]
    assert ppi["labelled"] == 12 and ppi["ci95"] is not None and 0 <= ppi["lambda"] <= 1 and ppi["width_ratio"] <= 1
    for text in (result.output, out["md"].read_text()):
        assert "resting on 12 labelled samples" in text and ("lambda" in text)
    properties = {p.get("name"): p.get("value") for p in ElementTree.parse(out["xml"]).iter("property")}
    assert properties["ppi_labelled"] == "12" and "ppi_lambda" in properties and "ppi_width_ratio" in properties
    header = json.loads(results.read_text().splitlines()[0])["run"]
    assert header["labels"]["path"] == str(labels) and len(header["labels"]["sha256"]) == 64
    reported = CliRunner().invoke(cli, ["report", str(results), "-o", str(page), "--labels", str(labels)])
    assert reported.exit_code == 0, reported.output
    assert "resting on 12 labelled samples" in page.read_text()
    unlabelled = CliRunner().invoke(cli, ["report", str(results), "-o", str(page)])
    assert unlabelled.exit_code == 0 and "was scored with --labels" in unlabelled.output and "pass --labels FILE" in unlabelled.output
    other = statement_labels(tmp_path, [(f"s{i}", 1) for i in range(12)], name="other.jsonl", contexts=["Paris is the capital of France."])
    mismatched = CliRunner().invoke(cli, ["report", str(results), "-o", str(page), "--labels", str(other)])
    assert mismatched.exit_code == 0 and "is not the labels file the run was scored with" in mismatched.output
