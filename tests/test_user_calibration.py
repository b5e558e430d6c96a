"""A user's own calibration: `localeval calibrate` fits it from labelled rows, `score
--calibration` applies it, records its SHA-256 and refuses a resume after it changed; a
table that does not fit the metrics' features is a clear error before any sample."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner
from conftest import SMALL_MODEL, result_rows

from localeval import evaluate
from localeval.calibration.combination import CALIBRATION_VERSION
from localeval.cli import cli
from localeval.errors import EXIT_USAGE, ConfigError
from localeval.metrics import create_metric, recall, relevance
from localeval.testing import ScriptedJudge

SAMPLE = {"id": "q", "user_input": "When was it completed?", "retrieved_contexts": ["The tower was completed in 1889. It is tall."], "reference": "It was completed in 1889."}


def _table(features, weight=0.5):
    return {"intercept": 0.0, "weights": {name: weight for name in features}}


def _calibration_file(path, tables):
    path.write_text(json.dumps({"format": "localeval-calibration", "version": CALIBRATION_VERSION, "tables": tables}))
    return path


def test_a_table_naming_a_feature_the_metric_lacks_is_an_error_before_scoring(write_jsonl, tmp_path):
    bad = _calibration_file(tmp_path / "c.json", {"attribution": {"intercept": 0, "weights": {"judge": 1, "bogus": 1}}})
    result = CliRunner().invoke(cli, ["score", str(write_jsonl([SAMPLE])), "-m", "context_recall", "--no-verifier", "--model", SMALL_MODEL, "--calibration", str(bad)])
    assert result.exit_code == EXIT_USAGE and "no such feature bogus" in result.stderr and "Traceback" not in result.output


def test_a_catalog_table_that_omits_a_feature_is_an_error_not_ignored():
    judge = ScriptedJudge(lambda m: 0.9, calibration={"relevance": {"intercept": 0, "weights": {"judge_passage": 1.0}}})
    with pytest.raises(ConfigError, match="no weight for judge_choice"):  # never scored with half a table
        evaluate([SAMPLE], [create_metric("context_relevance", {"verifier": False})], judge=judge)


def test_not_a_calibration_file_is_named(write_jsonl, tmp_path):
    for text, expected in (("{}", "not a localeval calibration file"), ('{"format": "localeval-calibration", "version": 7, "tables": {}}', "version 7")):
        path = tmp_path / "c.json"
        path.write_text(text)
        result = CliRunner().invoke(cli, ["score", str(write_jsonl([SAMPLE])), "-m", "context_recall", "--no-verifier", "--calibration", str(path)])
        assert result.exit_code == EXIT_USAGE and expected in result.stderr


def test_calibrate_fits_writes_and_score_uses_the_file(small_model_path, write_jsonl, tmp_path):
    statements = []
    for i in range(12):
        context = f"The bridge number {i} was opened in {1900 + i}. It crosses the river."
        statements.append({"retrieved_contexts": [context], "statement": f"Bridge {i} opened in {1900 + i}.", "label": 1})
        statements.append({"retrieved_contexts": [context], "statement": f"Bridge {i} was designed by an engineer called Smith.", "label": 0})
    questions = [
        {"user_input": f"When did bridge {i} open?", "retrieved_contexts": [f"Bridge {i} opened in {1900 + i}. The weather was cold."], "required": [f"Bridge {i} opened in {1900 + i}."]}
        for i in range(20)
    ]
    labels = write_jsonl([*statements, *questions], name="labels.jsonl")
    written = tmp_path / "calibration.json"
    fitted = CliRunner().invoke(cli, ["calibrate", str(labels), "-o", str(written), "--model", str(small_model_path), "--threads", "1"])
    assert fitted.exit_code == 0, fitted.output
    assert "attribution (24 rows" in fitted.stdout and "relevance (20 rows" in fitted.stdout
    document = json.loads(written.read_text())
    assert set(document["tables"]["attribution"]["weights"]) == set(recall.FEATURES)
    assert set(document["tables"]["relevance"]["weights"]) == set(relevance.FEATURES)

    data, out = write_jsonl([SAMPLE]), tmp_path / "out.jsonl"
    args = ["score", str(data), "-m", "context_recall", "--no-verifier", "--model", str(small_model_path), "--calibration", str(written), "-o", str(out), "--no-timing", "-q"]
    assert CliRunner().invoke(cli, args).exit_code == 0
    header = json.loads(out.read_text().splitlines()[0])
    assert header["run"]["judge"]["calibration_file"]["path"] == str(written)
    assert header["run"]["judge"]["calibration"]["attribution"] == document["tables"]["attribution"]
    assert result_rows(out)[0]["errors"] == {}
    document["tables"]["attribution"]["intercept"] += 1.0
    written.write_text(json.dumps(document))
    resumed = CliRunner().invoke(cli, [*args, "--resume"])
    assert resumed.exit_code == EXIT_USAGE and "cannot resume" in resumed.stderr


def test_calibrate_names_a_bad_labels_line(small_model_path, write_jsonl, tmp_path):
    labels = write_jsonl([{"retrieved_contexts": ["x"], "statement": "y", "label": 2}], name="labels.jsonl")
    result = CliRunner().invoke(cli, ["calibrate", str(labels), "-o", str(tmp_path / "c.json"), "--model", str(small_model_path)])
    assert result.exit_code == EXIT_USAGE and "labels.jsonl:1: field 'label'" in result.stderr


def test_calibrate_checks_every_line_before_the_judge_and_keeps_the_kind_it_can_fit(small_model_path, write_jsonl, tmp_path):
    good = [{"retrieved_contexts": [f"Bridge {i} opened in {1900 + i}."], "statement": f"Bridge {i} opened in {1900 + i}.", "label": i % 2} for i in range(24)]
    bad = write_jsonl([*good, {"retrieved_contexts": ["x"], "statement": "y", "label": 2}], name="bad.jsonl")
    result = CliRunner().invoke(cli, ["calibrate", str(bad), "-o", str(tmp_path / "c.json"), "--model", str(small_model_path), "--threads", "1"])
    assert result.exit_code == EXIT_USAGE and "bad.jsonl:25: field 'label'" in result.stderr
    from localeval.data.labels import read_labels

    with pytest.raises(Exception, match="bad.jsonl:25"):
        read_labels(str(bad))  # the whole file is read and checked before any judge call

    few_questions = [{"user_input": "q", "retrieved_contexts": ["a. b."], "required": ["a."]}] * 3
    mixed = write_jsonl([*good, *few_questions], name="mixed.jsonl")
    written = tmp_path / "mixed.json"
    result = CliRunner().invoke(cli, ["calibrate", str(mixed), "-o", str(written), "--model", str(small_model_path), "--threads", "1"])
    assert result.exit_code == 0, result.output
    assert "relevance needs at least" in result.stderr and set(json.loads(written.read_text())["tables"]) == {"attribution"}


def test_a_calibration_fitted_for_another_judge_is_used_with_a_warning(small_model_path, write_jsonl, tmp_path):
    from localeval.models.store import CATALOG

    fitted = {"backend": "gguf", "model": "qwen2.5-coder-0.5b", "sha256": CATALOG["qwen2.5-coder-0.5b"].sha256, "url": None}
    document = {"format": "localeval-calibration", "version": CALIBRATION_VERSION,
                "tables": {"attribution": dict(CATALOG["qwen2.5-coder-1.5b"].calibration["attribution"])}, "fitted": {"judge": fitted}}
    path = tmp_path / "other.json"
    path.write_text(json.dumps(document))
    args = ["score", str(write_jsonl([SAMPLE])), "-m", "context_recall", "--no-verifier", "--model", str(small_model_path), "--calibration", str(path), "-q"]
    result = CliRunner().invoke(cli, args)
    assert result.exit_code == 0, result.output
    assert "warning" in result.stderr and "fitted for the judge 'qwen2.5-coder-0.5b'" in result.stderr
