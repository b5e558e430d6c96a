"""Settings (localeval.run.settings, localeval.toml, the Python API): a value out of range, of the
wrong type or in a file that is not UTF-8 is refused naming its key; a config file reads as its
author meant (a byte order mark, paths relative to the file) and says where data goes."""

from __future__ import annotations

import math
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner
from conftest import invoke

from localeval import evaluate
from localeval.cli import cli
from localeval.errors import EXIT_USAGE

ROOT = Path(__file__).resolve().parents[1]


RECALLED = {"id": "q2", "retrieved_contexts": ["The tower was completed on 31 March 1889."], "reference_contexts": ["The tower was completed on 31 March 1889."]}


@pytest.mark.parametrize(
    "config, message",
    [
        ("thresholds = { id_context_recall = -1 }", "greater than or equal to 0"),
        ("thresholds = { id_context_recall = nan }", "'thresholds.id_context_recall'"),
        ("thresholds = { id_context_recall = -inf }", "'thresholds.id_context_recall'"),
        ("thresholds = { id_context_recall = true }", "'thresholds.id_context_recall"),
        ("min_mean = { id_context_recall = 2 }", "less than or equal to 1"),
        ("n_ctx = 1", "'n_ctx'"),
        ("threads = 100000", "'threads'"),
        ("metrics = []", "'metrics'"),
    ],
)
def test_config_values_out_of_range_are_refused(write_jsonl, tmp_path, config, message):
    data = write_jsonl([RECALLED])
    (tmp_path / "localeval.toml").write_text(config + "\n")
    result = invoke(["score", str(data)])
    assert result.exit_code == EXIT_USAGE and message in result.stderr, result.stderr


@pytest.mark.parametrize("value", ["-1", "-inf", "nan", "1.5"])
def test_command_line_thresholds_out_of_range_are_refused(write_jsonl, value):
    result = invoke(["score", str(write_jsonl([RECALLED])), "-m", "id_context_recall", "-t", f"id_context_recall={value}"])
    assert result.exit_code == EXIT_USAGE and "id_context_recall" in result.stderr


def test_a_config_that_is_not_utf8_is_a_message(write_jsonl, tmp_path):
    data = write_jsonl([RECALLED])
    (tmp_path / "localeval.toml").write_bytes(b'metrics = ["\xff"]\n')
    result = invoke(["score", str(data)])
    assert result.exit_code == EXIT_USAGE and "not UTF-8" in result.stderr


def test_a_true_threshold_option_in_a_config_file_is_refused(write_jsonl, tmp_path):
    data = write_jsonl([RECALLED])
    (tmp_path / "localeval.toml").write_text("[options.nonllm_context_recall]\nthreshold = true\n")
    result = invoke(["score", str(data), "-m", "nonllm_context_recall"])
    assert result.exit_code == EXIT_USAGE and "not true or false" in result.stderr


def test_the_api_takes_one_metric_name_and_checks_thresholds():
    from localeval.errors import ConfigError
    from localeval.judge import load_judge
    from localeval.judge.spec import MIN_CONTEXT
    from localeval.testing import assert_metric

    sample = {"retrieved_context_ids": [1], "reference_context_ids": [1]}
    assert evaluate([sample], "id_context_recall").results[0]["scores"] == {"id_context_recall": 1.0}
    for bad in (math.nan, -1, "0.5", True):
        with pytest.raises(ConfigError, match="must be a number in"):
            evaluate([sample], ["id_context_recall"], thresholds={"id_context_recall": bad})
    with pytest.raises(AssertionError, match="empty input never passes"):
        assert_metric([], "id_context_recall", 1.0)
    with pytest.raises(ConfigError, match=f"'n_ctx': Input should be greater than or equal to {MIN_CONTEXT}"):
        load_judge("anything.gguf", n_ctx=10)


def test_a_config_with_a_bom_is_read_and_its_relative_paths_are_its_own(tmp_path, monkeypatch):
    data_dir = tmp_path / "data"
    data_dir.mkdir()
    shutil.copy(ROOT / "examples" / "rag_samples.jsonl", data_dir / "samples.jsonl")
    (data_dir / "rubric.txt").write_text("{document} / {statement}: Yes or No?", encoding="utf-8")
    (data_dir / "localeval.toml").write_bytes(b'\xef\xbb\xbfmetrics = ["id_context_recall", "context_recall"]\n[options.context_recall]\nrubric = "rubric.txt"\n')
    monkeypatch.chdir(tmp_path)  # not the config's folder
    from localeval.run.settings import build_settings

    settings = build_settings({"input": str(data_dir / "samples.jsonl")})
    assert settings.options["context_recall"]["rubric"] == str(data_dir / "rubric.txt")


def test_a_configs_judge_server_is_announced_even_with_quiet(tmp_path):
    data_dir = tmp_path / "data"
    data_dir.mkdir()
    shutil.copy(ROOT / "examples" / "rag_samples.jsonl", data_dir / "samples.jsonl")
    (data_dir / "localeval.toml").write_text('judge_url = "http://127.0.0.1:9/v1"\nmodel = "smollm2-135m"\n', encoding="utf-8")
    result = CliRunner().invoke(cli, ["score", str(data_dir / "samples.jsonl"), "-m", "context_recall", "--no-verifier", "-q"])
    assert "sends the samples to the judge server at http://127.0.0.1:9/v1" in result.output
    quiet = CliRunner().invoke(cli, ["score", str(data_dir / "samples.jsonl"), "-m", "context_recall", "--verifier", "-q"])
    assert "sends the samples" not in quiet.output  # the verifier decides: nothing goes to the server
