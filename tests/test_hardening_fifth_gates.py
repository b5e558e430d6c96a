"""Issue 45, gates and labels: a gate means what its name says; a handful of labels never gives a
zero-width interval; PPI++ is never wider than the labels alone; human relevance scores are on the
metric's scale; one labels row labels at most one sample; calibrate and --labels share one reader
and one rule; every output names the figure a gate read and what a plain interval measures."""

from __future__ import annotations

import json
import math
import statistics

import pytest
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st

from localeval.cli import cli
from localeval.errors import ConfigError
from localeval.gold import RelevanceUnits, read_gold
from localeval.labels import LeftOut, required_sentences
from localeval.ppi import MIN_LABELS, prediction_powered, t_quantile_975
from localeval.summary import Summary

# id_context_recall of one retrieved id "a" against these references
REFERENCES = {1.0: ["a"], 0.5: ["a", "b"], 0.25: ["a", "b", "c", "d"], 0.0: ["b"]}


def _samples(tmp_path, scores, ids=None, name="samples.jsonl"):
    """Samples whose id_context_recall is each of `scores`; ids s0, s1... unless given (None: no id)."""
    lines = []
    for index, score in enumerate(scores):
        sample = {"retrieved_context_ids": ["a"], "reference_context_ids": REFERENCES[score]}
        sample_id = f"s{index}" if ids is None else ids[index]
        if sample_id is not None:
            sample["id"] = sample_id
        lines.append(json.dumps(sample))
    path = tmp_path / name
    path.write_text("\n".join(lines) + "\n")
    return path


def _statement_labels(tmp_path, labels, name="labels.jsonl", contexts=("c",)):
    """Attribution label rows: (sample id, 0/1) -> one statement each (context_recall's human score),
    each showing `contexts`: the retrieved contexts of the sample it labels."""
    path = tmp_path / name
    path.write_text("".join(json.dumps({"id": i, "retrieved_contexts": list(contexts), "statement": f"s{n}", "label": y}) + "\n" for n, (i, y) in enumerate(labels)))
    return path


def _score(*args):
    return CliRunner().invoke(cli, ["score", *[str(a) for a in args]])


# 1. Two gate modes, named for what they do; 'lower' refused.

FIVE = [1.0, 1.0, 0.5, 0.5, 0.25]
TWENTY = FIVE * 4  # mean 0.650, standard error 0.069, interval 0.476-0.824 (with the small-sample rule: docs/results.md)


@pytest.mark.parametrize(
    ("mode", "minimum", "passes", "line"),
    [
        ("mean", 0.5, True, "id_context_recall mean 0.650 >= 0.5"),
        ("mean", 0.8, False, "id_context_recall mean 0.650 < 0.8"),
        ("fail-if-confidently-below", 0.8, True, "id_context_recall upper 95% bound 0.824 >= 0.8"),
        ("fail-if-confidently-below", 0.85, False, "id_context_recall upper 95% bound 0.824 < 0.85"),
        ("pass-if-confidently-above", 0.5, False, "id_context_recall lower 95% bound 0.476 < 0.5"),
        ("pass-if-confidently-above", 0.45, True, "id_context_recall lower 95% bound 0.476 >= 0.45"),
    ],
)
def test_fail_if_confidently_below_reads_the_upper_bound_and_pass_if_confidently_above_the_lower(tmp_path, mode, minimum, passes, line):
    data = _samples(tmp_path, TWENTY)
    summary = tmp_path / "s.json"
    result = _score(data, "-m", "id_context_recall", "--min-mean", f"id_context_recall={minimum}", "--threshold-on", mode, "--summary-json", summary)
    assert result.exit_code == (0 if passes else 1), result.output
    assert line in result.output  # the terminal line names the figure the gate read
    figures = json.loads(summary.read_text())["metrics"]["id_context_recall"]
    assert figures["min_mean_on"] == mode and figures["mean_ok"] is passes
    expected = {"mean": figures["mean"], "fail-if-confidently-below": figures["ci95"][1], "pass-if-confidently-above": figures["ci95"][0]}[mode]
    assert math.isclose(figures["gated_value"], expected)
    assert figures["gated_figure"] == {"mean": "mean", "fail-if-confidently-below": "ci95_high", "pass-if-confidently-above": "ci95_low"}[mode]


def test_the_ambiguous_lower_is_refused_on_the_command_line_and_in_a_config_naming_both_new_modes(tmp_path):
    data = _samples(tmp_path, FIVE)
    result = _score(data, "-m", "id_context_recall", "--min-mean", "id_context_recall=0.5", "--threshold-on", "lower")
    assert result.exit_code == 2 and "fail-if-confidently-below" in result.output and "pass-if-confidently-above" in result.output
    (tmp_path / "localeval.toml").write_text('threshold_on = "lower"\nmin_mean = { id_context_recall = 0.5 }\n')
    configured = _score(data, "-m", "id_context_recall")
    assert configured.exit_code == 2 and "'lower' is no longer accepted" in configured.output and "Traceback" not in configured.output
    with pytest.raises(ConfigError, match="fail-if-confidently-below"):
        Summary(["id_context_recall"], gate_on="lower")  # type: ignore[arg-type]


def test_an_interval_gate_with_one_scored_sample_says_why_it_has_no_bound(tmp_path):
    data = _samples(tmp_path, [1.0])
    markdown = tmp_path / "summary.md"
    result = _score(data, "-m", "id_context_recall", "--min-mean", "id_context_recall=0.5", "--threshold-on", "fail-if-confidently-below", "--markdown", markdown)
    assert result.exit_code == 1
    assert "upper 95% bound: none (no 95% interval from 1 scored sample(s): an interval needs 2): not met" in result.output
    assert "read on the upper 95% bound - (not met: no 95% interval from 1 scored sample(s)" in markdown.read_text()


def test_an_unscored_sample_fails_a_min_mean_gate_as_the_readme_says(tmp_path):
    lines = [json.dumps({"id": "s0", "retrieved_context_ids": ["a"], "reference_context_ids": ["a"]})]
    lines += [json.dumps({"id": f"s{i}", "retrieved_context_ids": ["a"]}) for i in range(1, 10)]  # no reference ids: not scored
    data = tmp_path / "samples.jsonl"
    data.write_text("\n".join(lines) + "\n")
    summary = tmp_path / "s.json"
    result = _score(data, "-m", "id_context_recall", "--min-mean", "id_context_recall=0.5", "--summary-json", summary)
    assert result.exit_code == 1, result.output
    assert "9 of 10 samples could not be scored, and an unscored sample fails a gate" in result.output
    figures = json.loads(summary.read_text())["metrics"]["id_context_recall"]
    assert figures["mean"] == 1.0 and figures["mean_ok"] is False and figures["errors"] == 9


def test_every_plain_interval_says_it_measures_sampling_noise_and_points_to_labels(tmp_path):
    data = _samples(tmp_path, FIVE)
    markdown, results, page = tmp_path / "s.md", tmp_path / "r.jsonl", tmp_path / "r.html"
    result = _score(data, "-m", "id_context_recall", "--markdown", markdown, "-o", results)
    for text in (result.output, markdown.read_text()):
        assert "sampling noise only" in text and "not the judge's bias; --labels FILE" in text
    assert CliRunner().invoke(cli, ["report", str(results), "-o", str(page)]).exit_code == 0
    assert "sampling noise only" in page.read_text()


# 2. PPI++: a hand calculation, never wider than the labels alone, no zero-width interval from a handful of labels.


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


def test_two_labels_never_pass_a_gate_and_the_output_says_how_many_labels_there_are(tmp_path):
    labels = tmp_path / "labels.jsonl"
    labels.write_text("".join(json.dumps({"id": f"s{i}", "retrieved_contexts": ["Paris is in France."], "statement": "s", "label": 1}) + "\n" for i in range(2)))
    summary = tmp_path / "s.json"
    args = ["-m", "context_recall", "--verifier", "--labels", labels, "--summary-json", summary, "--min-mean", "context_recall=0.95", "--threshold-on", "pass-if-confidently-above"]
    contexts = tmp_path / "contexts.jsonl"
    contexts.write_text("".join(json.dumps({"id": f"s{i}", "user_input": "Where is Berlin?", "retrieved_contexts": ["Paris is in France."], "reference": "Berlin is in Germany."}) + "\n" for i in range(20)))
    result = _score(contexts, *args)
    assert result.exit_code == 1, result.output
    assert "2 labelled sample(s): a prediction-powered interval needs at least 10" in result.output
    ppi = json.loads(summary.read_text())["metrics"]["context_recall"]["ppi"]
    assert ppi["labelled"] == 2 and ppi["mean"] is None and ppi["ci95"] is None


def test_every_format_says_how_many_labels_the_figure_rests_on_and_how_much_the_metric_helped(tmp_path):
    from xml.etree import ElementTree

    contexts = tmp_path / "contexts.jsonl"
    rows = [{"id": f"s{i}", "user_input": "What is the capital?", "retrieved_contexts": ["Paris is the capital of France."], "reference": "Paris is the capital of France." if i % 2 else "Berlin has a zoo."} for i in range(30)]
    contexts.write_text("".join(json.dumps(r) + "\n" for r in rows))
    labels = _statement_labels(tmp_path, [(f"s{i}", i % 2) for i in range(12)], contexts=["Paris is the capital of France."])
    out = {kind: tmp_path / f"out.{kind}" for kind in ("json", "xml", "md")}
    results, page = tmp_path / "r.jsonl", tmp_path / "r.html"
    result = _score(contexts, "-m", "context_recall", "--verifier", "--labels", labels, "-o", results, "--summary-json", out["json"], "--junit-xml", out["xml"], "--markdown", out["md"])
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
    other = _statement_labels(tmp_path, [(f"s{i}", 1) for i in range(12)], name="other.jsonl", contexts=["Paris is the capital of France."])
    mismatched = CliRunner().invoke(cli, ["report", str(results), "-o", str(page), "--labels", str(other)])
    assert mismatched.exit_code == 0 and "is not the labels file the run was scored with" in mismatched.output


def test_the_markdown_gate_cell_names_the_prediction_powered_bound_it_read(tmp_path):
    contexts = tmp_path / "contexts.jsonl"
    contexts.write_text("".join(json.dumps({"id": f"s{i}", "user_input": "Where is Paris?", "retrieved_contexts": ["Paris is in France."], "reference": "Paris is in France."}) + "\n" for i in range(12)))
    labels = _statement_labels(tmp_path, [(f"s{i}", 1) for i in range(10)], contexts=["Paris is in France."])
    markdown = tmp_path / "s.md"
    result = _score(contexts, "-m", "context_recall", "--verifier", "--labels", labels, "--min-mean", "context_recall=0.5", "--threshold-on", "fail-if-confidently-below", "--markdown", markdown)
    assert "prediction-powered upper 95% bound" in result.output
    assert "read on the prediction-powered upper 95% bound" in markdown.read_text()


# 3. context_relevance labels on the metric's unit and language.


def _relevance_labels(tmp_path, row):
    path = tmp_path / "relevance.jsonl"
    path.write_text(json.dumps({"id": "q1", "user_input": "q?", **row}) + "\n")
    return path


def test_relevance_labels_are_counted_in_the_metric_unit(tmp_path):
    labels = _relevance_labels(tmp_path, {"retrieved_contexts": ["Alpha one is first. Alpha two is second.\nAlpha three is third.", "Beta one is here."], "required": ["Alpha one is first."]})
    assert read_gold(str(labels)).scores["q1"]["context_relevance"] == 1 / 4  # 4 sentences
    assert read_gold(str(labels), RelevanceUnits("chunk")).scores["q1"]["context_relevance"] == 1 / 2  # 2 contexts
    assert read_gold(str(labels), RelevanceUnits("line")).scores["q1"]["context_relevance"] == 1 / 3  # 3 lines


def test_relevance_labels_are_split_in_the_metric_language(tmp_path):
    labels = _relevance_labels(tmp_path, {"retrieved_contexts": ["Er kam am 3. Mai in Berlin an. Dann ging er nach Hause."], "required": ["Er kam am 3. Mai in Berlin an."]})
    assert read_gold(str(labels), RelevanceUnits(language="de")).scores["q1"]["context_relevance"] == 1 / 2
    english = read_gold(str(labels))  # English pysbd cuts after "3.": the sentence is not one of its sentences
    assert "q1" not in english.scores and "is not a sentence of the retrieved contexts" in english.left_out[0]


def test_score_counts_relevance_labels_in_the_unit_the_run_uses(tmp_path):
    contexts = ["Alpha one is first. Alpha two is second.", "Beta one is here."]
    data = tmp_path / "samples.jsonl"
    data.write_text(json.dumps({"id": "q1", "user_input": "Which alpha is first?", "retrieved_contexts": contexts}) + "\n")
    labels = _relevance_labels(tmp_path, {"retrieved_contexts": contexts, "required": ["Alpha one is first."]})
    summary = tmp_path / "s.json"
    for unit, share in (("sentence", 1 / 3), ("chunk", 1 / 2)):
        result = _score(data, "-m", "context_relevance", "--verifier", "--option", f"context_relevance.unit={unit}", "--labels", labels, "--summary-json", summary)
        assert result.exit_code == 0, result.output
        assert json.loads(summary.read_text())["metrics"]["context_relevance"]["ppi"]["human_mean"] == share


# 4. One labels row labels at most one sample.


def test_a_label_whose_id_two_samples_have_labels_neither(tmp_path):
    data = _samples(tmp_path, [1.0, 1.0, 0.0], ids=["dup", "dup", "other"])
    labels = _statement_labels(tmp_path, [("dup", 1), ("other", 0)])
    summary = Summary(["context_recall"], gold=read_gold(str(labels)))
    from localeval.results import ResultRow

    for line, sample_id in ((1, "dup"), (2, "dup"), (3, "other")):
        summary.add(ResultRow(id=sample_id, line=line, scores={"context_recall": 1.0}))
    figures = summary.figures()
    assert figures.metrics["context_recall"].ppi.labelled == 1  # only "other"
    assert figures.labels.ambiguous == 1 and figures.labels.ambiguous_ids == ("dup",) and figures.labels.matched == 1
    assert data.exists()


def test_a_label_with_id_3_does_not_match_both_the_sample_with_id_3_and_the_id_less_one_on_line_3(tmp_path):
    contexts = tmp_path / "contexts.jsonl"
    sample = {"user_input": "Where is Paris?", "retrieved_contexts": ["Paris is in France."], "reference": "Paris is in France."}
    rows = [{"id": "3", **sample}, {"id": "two", **sample}, sample]  # line 3, no id: its id is 3
    contexts.write_text("".join(json.dumps(r) + "\n" for r in rows))
    labels = _statement_labels(tmp_path, [(3, 1)], contexts=["Paris is in France."])
    summary = tmp_path / "s.json"
    result = _score(contexts, "-m", "context_recall", "--verifier", "--labels", labels, "--summary-json", summary)
    assert result.exit_code == 0, result.output
    figures = json.loads(summary.read_text())
    assert figures["metrics"]["context_recall"]["ppi"]["labelled"] == 0 and figures["labels"]["ambiguous"] == 1
    assert "name more than one sample" in result.output


# 5. One reader and one rule for relevance rows whose required sentences are not in the context.


def test_score_leaves_out_a_relevance_row_whose_required_sentence_is_nowhere_as_calibrate_does(tmp_path):
    labels = tmp_path / "labels.jsonl"
    ghost = "This sentence appears in no context at all."
    labels.write_text(json.dumps({"id": "q1", "user_input": "q?", "retrieved_contexts": ["Alpha is here. Beta is there."], "required": [ghost, ghost, ghost]}) + "\n")
    gold = read_gold(str(labels))
    assert gold.scores == {} and gold.left_out == [f"{labels}:1: field 'required': {ghost!r} is not a sentence of the retrieved contexts; the row is left out"]
    with pytest.raises(LeftOut, match=":1: field 'required'"):
        required_sentences(json.loads(labels.read_text()), str(labels), 1)
    from localeval.calibrating import collect
    from localeval.testing import ScriptedJudge

    assert collect(str(labels), ScriptedJudge(lambda messages: 0.9)).errors == gold.left_out  # calibrate: the same rule, the same words
    data = tmp_path / "samples.jsonl"
    data.write_text(json.dumps({"id": "q1", "user_input": "q?", "retrieved_contexts": ["Alpha is here. Beta is there."]}) + "\n")
    result = _score(data, "-m", "context_relevance", "--verifier", "--labels", labels)
    assert result.exit_code == 0 and "labels: " in result.output and "the row is left out" in result.output


def test_a_labels_file_with_no_id_row_says_that_it_labels_nothing(tmp_path):
    data = _samples(tmp_path, FIVE)
    labels = tmp_path / "labels.jsonl"
    labels.write_text(json.dumps({"retrieved_contexts": ["c"], "statement": "s", "label": 1}) + "\n")
    result = _score(data, "-m", "id_context_recall", "--labels", labels)
    assert result.exit_code == 0 and "has no row with an id, so no sample is labelled" in result.output
