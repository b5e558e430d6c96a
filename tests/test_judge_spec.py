"""One judge spec: the config file's judge keys, the flags of `score` and `calibrate`, and what
a run loads come from JudgeSpec's fields, so a setting and its bounds are written once."""

from __future__ import annotations

import json
import math

import pytest
from click.testing import CliRunner

from localeval.cli import CALIBRATE_JUDGE_FLAGS, cli
from localeval.errors import ConfigError
from localeval.judge.spec import NOT_IN_IDENTITY, JudgeSpec, flag_name
from localeval.run.settings import FileSettings


def _flags(command: str) -> set[str]:
    return {opt for param in cli.commands[command].params for opt in param.opts}


def test_every_judge_setting_is_a_flag_of_score_and_a_key_of_the_config_file():
    assert {flag_name(name) for name in JudgeSpec.model_fields} <= _flags("score")
    assert set(JudgeSpec.model_fields) <= set(FileSettings.model_fields)
    assert {flag_name(name) for name in CALIBRATE_JUDGE_FLAGS} <= _flags("calibrate")
    assert {"--seed", "--gpu-layers"} <= _flags("calibrate")  # calibrate loads the judge as score does


def test_speed_settings_are_not_part_of_a_runs_identity():
    assert NOT_IN_IDENTITY == {"threads", "judge_concurrency"}


@pytest.mark.parametrize("values, key", [({"n_ctx": 100}, "n_ctx"), ({"threads": 0}, "threads"), ({"judge_concurrency": 1000}, "judge_concurrency"), ({"seed": "1"}, "seed")])
def test_a_setting_out_of_bounds_is_named_the_same_way_everywhere(values, key, tmp_path):
    with pytest.raises(ConfigError, match=f"'{key}'"):
        JudgeSpec.of(values)
    labels = tmp_path / "labels.jsonl"
    labels.write_text('{"user_input": "q", "retrieved_contexts": ["c"], "statement": "s", "label": 1}\n')
    if isinstance(next(iter(values.values())), int) and key in CALIBRATE_JUDGE_FLAGS:
        result = CliRunner().invoke(cli, ["calibrate", str(labels), "-o", str(tmp_path / "c.json"), flag_name(key), str(next(iter(values.values())))])
        assert result.exit_code == 2 and f"'{key}'" in result.output


def test_serve_takes_the_judge_settings_the_in_process_judge_takes():
    assert {"--n-ctx", "--threads", "--seed", "--gpu-layers"} <= _flags("serve")
    result = CliRunner().invoke(cli, ["serve", "--n-ctx", "100"])
    assert result.exit_code == 2 and "'n_ctx'" in result.output


def _settings_with_config(tmp_path, config: str, **given):
    """The run settings for a samples file beside a localeval.toml holding `config`, and the samples file."""
    from localeval.run.settings import build_settings

    data = tmp_path / "samples.jsonl"
    data.write_text('{"retrieved_context_ids": [1], "reference_context_ids": [1]}\n')
    (tmp_path / "localeval.toml").write_text(config)
    return build_settings({"input": str(data), **given}), data


def test_a_config_may_hold_the_judge_settings_in_a_judge_table(tmp_path):
    from localeval.run.settings import build_settings

    settings, data = _settings_with_config(tmp_path, 'metrics = ["id_context_recall"]\n[judge]\nmodel = "qwen2.5-coder-0.5b"\nthreads = 2\n')
    assert JudgeSpec.of(settings) == JudgeSpec(model="qwen2.5-coder-0.5b", threads=2)
    (tmp_path / "localeval.toml").write_text('model = "a"\n[judge]\nmodel = "b"\n')
    with pytest.raises(ConfigError, match="both at the top level and in \\[judge\\]"):
        build_settings({"input": str(data)})
    (tmp_path / "localeval.toml").write_text('[judge]\ntemperature = 1\n')
    with pytest.raises(ConfigError, match="'judge.temperature': unknown key"):
        build_settings({"input": str(data)})


def test_the_readmes_config_example_is_a_valid_config(tmp_path):
    import re
    from pathlib import Path

    from localeval.run.settings import build_settings

    readme = (Path(__file__).resolve().parents[1] / "README.md").read_text(encoding="utf-8")
    example = re.search(r"```toml\n(# localeval.toml.*?)```", readme, re.S)
    assert example is not None
    (tmp_path / "localeval.toml").write_text(example.group(1), encoding="utf-8")
    data = tmp_path / "samples.jsonl"
    data.write_text('{"retrieved_context_ids": [1], "reference_context_ids": [1]}\n')
    settings = build_settings({"input": str(data), "metrics": ["id_context_recall"]})
    assert settings.model == "qwen2.5-coder-1.5b" and settings.thresholds["id_context_recall"] == 0.5
    from localeval.run.pipeline import build_metrics

    assert [m.name for m in build_metrics(settings)] == ["id_context_recall"]  # -m narrows; the other metrics' options are left aside


def test_a_backends_own_options_are_validated_by_that_backend(tmp_path):
    from localeval.judge import load_judge

    with pytest.raises(ConfigError, match="judge option 'n_bach': the gguf backend has no such option \\(its options: n_batch, use_mlock\\)"):
        load_judge("smollm2-135m", backend_options={"n_bach": 8})
    with pytest.raises(ConfigError, match="judge option 'timeout' for the openai backend"):
        load_judge(None, judge_url="http://127.0.0.1:9/v1", backend_options={"timeout": -1})
    data = tmp_path / "samples.jsonl"
    data.write_text('{"user_input": "q", "retrieved_contexts": ["c"], "reference": "r"}\n')
    result = CliRunner().invoke(cli, ["score", str(data), "-m", "context_recall", "--no-verifier", "--model", "smollm2-135m", "--judge-option", "batch=8"])
    assert result.exit_code == 2 and "judge option 'batch': the gguf backend has no such option" in result.output
    result = CliRunner().invoke(cli, ["score", str(data), "--judge-option", "n_batch"])
    assert result.exit_code == 2 and "'n_batch' is not KEY=VALUE" in result.output


def test_backend_options_come_from_the_command_line_or_the_config_files_judge_table(tmp_path):
    config = '[judge]\njudge_url = "http://127.0.0.1:9/v1"\n[judge.backend_options]\ntimeout = 30\n'
    settings, _ = _settings_with_config(tmp_path, config)
    assert JudgeSpec.of(settings).backend_options == {"timeout": 30}
    given, _ = _settings_with_config(tmp_path, config, backend_options={"timeout": "5"})
    assert JudgeSpec.of(given).backend_options == {"timeout": "5"}  # the command line's table replaces the file's
    assert {flag_name("backend_options")} <= _flags("score") & _flags("calibrate") & _flags("serve")


def test_models_options_lists_every_backends_options():
    result = CliRunner().invoke(cli, ["models", "options"])
    assert result.exit_code == 0
    assert "gguf:\n  n_batch=512" in result.output and "openai:\n  timeout=300.0" in result.output and "retries=3" in result.output


def test_the_gguf_backend_loads_with_its_options_and_records_them(small_model_path):
    from localeval.judge import load_judge

    with load_judge(str(small_model_path), n_ctx=1024, threads=1, backend_options={"n_batch": "64", "use_mlock": "true"}) as judge:
        description = judge.describe()
        assert description["n_batch"] == 64 and description["speed"] == {"n_threads": 1, "use_mlock": True}


def test_a_resume_accepts_other_speed_settings_and_refuses_other_identity_settings(small_model_path, tmp_path):
    """With the real small judge: threads and use_mlock are speed only, n_batch and n_ctx are not."""
    import json
    import shutil
    from pathlib import Path

    data = tmp_path / "samples.jsonl"
    shutil.copy(Path(__file__).resolve().parents[1] / "examples" / "rag_samples.jsonl", data)
    out = tmp_path / "results.jsonl"
    base = ["score", str(data), "-m", "context_recall", "--no-verifier", "--no-reasons", "--model", str(small_model_path), "--n-ctx", "2048", "-o", str(out), "-q"]
    assert CliRunner().invoke(cli, [*base, "--threads", "1"]).exit_code in (0, 1)
    lines = out.read_text().splitlines(keepends=True)
    out.write_text("".join(lines[:3]))  # the header and two samples: an interrupted run
    speed = CliRunner().invoke(cli, [*base, "--resume", "--threads", "2", "--judge-option", "use_mlock=true"])
    assert speed.exit_code in (0, 1), speed.output
    assert [json.loads(line).get("id") for line in out.read_text().splitlines()[1:]] == [json.loads(line).get("id") for line in lines[1:]]
    out.write_text("".join(lines[:3]))
    identity = CliRunner().invoke(cli, [*base, "--resume", "--judge-option", "n_batch=64"])
    assert identity.exit_code == 2 and "judge.n_batch" in identity.output and "64 now" in identity.output


def test_a_judge_option_on_the_command_line_merges_with_the_configs_table(tmp_path):
    from localeval.run.settings import build_settings

    (tmp_path / "localeval.toml").write_text("[judge.backend_options]\ntimeout = 600\nretries = 0\n", encoding="utf-8")
    data = tmp_path / "samples.jsonl"
    data.write_text("{}\n", encoding="utf-8")
    settings = build_settings({"input": str(data), "backend_options": {"retries": "5"}})
    assert settings.backend_options == {"timeout": 600, "retries": "5"}


@pytest.mark.parametrize(("option", "reason"), [("bogus=1", "has no such option"), ("n_batch=-5", "greater than or equal to 1")])
def test_a_judge_option_is_checked_on_a_run_that_uses_no_judge(tmp_path, option, reason):
    from click.testing import CliRunner

    from localeval.cli import cli

    data = tmp_path / "samples.jsonl"
    data.write_text(json.dumps({"retrieved_context_ids": [1], "reference_context_ids": [1]}) + "\n", encoding="utf-8")
    result = CliRunner().invoke(cli, ["score", str(data), "-m", "id_context_recall", "--judge-option", option, "-q"])
    assert result.exit_code == 2 and reason in result.output, result.output


@pytest.mark.parametrize(("values", "reason"), [
    ({"timeout": True}, "not true or false"), ({"retries": True}, "not true or false"),
    ({"timeout": math.nan}, "finite number"), ({"timeout": "nan"}, "finite number"), ({"timeout": "inf"}, "finite number"),
])
def test_a_backends_numbers_refuse_booleans_and_nan_with_the_right_reason(values, reason):
    from localeval.judge.backends import checked_options

    with pytest.raises(ConfigError, match=reason):
        checked_options("openai", values)


def test_a_config_table_refuses_true_for_a_number(tmp_path):
    from click.testing import CliRunner

    from localeval.cli import cli

    (tmp_path / "localeval.toml").write_text("[judge.backend_options]\nn_batch = true\n", encoding="utf-8")
    data = tmp_path / "samples.jsonl"
    data.write_text(json.dumps({"retrieved_context_ids": [1], "reference_context_ids": [1]}) + "\n", encoding="utf-8")
    result = CliRunner().invoke(cli, ["score", str(data), "-m", "id_context_recall", "-q"])
    assert result.exit_code == 2 and "n_batch" in result.output and "not true or false" in result.output, result.output
