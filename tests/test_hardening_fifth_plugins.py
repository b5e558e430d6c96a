"""Issue 45, fifth hardening pass, items 6-12 and their weak points: a metric plugin cannot lie
(scores outside [0, 1], true, inf, strings, details JSON cannot hold, too few or too many scores)
or crash a run; plugins load only when a run names one; judge options merge and are checked on
every run; the verifier tokenizes a context once; a full disk exits 3; an input that grows is
hashed as read; --map is checked; `serve` says it serves only once it can.

Plugins are installed for real (a module and its .dist-info on a subprocess's path, as pip
lays them out) where the test is about loading; the runner's checks are tested in process with
a Metric subclass, which is what a plugin is once loaded."""

from __future__ import annotations

import hashlib
import json
import math
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from conftest import result_rows

from localeval.errors import ConfigError
from localeval.metrics.base import Metric, Score
from localeval.runner import score

ROOT = Path(__file__).resolve().parents[1]
PLUGIN_CLASS = "tests_plugin.Plugin"


def _install(site: Path, module: str, source: str, entries: str) -> None:
    (site / f"{module}.py").write_text(source, encoding="utf-8")
    info = site / f"{module}-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {module}\nVersion: 0.1\n", encoding="utf-8")
    (info / "entry_points.txt").write_text(f"[localeval.metrics]\n{entries}\n", encoding="utf-8")
    (info / "RECORD").write_text("", encoding="utf-8")


def _localeval(site: Path, *args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(site), str(ROOT)])}
    return subprocess.run([sys.executable, "-m", "localeval", *args], capture_output=True, text=True, env=env, cwd=cwd, timeout=300)


class _ById(Metric[Any]):
    """A plugin-like metric whose Score for each sample is looked up by the sample's id."""

    name = "by_id"
    description = "returns what the test says, by sample id"
    required_fields = ("reference",)
    answers: dict[int, Any] = {}

    def score_batch(self, samples, judge):  # type: ignore[no-untyped-def]
        return [self.answers[s.id] for s in samples]


def _run(answers: dict[int, Any], metric: type[_ById] = _ById) -> list[Any]:
    cls = type("Plugin", (metric,), {"answers": answers, "__module__": "tests_plugin"})
    samples = [{"id": i, "reference": "r", "retrieved_context_ids": [1], "reference_context_ids": [1]} for i in answers]
    return list(score(samples, [cls(), "id_context_recall"]))


def test_a_plugins_bad_scores_are_that_samples_error_naming_the_plugin_and_nothing_else():
    rows = _run({
        0: Score(5.0), 1: Score(-0.5), 2: Score(True), 3: Score(math.inf), 4: Score(-math.inf), 5: Score("0.5"),  # type: ignore[arg-type]
        6: Score(0.5, details={"seen": {1, 2}}), 7: Score(0.5, details={1: "x"}),  # type: ignore[dict-item]
        8: 0.5, 9: Score(None),
        10: Score(np.float32(0.25)), 11: Score(np.int64(1)), 12: Score(math.nan), 13: Score(0.75, details={"words": 3}),  # type: ignore[arg-type]
    })
    for row in rows[:10]:
        assert row.scores["by_id"] is None, row
        assert "metric 'by_id' (tests_plugin.Plugin)" in row.errors["by_id"], row.errors
        assert row.scores["id_context_recall"] == 1.0 and "id_context_recall" not in row.errors  # the other metric is unaffected
    assert "outside [0, 1]" in rows[0].errors["by_id"] and "outside [0, 1]" in rows[3].errors["by_id"]
    assert "not a number" in rows[2].errors["by_id"] and "not a number" in rows[5].errors["by_id"]
    assert "JSON" in rows[6].errors["by_id"] and "not a Score" in rows[8].errors["by_id"] and "no error" in rows[9].errors["by_id"]
    # numpy numbers in range are converted to float (friendly, and exact); NaN stays "undefined", as for the built-ins
    assert rows[10].scores["by_id"] == 0.25 and type(rows[10].scores["by_id"]) is float and rows[11].scores["by_id"] == 1.0
    assert math.isnan(rows[12].scores["by_id"]) and "by_id" not in rows[12].errors
    assert rows[13].scores["by_id"] == 0.75 and rows[13].details["by_id"] == {"words": 3}
    for row in rows:  # every row can be written and read back
        json.loads(row.to_line())


def test_a_score_batch_with_too_few_or_too_many_scores_fails_every_sample_of_its_batch():
    class Short(_ById):
        def score_batch(self, samples, judge):  # type: ignore[no-untyped-def]
            return [Score(1.0)] * (len(samples) - 1)

    class Long(_ById):
        def score_batch(self, samples, judge):  # type: ignore[no-untyped-def]
            return [Score(1.0)] * (len(samples) + 1)

    for metric, off_by in ((Short, -1), (Long, 1)):  # batches are sized by time (localeval.runner): whatever their size
        rows = _run({0: None, 1: None, 2: None}, metric)
        assert [r.scores["by_id"] for r in rows] == [None, None, None]
        said = [re.search(r"returned (\d+) scores for a batch of (\d+) samples; every sample of the batch is left unscored", r.errors["by_id"]) for r in rows]
        assert all(found and int(found[1]) == int(found[2]) + off_by for found in said), rows
        assert all(r.scores["id_context_recall"] == 1.0 for r in rows)


def test_a_plugin_that_raises_fails_its_samples_not_the_run():
    class Raises(_ById):
        def score_batch(self, samples, judge):  # type: ignore[no-untyped-def]
            raise SystemExit(0)

    rows = _run({0: None, 1: None}, Raises)
    assert all("raised SystemExit" in r.errors["by_id"] and r.scores["id_context_recall"] == 1.0 for r in rows)


BAD_PLUGIN = '''
import math
print("plugin imported")  # must not reach standard output
from localeval.metrics.base import Metric, Score


class Bad(Metric):
    name = "bad_values"
    description = "Returns a bad value for some samples."
    required_fields = ("reference",)

    def __init__(self, params=None):
        print("building the metric")  # nor this
        super().__init__(params)

    def score_batch(self, samples, judge):
        print("scoring a batch")  # must not reach standard output either
        values = {"five": 5.0, "true": True, "inf": math.inf, "text": "0.5", "ok": 0.75}
        return [Score(value=values[s.reference]) for s in samples]
'''


def test_an_installed_plugins_bad_values_never_pass_a_gate_nor_break_the_results(tmp_path):
    site = tmp_path / "site"
    site.mkdir()
    _install(site, "bad_plugin", BAD_PLUGIN, "bad_values = bad_plugin:Bad")
    data = tmp_path / "samples.jsonl"
    data.write_text("".join(json.dumps({"id": i, "reference": r}) + "\n" for i, r in enumerate(["five", "true", "inf", "text", "ok"])), encoding="utf-8")
    out = tmp_path / "out.jsonl"
    run = _localeval(site, "score", str(data), "-m", "bad_values", "-t", "bad_values=0.5", "--min-mean", "bad_values=0.5", "-o", str(out),
                     "--junit-xml", str(tmp_path / "junit.xml"), "--summary-json", str(tmp_path / "summary.json"), "-q", cwd=tmp_path)
    assert run.returncode == 1, run.stderr  # four samples could not be scored: they fail the gate
    rows = result_rows(out)
    assert [r["scores"]["bad_values"] for r in rows] == [None, None, None, None, 0.75]
    assert all("bad_plugin.Bad" in r["errors"]["bad_values"] for r in rows[:4])
    summary = json.loads((tmp_path / "summary.json").read_text())["metrics"]["bad_values"]
    assert summary["errors"] == 4 and summary["mean"] == 0.75
    report = _localeval(site, "report", str(out), "-o", str(tmp_path / "report.html"), cwd=tmp_path)
    assert report.returncode == 0, report.stderr
    resumed = _localeval(site, "score", str(data), "-m", "bad_values", "-o", str(out), "--resume", "-q", cwd=tmp_path)
    assert resumed.returncode == 0, resumed.stderr

    piped = _localeval(site, "score", str(data), "-m", "bad_values", "-o", "-", "-q", cwd=tmp_path)
    assert piped.returncode == 0, piped.stderr
    assert [json.loads(line)["line"] for line in piped.stdout.splitlines()] == [1, 2, 3, 4, 5]  # JSON lines and nothing else
    assert "plugin imported" in piped.stderr and "building the metric" in piped.stderr and "scoring a batch" in piped.stderr


def test_plugins_load_only_when_a_run_names_one_and_a_sys_exit_at_import_decides_nothing(tmp_path):
    site = tmp_path / "site"
    site.mkdir()
    marker = tmp_path / "imported"
    _install(site, "exits", "import sys\nsys.exit(0)\n", "exits = exits:Nope")
    _install(site, "slow", f"open({str(marker)!r}, 'w').close()\nfrom localeval.metrics.id_recall import IdContextRecall as Slow\n", "slow = slow:Slow")
    data = tmp_path / "samples.jsonl"
    data.write_text(json.dumps({"retrieved_context_ids": [1], "reference_context_ids": [2]}) + "\n", encoding="utf-8")

    failing = _localeval(site, "score", str(data), "-m", "id_context_recall", "-t", "id_context_recall=1.0", "-o", str(tmp_path / "out.jsonl"), cwd=tmp_path)
    assert failing.returncode == 1, failing.stderr  # the gate decides, not the plugin's sys.exit(0)
    assert len(result_rows(tmp_path / "out.jsonl")) == 1
    assert _localeval(site, "--version", cwd=tmp_path).returncode == 0
    assert not marker.exists()  # neither run imported a plugin

    named = _localeval(site, "score", str(data), "-m", "exits", cwd=tmp_path)
    assert named.returncode == 2 and "could not be loaded" in named.stderr and "SystemExit" in named.stderr, named.stderr
    listed = _localeval(site, "metrics", cwd=tmp_path)
    assert listed.returncode == 0 and "metric 'exits' from an installed package could not be loaded" in listed.stderr
    assert marker.exists()  # listing loads them all


def test_a_plugin_under_a_built_in_name_is_named_on_every_run_and_the_built_in_wins(tmp_path):
    site = tmp_path / "site"
    site.mkdir()
    _install(site, "shadow", "from localeval.metrics.id_recall import IdContextRecall as Shadow\n", "id_context_recall = shadow:Shadow")
    data = tmp_path / "samples.jsonl"
    data.write_text(json.dumps({"retrieved_context_ids": [1], "reference_context_ids": [1]}) + "\n", encoding="utf-8")
    run = _localeval(site, "score", str(data), "-m", "id_context_recall", "-q", cwd=tmp_path)
    assert run.returncode == 0, run.stderr
    assert "shadow:Shadow declares the metric 'id_context_recall', a built-in metric's name: the built-in is used" in run.stderr


def test_a_judge_option_on_the_command_line_merges_with_the_configs_table(tmp_path):
    from localeval.settings import build_settings

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


def test_the_verifier_tokenizes_each_context_once(monkeypatch):
    from localeval.metrics import create_metric
    from localeval.verifier import load_verifier

    verifier = load_verifier()
    encoded: list[str] = []
    real = verifier.tokenizer.encode
    monkeypatch.setattr(verifier.tokenizer, "encode", lambda text: encoded.append(text) or real(text))
    context = "\n".join(f"Line {i} says that the river number {i} is long." for i in range(40))
    sample = {"user_input": "Which river is long?", "retrieved_contexts": [context, "A second context."]}
    (row,) = score([sample], [create_metric("context_relevance", {"verifier": "true", "unit": "line"})])
    assert row.scores["context_relevance"] is not None, row.errors
    assert encoded.count(context) == 1 and encoded.count("Which river is long?") == 1
    assert len(encoded) == len(set(encoded)) == 40 + 1 + 2  # each line, the question, each context (the second is its own one unit): each text once


@pytest.mark.skipif(not Path("/dev/full").exists(), reason="needs /dev/full (a device that is always full)")
@pytest.mark.parametrize("flag", ["--summary-json", "--junit-xml", "--markdown", "-o"])
def test_a_full_disk_exits_3_whichever_file_it_is(tmp_path, flag):
    from click.testing import CliRunner

    from localeval.cli import cli

    data = tmp_path / "samples.jsonl"
    data.write_text(json.dumps({"retrieved_context_ids": [1], "reference_context_ids": [1]}) + "\n", encoding="utf-8")
    extra = [] if flag == "-o" else ["-o", str(tmp_path / "out.jsonl")]
    result = CliRunner().invoke(cli, ["score", str(data), "-m", "id_context_recall", *extra, flag, "/dev/full", "-q"])
    assert result.exit_code == 3, result.output
    assert "/dev/full" in result.output and "No space left on device" in result.output and "bug" not in result.output


def test_an_input_that_grows_during_a_run_is_hashed_and_scored_as_read(tmp_path):
    from localeval.pipeline import score_file
    from localeval.settings import build_settings

    data = tmp_path / "samples.jsonl"
    original = "".join(json.dumps({"id": i, "retrieved_context_ids": [1], "reference_context_ids": [1]}) + "\n" for i in range(3))
    data.write_text(original, encoding="utf-8")
    out = tmp_path / "out.jsonl"
    messages: list[str] = []

    def grow(_: Any) -> None:
        with open(data, "a", encoding="utf-8") as handle:
            handle.write(json.dumps({"id": "late", "retrieved_context_ids": [1], "reference_context_ids": [2]}) + "\n")

    outcome = score_file(build_settings({"input": str(data), "output": str(out), "metrics": ["id_context_recall"]}), on_row=grow, on_message=messages.append)
    assert outcome.written == 3 and [r["id"] for r in result_rows(out)] == [0, 1, 2]
    header = json.loads(out.read_text().splitlines()[0])
    assert header["run"]["input"]["sha256"] == hashlib.sha256(original.encode()).hexdigest()
    assert any("grew by" in m and "were scored and hashed" in m for m in messages), messages


def test_map_onto_an_unknown_field_is_refused_and_onto_a_present_field_is_said(tmp_path):
    from click.testing import CliRunner

    from localeval.cli import cli

    data = tmp_path / "samples.jsonl"
    data.write_text("".join(json.dumps({"ids": [1], "retrieved_context_ids": [2], "reference_context_ids": [1]}) + "\n" for _ in range(3)), encoding="utf-8")
    misspelt = CliRunner().invoke(cli, ["score", str(data), "-m", "id_context_recall", "--map", "ids=retrieved_contxt_ids", "-q"])
    assert misspelt.exit_code == 2 and "'retrieved_contxt_ids' is not a field localeval reads" in misspelt.output
    replaced = CliRunner().invoke(cli, ["score", str(data), "-m", "id_context_recall", "--map", "ids=retrieved_context_ids", "-o", str(tmp_path / "o.jsonl"), "-q"])
    assert replaced.exit_code == 0, replaced.output
    assert replaced.output.count("the line's own value is replaced") == 1 and "'retrieved_context_ids' by 'ids'" in replaced.output
    assert [r["scores"]["id_context_recall"] for r in result_rows(tmp_path / "o.jsonl")] == [1.0, 1.0, 1.0]


@pytest.mark.parametrize("args", [["--judge-option", "bogus=1"], [str(Path("no-such-model.gguf"))]])
def test_serve_says_it_serves_only_once_its_options_and_model_are_good(tmp_path, args):
    result = subprocess.run([sys.executable, "-m", "localeval", "serve", *args], capture_output=True, text=True, cwd=tmp_path, timeout=120,
                            env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert result.returncode == 2, result.stderr
    assert "serving" not in result.stderr and "error" in result.stderr


def test_a_plugin_whose_explain_raises_leaves_the_report_standing():
    from localeval.metrics import REGISTRY, register_metric
    from localeval.reports import explain
    from localeval.results import ResultRow

    class Unexplained(_ById):
        name = "unexplained"

        @classmethod
        def explain(cls, details):  # type: ignore[no-untyped-def]
            raise KeyError("words")

    register_metric(Unexplained)
    try:
        text = explain(ResultRow(line=1, scores={"unexplained": 0.5}, details={"unexplained": {"words": 3}}), "unexplained")
    finally:
        del REGISTRY["unexplained"]
    assert "explain raised KeyError" in text
