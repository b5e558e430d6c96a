"""Gates that mean what they say on any number of samples: an interval gate is never settled by
a handful of samples (the plain interval's small-sample rule), and a gate that read nothing, or
only a few of the samples, says so."""

from __future__ import annotations

import json
import math

import pytest
from click.testing import CliRunner
from conftest import FIVE, id_recall_samples, invoke, run_score, statement_labels

from localeval.cli import cli
from localeval.errors import EXIT_THRESHOLD_FAILED, ConfigError
from localeval.stats.gates import FEWEST_TO_SETTLE
from localeval.stats.summary import ScoreDistribution, Summary


@pytest.mark.parametrize("count", [2, 3])
def test_two_or_three_perfect_samples_do_not_pass_a_release_gate(tmp_path, count):
    data, summary = id_recall_samples(tmp_path, [1.0] * count), tmp_path / "s.json"
    result = run_score(data, "-m", "id_context_recall", "--threshold-on", "pass-if-confidently-above", "--min-mean", "id_context_recall=0.99", "--summary-json", summary)
    assert result.exit_code == 1, result.output
    figures = json.loads(summary.read_text())["metrics"]["id_context_recall"]
    assert figures["ci95"] == [0.0, 1.0] and figures["mean_ok"] is False
    # the message states the rule and the count
    assert f"{count} scored samples settle nothing" in result.output and f"below {FEWEST_TO_SETTLE} scored samples it spans 0-1" in result.output
    assert "one more sample disagreeing by the whole 0-1 range" in result.output and "Student's t" in result.output


def test_two_samples_of_zero_do_not_fail_a_gate_that_fails_only_when_confidently_below(tmp_path):
    data, markdown = id_recall_samples(tmp_path, [0.0, 0.0]), tmp_path / "s.md"
    result = run_score(data, "-m", "id_context_recall", "--threshold-on", "fail-if-confidently-below", "--min-mean", "id_context_recall=0.9", "--markdown", markdown)
    assert result.exit_code == 0, result.output
    # met, but by the benefit of the doubt: the terminal and the Markdown cell say so
    assert "upper 95% bound 1.000 >= 0.9 (2 scored samples settle nothing" in result.output
    assert "(ok: 2 scored samples settle nothing" in markdown.read_text()


def test_samples_that_all_agree_never_give_a_zero_width_interval():
    """The rule fades as 1 / n: ten samples of 1.0 give 0.784-1.000, as ten labels of 1.0 do
    (docs/results.md); it takes about 200 perfect samples to show 0.99."""
    for count, low in ((4, 0.288), (10, 0.784), (40, 0.950), (200, 0.990)):
        distribution = ScoreDistribution()
        for _ in range(count):
            distribution.add(1.0)
        bounds = distribution.interval()
        assert bounds is not None and bounds[1] == 1.0 and round(bounds[0], 3) == low, (count, bounds)
    assert FEWEST_TO_SETTLE == 4


@pytest.mark.parametrize(
    ("metric", "sample", "options"),
    [
        ("faithfulness", {"user_input": "Where is Paris?", "response": "", "retrieved_contexts": ["Paris is in France."]}, {"verifier": True}),  # every response blank
        ("id_context_precision", {"retrieved_context_ids": [], "reference_context_ids": [1]}, None),  # nothing retrieved
    ],
)
def test_assert_metric_fails_when_nothing_was_scored_as_the_command_line_does(tmp_path, metric, sample, options):
    from localeval.testing import assert_metric

    samples = [{"id": i, **sample} for i in range(3)]
    with pytest.raises(AssertionError, match=f"nothing was scored: {metric} is undefined \\(NaN\\) for all 3 samples"):
        assert_metric(samples, metric, 0.5, options=options)
    data = tmp_path / "samples.jsonl"
    data.write_text("".join(json.dumps(s) + "\n" for s in samples))
    flags = ["--verifier"] if options else []
    cli_run = run_score(data, "-m", metric, *flags, "-t", f"{metric}=0.5")
    assert cli_run.exit_code == 1 and "nothing was scored" in cli_run.output  # the same verdict on the command line


def test_a_threshold_that_read_one_sample_among_many_nan_passes_and_says_how_many_it_read(tmp_path):
    """ragas' rule is kept (a NaN sample neither passes nor fails), but the run says on how few
    samples the gate rests."""
    lines = [{"id": "s0", "retrieved_context_ids": ["a"], "reference_context_ids": ["a"]}]
    lines += [{"id": f"s{i}", "retrieved_context_ids": ["a"], "reference_context_ids": []} for i in range(1, 10)]  # undefined: NaN
    data, markdown = tmp_path / "samples.jsonl", tmp_path / "s.md"
    data.write_text("".join(json.dumps(line) + "\n" for line in lines))
    result = run_score(data, "-m", "id_context_recall", "-t", "id_context_recall=0.5", "--markdown", markdown)
    assert result.exit_code == 0, result.output
    said = "id_context_recall threshold read 1 of 10 samples (9 NaN: undefined for the sample, neither pass nor fail)"
    assert said in result.output and said in markdown.read_text()


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
    data = id_recall_samples(tmp_path, TWENTY)
    summary = tmp_path / "s.json"
    result = run_score(data, "-m", "id_context_recall", "--min-mean", f"id_context_recall={minimum}", "--threshold-on", mode, "--summary-json", summary)
    assert result.exit_code == (0 if passes else 1), result.output
    assert line in result.output  # the terminal line names the figure the gate read
    figures = json.loads(summary.read_text())["metrics"]["id_context_recall"]
    assert figures["min_mean_on"] == mode and figures["mean_ok"] is passes
    expected = {"mean": figures["mean"], "fail-if-confidently-below": figures["ci95"][1], "pass-if-confidently-above": figures["ci95"][0]}[mode]
    assert math.isclose(figures["gated_value"], expected)
    assert figures["gated_figure"] == {"mean": "mean", "fail-if-confidently-below": "ci95_high", "pass-if-confidently-above": "ci95_low"}[mode]


def test_the_ambiguous_lower_is_refused_on_the_command_line_and_in_a_config_naming_both_new_modes(tmp_path):
    data = id_recall_samples(tmp_path, FIVE)
    result = run_score(data, "-m", "id_context_recall", "--min-mean", "id_context_recall=0.5", "--threshold-on", "lower")
    assert result.exit_code == 2 and "fail-if-confidently-below" in result.output and "pass-if-confidently-above" in result.output
    (tmp_path / "localeval.toml").write_text('threshold_on = "lower"\nmin_mean = { id_context_recall = 0.5 }\n')
    configured = run_score(data, "-m", "id_context_recall")
    assert configured.exit_code == 2 and "'lower' is no longer accepted" in configured.output and "Traceback" not in configured.output
    with pytest.raises(ConfigError, match="fail-if-confidently-below"):
        Summary(["id_context_recall"], gate_on="lower")  # type: ignore[arg-type]


def test_an_interval_gate_with_one_scored_sample_says_why_it_has_no_bound(tmp_path):
    data = id_recall_samples(tmp_path, [1.0])
    markdown = tmp_path / "summary.md"
    result = run_score(data, "-m", "id_context_recall", "--min-mean", "id_context_recall=0.5", "--threshold-on", "fail-if-confidently-below", "--markdown", markdown)
    assert result.exit_code == 1
    assert "upper 95% bound: none (no 95% interval from 1 scored sample(s): an interval needs 2): not met" in result.output
    assert "read on the upper 95% bound - (not met: no 95% interval from 1 scored sample(s)" in markdown.read_text()


def test_an_unscored_sample_fails_a_min_mean_gate_as_the_readme_says(tmp_path):
    lines = [json.dumps({"id": "s0", "retrieved_context_ids": ["a"], "reference_context_ids": ["a"]})]
    lines += [json.dumps({"id": f"s{i}", "retrieved_context_ids": ["a"]}) for i in range(1, 10)]  # no reference ids: not scored
    data = tmp_path / "samples.jsonl"
    data.write_text("\n".join(lines) + "\n")
    summary = tmp_path / "s.json"
    result = run_score(data, "-m", "id_context_recall", "--min-mean", "id_context_recall=0.5", "--summary-json", summary)
    assert result.exit_code == 1, result.output
    assert "9 of 10 samples could not be scored, and an unscored sample fails a gate" in result.output
    figures = json.loads(summary.read_text())["metrics"]["id_context_recall"]
    assert figures["mean"] == 1.0 and figures["mean_ok"] is False and figures["errors"] == 9


def test_every_plain_interval_says_it_measures_sampling_noise_and_points_to_labels(tmp_path):
    data = id_recall_samples(tmp_path, FIVE)
    markdown, results, page = tmp_path / "s.md", tmp_path / "r.jsonl", tmp_path / "r.html"
    result = run_score(data, "-m", "id_context_recall", "--markdown", markdown, "-o", results)
    for text in (result.output, markdown.read_text()):
        assert "sampling noise only" in text and "not the judge's bias; --labels FILE" in text
    assert CliRunner().invoke(cli, ["report", str(results), "-o", str(page)]).exit_code == 0
    assert "sampling noise only" in page.read_text()


def test_an_empty_input_with_a_threshold_fails_and_says_nothing_was_scored(tmp_path):
    empty = tmp_path / "empty.jsonl"
    empty.write_text("")
    result = invoke(["score", str(empty), "-m", "id_context_recall", "-t", "id_context_recall=0.5"])
    assert result.exit_code == EXIT_THRESHOLD_FAILED
    assert "nothing was scored" in result.stderr
    assert invoke(["score", str(empty), "-m", "id_context_recall"]).exit_code == 0  # no gate, nothing to fail


def test_two_labels_never_pass_a_gate_and_the_output_says_how_many_labels_there_are(tmp_path):
    labels = tmp_path / "labels.jsonl"
    labels.write_text("".join(json.dumps({"id": f"s{i}", "retrieved_contexts": ["Paris is in France."], "statement": "s", "label": 1}) + "\n" for i in range(2)))
    summary = tmp_path / "s.json"
    args = ["-m", "context_recall", "--verifier", "--labels", labels, "--summary-json", summary, "--min-mean", "context_recall=0.95", "--threshold-on", "pass-if-confidently-above"]
    contexts = tmp_path / "contexts.jsonl"
    contexts.write_text("".join(json.dumps({"id": f"s{i}", "user_input": "Where is Berlin?", "retrieved_contexts": ["Paris is in France."], "reference": "Berlin is in Germany."}) + "\n" for i in range(20)))
    result = run_score(contexts, *args)
    assert result.exit_code == 1, result.output
    assert "2 labelled sample(s): a prediction-powered interval needs at least 10" in result.output
    ppi = json.loads(summary.read_text())["metrics"]["context_recall"]["ppi"]
    assert ppi["labelled"] == 2 and ppi["mean"] is None and ppi["ci95"] is None


def test_the_markdown_gate_cell_names_the_prediction_powered_bound_it_read(tmp_path):
    contexts = tmp_path / "contexts.jsonl"
    contexts.write_text("".join(json.dumps({"id": f"s{i}", "user_input": "Where is Paris?", "retrieved_contexts": ["Paris is in France."], "reference": "Paris is in France."}) + "\n" for i in range(12)))
    labels = statement_labels(tmp_path, [(f"s{i}", 1) for i in range(10)], contexts=["Paris is in France."])
    markdown = tmp_path / "s.md"
    result = run_score(contexts, "-m", "context_recall", "--verifier", "--labels", labels, "--min-mean", "context_recall=0.5", "--threshold-on", "fail-if-confidently-below", "--markdown", markdown)
    assert "prediction-powered upper 95% bound" in result.output
    assert "read on the prediction-powered upper 95% bound" in markdown.read_text()
