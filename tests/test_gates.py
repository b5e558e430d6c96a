"""Gates that mean what they say on any number of samples: an interval gate is never settled by
a handful of samples (the plain interval's small-sample rule), and a gate that read nothing, or
only a few of the samples, says so."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from localeval.cli import cli
from localeval.gates import FEWEST_TO_SETTLE
from localeval.summary import ScoreDistribution

# id_context_recall of one retrieved id "a" against these references
REFERENCES = {1.0: ["a"], 0.0: ["b"]}


def _samples(tmp_path, scores):
    path = tmp_path / "samples.jsonl"
    path.write_text("".join(json.dumps({"id": f"s{i}", "retrieved_context_ids": ["a"], "reference_context_ids": REFERENCES[v]}) + "\n" for i, v in enumerate(scores)))
    return path


def _score(*args):
    return CliRunner().invoke(cli, ["score", *[str(a) for a in args]])


@pytest.mark.parametrize("count", [2, 3])
def test_two_or_three_perfect_samples_do_not_pass_a_release_gate(tmp_path, count):
    data, summary = _samples(tmp_path, [1.0] * count), tmp_path / "s.json"
    result = _score(data, "-m", "id_context_recall", "--threshold-on", "pass-if-confidently-above", "--min-mean", "id_context_recall=0.99", "--summary-json", summary)
    assert result.exit_code == 1, result.output
    figures = json.loads(summary.read_text())["metrics"]["id_context_recall"]
    assert figures["ci95"] == [0.0, 1.0] and figures["mean_ok"] is False
    # the message states the rule and the count
    assert f"{count} scored samples settle nothing" in result.output and f"below {FEWEST_TO_SETTLE} scored samples it spans 0-1" in result.output
    assert "one more sample disagreeing by the whole 0-1 range" in result.output and "Student's t" in result.output


def test_two_samples_of_zero_do_not_fail_a_gate_that_fails_only_when_confidently_below(tmp_path):
    data, markdown = _samples(tmp_path, [0.0, 0.0]), tmp_path / "s.md"
    result = _score(data, "-m", "id_context_recall", "--threshold-on", "fail-if-confidently-below", "--min-mean", "id_context_recall=0.9", "--markdown", markdown)
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
    cli_run = _score(data, "-m", metric, *flags, "-t", f"{metric}=0.5")
    assert cli_run.exit_code == 1 and "nothing was scored" in cli_run.output  # the same verdict on the command line


def test_a_threshold_that_read_one_sample_among_many_nan_passes_and_says_how_many_it_read(tmp_path):
    """ragas' rule is kept (a NaN sample neither passes nor fails), but the run says on how few
    samples the gate rests."""
    lines = [{"id": "s0", "retrieved_context_ids": ["a"], "reference_context_ids": ["a"]}]
    lines += [{"id": f"s{i}", "retrieved_context_ids": ["a"], "reference_context_ids": []} for i in range(1, 10)]  # undefined: NaN
    data, markdown = tmp_path / "samples.jsonl", tmp_path / "s.md"
    data.write_text("".join(json.dumps(line) + "\n" for line in lines))
    result = _score(data, "-m", "id_context_recall", "-t", "id_context_recall=0.5", "--markdown", markdown)
    assert result.exit_code == 0, result.output
    said = "id_context_recall threshold read 1 of 10 samples (9 NaN: undefined for the sample, neither pass nor fail)"
    assert said in result.output and said in markdown.read_text()
