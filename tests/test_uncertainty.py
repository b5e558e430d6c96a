"""A mean comes with its uncertainty: standard error and an approximate 95% interval, in the
summary JSON and every report, and a --min-mean gate inside that interval says so."""

from __future__ import annotations

import json
import math
import statistics
from pathlib import Path

from click.testing import CliRunner
from hypothesis import given
from hypothesis import strategies as st

from localeval.cli import cli
from localeval.reports.table import summary_table
from localeval.stats.figures import MetricFigures, SummaryFigures
from localeval.stats.gates import MeanGate
from localeval.stats.summary import ScoreDistribution

ROOT = Path(__file__).resolve().parents[1]


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
    gate = MeanGate(bound=0.6, on="mean", figure="mean", value=0.62, ok=True, reason=None)
    metric = MetricFigures(count=40, scored=40, mean=0.62, stderr=0.05, ci95=(0.522, 0.718), median=0.6, nan=0, errors=0, gate=gate)
    table = summary_table(SummaryFigures(samples=40, input_errors=0, labels=None, thresholds_met=True, nothing_scored=False, metrics={"context_recall": metric}))
    assert "0.522-0.718" in table and "within the mean's 95% interval" in table


def _example_contexts():
    """The retrieved contexts of examples/rag_samples.jsonl, by id."""
    rows = [json.loads(line) for line in (ROOT / "examples" / "rag_samples.jsonl").read_text().splitlines() if line.strip()]
    return {row["id"]: row["retrieved_contexts"] for row in rows}


def test_the_prediction_powered_mean_corrects_the_metric_by_the_labelled_residuals():
    from localeval.stats.ppi import prediction_powered

    pairs = [(0.0, 0.0), (0.4, 1.0)] * 5  # the metric tracks the labels, but reads 0.3 low on average
    every = [0.0, 0.4] * 5 + [0.0, 0.4] * 50
    figures = prediction_powered(len(every), statistics.fmean(every), statistics.variance(every), pairs)
    assert figures.labelled == 10 and figures.weight == 1.0  # it tracks them exactly: full weight (classic PPI)
    assert math.isclose(figures.mean, 0.2 + 0.3)  # the unlabelled samples' mean, corrected by the mean residual
    assert figures.ci95[0] < figures.mean < figures.ci95[1] <= 1.0
    assert prediction_powered(len(every), 0.5, 0.1, pairs[:2]).mean is None  # two labels: no estimate, and it says how many


def _ids_file(tmp_path, overlaps):
    """Samples whose id recall is each of `overlaps` (1.0 or 0.0)."""
    lines = [json.dumps({"id": f"s{i}", "retrieved_context_ids": ["a"], "reference_context_ids": ["a" if hit else "b"]}) for i, hit in enumerate(overlaps)]
    path = tmp_path / "samples.jsonl"
    path.write_text("\n".join(lines) + "\n")
    return path


def test_a_gate_that_passes_only_when_confidently_above_reads_the_lower_bound(tmp_path):
    data = _ids_file(tmp_path, [1] * 7 + [0] * 3)  # mean 0.7, lower 95% bound 0.308 (docs/results.md: the small-sample rule)
    args = ["score", str(data), "-m", "id_context_recall", "--min-mean", "id_context_recall=0.6", "--summary-json", str(tmp_path / "s.json")]
    assert CliRunner().invoke(cli, args).exit_code == 0
    lower = CliRunner().invoke(cli, [*args, "--threshold-on", "pass-if-confidently-above"])
    assert lower.exit_code == 1 and "id_context_recall lower 95% bound 0.308 < 0.6" in lower.output
    figures = json.loads((tmp_path / "s.json").read_text())["metrics"]["id_context_recall"]
    assert figures["min_mean_on"] == "pass-if-confidently-above" and figures["mean_ok"] is False and math.isclose(figures["gated_value"], figures["ci95"][0])
    confident = _ids_file(tmp_path, [1] * 40)
    assert CliRunner().invoke(cli, ["score", str(confident), "-m", "id_context_recall", "--min-mean", "id_context_recall=0.6", "--threshold-on", "pass-if-confidently-above"]).exit_code == 0


def test_a_gate_that_fails_only_when_confidently_below_reads_the_upper_bound(tmp_path):
    data = _ids_file(tmp_path, [1] * 3 + [0] * 7)  # mean 0.3, upper 95% bound 0.692
    args = ["score", str(data), "-m", "id_context_recall", "--threshold-on", "fail-if-confidently-below"]
    maybe = CliRunner().invoke(cli, [*args, "--min-mean", "id_context_recall=0.5"])  # the mean is below, but not with confidence
    assert maybe.exit_code == 0 and "id_context_recall upper 95% bound 0.692 >= 0.5" in maybe.output
    worse = CliRunner().invoke(cli, [*args, "--min-mean", "id_context_recall=0.7"])
    assert worse.exit_code == 1 and "id_context_recall upper 95% bound 0.692 < 0.7" in worse.output


def test_every_summary_format_shows_the_standard_error_and_interval_and_the_labelled_estimate(tmp_path):
    import shutil
    from xml.etree import ElementTree

    examples = tmp_path / "samples.jsonl"
    shutil.copy(ROOT / "examples" / "rag_samples.jsonl", examples)
    labels = tmp_path / "labels.jsonl"
    contexts = _example_contexts()  # a label row shows the contexts of the sample it labels
    rows = [
        {"id": "eiffel", "retrieved_contexts": contexts["eiffel"], "statement": "s1", "label": 1},
        {"id": "eiffel", "retrieved_contexts": contexts["eiffel"], "statement": "s2", "label": 1},
        {"id": "insulin", "retrieved_contexts": contexts["insulin"], "statement": "s", "label": 0},
        {"id": "python", "retrieved_contexts": contexts["python"], "statement": "s", "label": 1},
        {"id": "nowhere", "retrieved_contexts": ["c"], "statement": "s", "label": 1},
        {"retrieved_contexts": ["c"], "statement": "a calibration row only", "label": 0},
    ]
    labels.write_text("".join(json.dumps(r) + "\n" for r in rows))
    out = {kind: tmp_path / f"out.{kind}" for kind in ("json", "xml", "md")}
    result = CliRunner().invoke(cli, [
        "score", str(examples), "-m", "context_recall", "--verifier", "--labels", str(labels),
        "--summary-json", str(out["json"]), "--junit-xml", str(out["xml"]), "--markdown", str(out["md"]),
    ])
    assert result.exit_code == 0, result.output
    summary = json.loads(out["json"].read_text())
    figures = summary["metrics"]["context_recall"]
    assert figures["stderr"] is not None and figures["ci95"] is not None
    assert figures["ppi"]["labelled"] == 3 and figures["ppi"]["human_mean"] == (1 + 0 + 1) / 3 and figures["ppi"]["ci95"] is None  # 3 labels: too few
    assert (summary["labels"]["matched"], summary["labels"]["unmatched"], summary["labels"]["rows_with_id"]) == (3, 1, 5)
    assert "3 labelled sample(s); a prediction-powered mean needs at least 10" in result.output and "1 labelled sample id(s) match no sample" in result.output
    properties = {p.get("name"): p.get("value") for p in ElementTree.parse(out["xml"]).iter("property")}
    assert {"mean", "stderr", "ci95_low", "ci95_high", "ppi_mean", "ppi_ci95_low", "ppi_labelled"} <= set(properties) and properties["ppi_labelled"] == "3"
    markdown = out["md"].read_text()
    assert "95% interval" in markdown and "a prediction-powered mean needs at least 10" in markdown


def test_a_bad_labels_file_is_named_with_its_line_and_field_before_anything_is_scored(tmp_path):
    data = _ids_file(tmp_path, [1, 0])
    labels = tmp_path / "labels.jsonl"
    labels.write_text('{"id": "s0", "retrieved_contexts": ["c"], "statement": "s", "label": 1}\n{"id": [1], "retrieved_contexts": ["c"], "statement": "s", "label": 1}\n')
    result = CliRunner().invoke(cli, ["score", str(data), "-m", "id_context_recall", "--labels", str(labels), "-o", str(tmp_path / "r.jsonl")])
    assert result.exit_code == 2 and f"{labels}:2: field 'id'" in result.output and "Traceback" not in result.output
    assert not (tmp_path / "r.jsonl").exists()
    missing = CliRunner().invoke(cli, ["score", str(data), "-m", "id_context_recall", "--labels", str(tmp_path / "none.jsonl")])
    assert missing.exit_code == 2 and "none.jsonl (--labels) is not a file" in missing.output


def test_faithfulness_and_context_precision_take_labels_too(tmp_path):
    """An attribution row with "metric": "faithfulness" labels a response's statement; a
    usefulness row labels each retrieved context, and its average precision is the human score."""
    import shutil

    examples = tmp_path / "samples.jsonl"
    shutil.copy(ROOT / "examples" / "rag_samples.jsonl", examples)
    labels = tmp_path / "labels.jsonl"
    contexts = _example_contexts()
    rows = [
        {"id": "eiffel", "retrieved_contexts": contexts["eiffel"], "statement": "s", "label": 1, "metric": "faithfulness"},
        {"id": "python", "retrieved_contexts": contexts["python"], "statement": "s1", "label": 1, "metric": "faithfulness"},
        {"id": "python", "retrieved_contexts": contexts["python"], "statement": "s2", "label": 0, "metric": "faithfulness"},
        {"id": "python", "retrieved_contexts": contexts["python"], "statement": "s", "label": 1},
        {"id": "eiffel", "retrieved_contexts": contexts["eiffel"], "useful": [1, 1]},
        {"id": "insulin", "retrieved_contexts": contexts["insulin"], "useful": [0, 0]},
        {"id": "python", "retrieved_contexts": contexts["python"], "useful": [0, 1]},
    ]
    labels.write_text("".join(json.dumps(r) + "\n" for r in rows))
    summary_json = tmp_path / "summary.json"
    result = CliRunner().invoke(cli, ["score", str(examples), "-m", "faithfulness", "-m", "context_precision", "-m", "context_recall", "--verifier", "--labels", str(labels), "--summary-json", str(summary_json)])
    assert result.exit_code == 0, result.output
    metrics = json.loads(summary_json.read_text())["metrics"]
    assert metrics["faithfulness"]["ppi"]["labelled"] == 2 and metrics["faithfulness"]["ppi"]["human_mean"] == (1 + 0.5) / 2
    assert metrics["context_recall"]["ppi"]["labelled"] == 1
    assert metrics["context_precision"]["ppi"]["labelled"] == 3
    assert math.isclose(metrics["context_precision"]["ppi"]["human_mean"], (1 + 0 + 1 / 2) / 3)


def test_a_bad_usefulness_or_metric_label_is_named(tmp_path):
    data = _ids_file(tmp_path, [1, 0])
    for row, field in [
        ({"id": "s0", "retrieved_contexts": ["a", "b"], "useful": [1]}, "useful"),
        ({"id": "s0", "retrieved_contexts": ["a"], "useful": [True]}, "useful"),
        ({"retrieved_contexts": ["a"], "useful": [1]}, "id"),
        ({"id": "s0", "retrieved_contexts": ["c"], "statement": "s", "label": 1, "metric": "context_precision"}, "metric"),
    ]:
        labels = tmp_path / "labels.jsonl"
        labels.write_text(json.dumps(row) + "\n")
        result = CliRunner().invoke(cli, ["score", str(data), "-m", "id_context_recall", "--labels", str(labels)])
        assert result.exit_code == 2 and f"{labels}:1: field '{field}'" in result.output, result.output
