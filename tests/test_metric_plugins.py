"""A metric from another installed package: declared under the `localeval.metrics` entry-point
group, it is scored, gated, summarised and reported like the built-ins, with no edit to
localeval. The package is installed for real (a module and its .dist-info on the path of a
subprocess, as pip lays them out), and the CLI runs in that subprocess."""

from __future__ import annotations

import json

from conftest import install_plugin, run_with_plugins

PLUGIN = '''
from pydantic import BaseModel, ConfigDict, Field

from localeval.metrics.base import Metric, Score


class Params(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)
    words: int = Field(10, ge=1, description="words that make a full answer")


class AnswerWords(Metric[Params]):
    name = "answer_words"
    description = "How long the reference is, in words, against a target."
    required_fields = ("reference",)
    Params = Params

    def score_batch(self, samples, judge):
        return [Score(value=min(1.0, len(s.reference.split()) / self.params.words), details={"words": len(s.reference.split())}) for s in samples]

    @classmethod
    def explain(cls, details):
        return f"{details.words} words"
'''


def test_an_installed_metric_is_scored_gated_and_reported_like_the_built_ins(tmp_path):
    site = tmp_path / "site"
    site.mkdir()
    install_plugin(site, "tiny_metric", PLUGIN, "answer_words = tiny_metric:AnswerWords")
    install_plugin(site, "broken_metric", "raise ImportError('a dependency is missing')\n", "broken = broken_metric:Nope")
    data = tmp_path / "samples.jsonl"
    data.write_text("\n".join(json.dumps({"id": i, "reference": text}) for i, text in enumerate(["one two three", "a b c d e f g h i j k"])) + "\n", encoding="utf-8")

    listed = run_with_plugins(site, "metrics", cwd=tmp_path)
    assert listed.returncode == 0 and "answer_words: How long the reference is" in listed.stdout
    assert "metric 'broken' from an installed package could not be loaded" in listed.stderr and "a dependency is missing" in listed.stderr

    run = run_with_plugins(site, "score", str(data), "-m", "answer_words", "--option", "answer_words.words=5", "-t", "answer_words=0.9",
                     "-o", str(tmp_path / "out.jsonl"), "--markdown", str(tmp_path / "summary.md"), "--summary-json", str(tmp_path / "summary.json"), cwd=tmp_path)
    assert run.returncode == 1, run.stderr  # the first sample is below the gate
    rows = [json.loads(line) for line in (tmp_path / "out.jsonl").read_text().splitlines()][1:]
    assert [r["scores"]["answer_words"] for r in rows] == [0.6, 1.0]
    assert json.loads((tmp_path / "summary.json").read_text())["metrics"]["answer_words"]["mean"] == 0.8
    assert "3 words" in (tmp_path / "summary.md").read_text()

    broken = run_with_plugins(site, "score", str(data), "-m", "broken", cwd=tmp_path)
    assert broken.returncode == 2 and "installed but could not be loaded" in broken.stderr and "Traceback" not in broken.stderr


def test_register_metric_refuses_what_is_no_metric_or_takes_a_name():
    import pytest

    from localeval.errors import ConfigError
    from localeval.metrics import REGISTRY, register_metric
    from localeval.metrics.id_recall import IdContextRecall

    with pytest.raises(ConfigError, match="not a localeval Metric"):
        register_metric(dict)  # type: ignore[arg-type]
    clash = type("Clash", (IdContextRecall,), {})
    with pytest.raises(ConfigError, match="taken by"):
        register_metric(clash)
    bad = type("Bad", (IdContextRecall,), {"name": "Bad Name"})
    with pytest.raises(ConfigError, match="lower-case"):
        register_metric(bad)
    assert REGISTRY["id_context_recall"] is IdContextRecall


def test_a_config_with_options_and_gates_for_an_unselected_plugin_metric_imports_no_plugin(tmp_path):
    """A config may set options for every metric, a plugin's too; a run that scores only built-ins
    leaves them aside, and sets a gate for it aside too, knowing the plugin's name from its package's
    metadata, without importing it (or any other plugin)."""
    site = tmp_path / "site"
    site.mkdir()
    marker = tmp_path / "imported"
    install_plugin(site, "tiny_metric", f"open({str(marker)!r}, 'a').close()\n" + PLUGIN, "answer_words = tiny_metric:AnswerWords")
    install_plugin(site, "other_metric", f"open({str(marker)!r}, 'a').close()\n", "other = other_metric:Nope")
    data = tmp_path / "samples.jsonl"
    data.write_text(json.dumps({"retrieved_context_ids": [1], "reference_context_ids": [1]}) + "\n", encoding="utf-8")
    (tmp_path / "localeval.toml").write_text("[options.answer_words]\nwords = 5\n", encoding="utf-8")
    run = run_with_plugins(site, "score", str(data), "-m", "id_context_recall", "-q", cwd=tmp_path)
    assert run.returncode == 0, run.stderr
    assert not marker.exists()  # no plugin was imported
    # A config gate for a metric that -m leaves out is set aside with one line that says so (issue 77
    # item 11; docs/configuration.md), still without importing the plugin.
    (tmp_path / "localeval.toml").write_text("thresholds = { answer_words = 0.5 }\nmin_mean = { answer_words = 0.5 }\n", encoding="utf-8")
    gated = run_with_plugins(site, "score", str(data), "-m", "id_context_recall", "-q", cwd=tmp_path)
    assert gated.returncode == 0 and "thresholds.answer_words, min_mean.answer_words set aside" in gated.stderr, gated.stderr
    assert not marker.exists()
    (tmp_path / "localeval.toml").write_text("[options.no_such_metric]\nwords = 5\n", encoding="utf-8")
    unknown = run_with_plugins(site, "score", str(data), "-m", "id_context_recall", "-q", cwd=tmp_path)
    assert unknown.returncode == 2 and "an option is set for 'no_such_metric', which is no metric" in unknown.stderr


def test_the_builtin_metrics_enter_the_registry_the_way_a_plugin_does():
    """One registry, one way in: the built-ins are registered by `register_metric` (the checks an
    installed package's metric passes), in registry order; nothing else writes the registry."""
    import ast
    from pathlib import Path

    from localeval import metrics
    from localeval.metrics import BUILTIN, REGISTRY, register_metric

    assert [REGISTRY[cls.name] for cls in BUILTIN] == list(BUILTIN)
    assert all(register_metric(cls) is cls for cls in BUILTIN)  # each passes a plugin's checks (again: no change)
    tree = ast.parse(Path(metrics.__file__).read_text(encoding="utf-8"))
    writers = {
        function.name
        for function in ast.walk(tree) if isinstance(function, ast.FunctionDef)
        for node in ast.walk(function)
        if isinstance(node, ast.Subscript) and isinstance(node.value, ast.Name) and node.value.id == "REGISTRY" and isinstance(node.ctx, ast.Store)
    }
    assert writers == {"register_metric"}
    assert "REGISTRY: dict[str, type[Metric[Any]]] = {}" in Path(metrics.__file__).read_text(encoding="utf-8")
