"""`localeval compare`'s gates against what the runs' setups say: a setup difference is judged per
metric, by what that metric depends on (issue 77 item 10); `--max-drop all=VALUE` gates every
compared metric, each its own way (issue 76 item 4); the refusal is said once, short, and the JSON
gives setup differences typed fields (issue 76 item 5); samples with ids 1..n pair by id (issue 77
item 12). The runs are real `score` runs; the judge metrics are scored with localeval.testing's
ScriptedJudge (what the judge answers is not under test here, what its header says is)."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

from conftest import CAPITALS, invoke

from localeval import compare
from localeval.run.pipeline import score_file
from localeval.run.settings import build_settings
from localeval.testing import ScriptedJudge, prompt_fields

ID_RECALL = "id_context_recall"


class OtherJudge(ScriptedJudge):
    """Another judge: the same answers under another model's name (what a judge change records)."""

    def describe(self) -> dict[str, Any]:
        return {"backend": "scripted", "model": "another"}


def supported(messages: Any) -> bool:
    kind, fields = prompt_fields(messages)
    return kind == "attribution" and fields["statement"] in fields["document"]


def rows(lost: int = 0, noisy: int = 0, ids: bool = True) -> list[dict[str, Any]]:
    """Six capitals: the first `lost` lose both gold ids (id_context_recall 0 instead of 1), the
    first `noisy` answer with the context's other fact (noise_sensitivity 1 instead of 0)."""
    found = []
    for n, (reference, other) in enumerate(CAPITALS):
        row: dict[str, Any] = {
            "user_input": f"What is capital {n}?", "reference": reference, "retrieved_contexts": [f"{reference} {other}"], "reference_contexts": [reference],
            "response": other if n < noisy else reference, "retrieved_context_ids": ["x"] if n < lost else [f"g{n}"], "reference_context_ids": [f"g{n}"],
        }
        if ids:
            row["id"] = n + 1
        found.append(row)
    return found


def run(tmp_path: Path, name: str, metrics: list[str], data: list[dict[str, Any]], judge: ScriptedJudge | None = None, options: dict[str, Any] | None = None) -> Path:
    source, out = tmp_path / f"{name}.jsonl", tmp_path / f"{name}.results.jsonl"
    source.write_text("".join(json.dumps(row) + "\n" for row in data), encoding="utf-8")
    settings = build_settings({"input": str(source), "output": str(out), "metrics": metrics, "options": options or {}, "timing": False})
    assert score_file(settings, judge=judge).exit_code == 0
    return out


def test_a_judge_only_the_candidate_asked_refuses_no_gate_on_a_metric_that_asks_none(tmp_path):
    """Item 10: --max-drop id_context_recall was refused because the candidate also ran a judge metric."""
    base = run(tmp_path, "base", [ID_RECALL], rows())
    candidate = run(tmp_path, "candidate", [ID_RECALL, "faithfulness"], rows(lost=4), ScriptedJudge(supported))
    found = compare(base, candidate, max_drop={ID_RECALL: 0.05}, max_drop_on="mean")
    assert found.gate_refusal is None and found.exit_code == 1  # read, and failed: 4 of 6 lost their gold id
    judge = next(d for d in found.setup if d.key == "judge")
    assert judge.affects == () and not judge.changes_scores and judge.to_json_dict()["base"] is None
    result = invoke(["compare", str(base), str(candidate), "--max-drop", f"{ID_RECALL}=0.05", "--max-drop-on", "mean", "-q"])
    assert result.exit_code == 1 and "refused" not in result.output and "gate failed: --max-drop id_context_recall" in result.stderr


def test_another_judge_refuses_the_gates_of_the_metrics_that_asked_it_and_only_those(tmp_path):
    metrics = [ID_RECALL, "faithfulness", "context_entity_recall"]
    no_judge = {"context_entity_recall": {"extractor": "capitalised_spans"}}  # needs_judge, but with these options asks none
    base = run(tmp_path, "base", metrics, rows(), ScriptedJudge(supported), no_judge)
    candidate = run(tmp_path, "candidate", metrics, rows(), OtherJudge(supported), no_judge)
    found = compare(base, candidate, max_drop={ID_RECALL: 0.05, "context_entity_recall": 0.05})
    assert found.gate_refusal is None and found.exit_code == 0
    assert [(d.key, d.affects) for d in found.setup if d.changes_scores] == [("judge.model", ("faithfulness",))]
    refused = invoke(["compare", str(base), str(candidate), "--max-drop", f"{ID_RECALL}=0.05", "--max-drop", "faithfulness=0.05"])
    assert refused.exit_code == 2
    assert "--allow-setup-change" not in refused.stdout  # the refusal is an error: standard error only
    (line,) = [line for line in refused.stderr.splitlines() if "--allow-setup-change" in line]  # said once
    assert line == (
        "localeval: error: --max-drop faithfulness refused: the runs differ in judge.model, which changes what its score means; "
        "pass --allow-setup-change if that change is what you compare"
    )
    assert compare(base, candidate, max_drop={"faithfulness": 0.05}, allow_setup_change=True).exit_code == 0
    everything = compare(base, candidate, max_drop={"all": 0.05})
    assert everything.exit_code == 2 and everything.metrics[ID_RECALL].gate is not None and everything.metrics["faithfulness"].gate is None


def test_the_same_rubric_at_two_paths_is_no_setup_difference_and_another_rubric_is(tmp_path):
    text = "DOC={document} CLAIM={statement} Yes or No?"
    paths = [tmp_path / "a" / "rubric.txt", tmp_path / "b" / "rubric.txt", tmp_path / "c" / "rubric.txt"]
    for path, content in zip(paths, (text, text, text + " Answer carefully."), strict=True):
        path.parent.mkdir()
        path.write_text(content, encoding="utf-8")
    results = [run(tmp_path, f"run{i}", ["faithfulness"], rows(), ScriptedJudge(supported), {"faithfulness": {"rubric": str(path)}}) for i, path in enumerate(paths)]
    same = compare(results[0], results[1], max_drop={"faithfulness": 0.05})
    assert same.setup == () and same.gate_refusal is None and same.exit_code == 0
    other = compare(results[0], results[2], max_drop={"faithfulness": 0.05})
    assert [d.key for d in other.setup] == ["metrics.faithfulness.rubric.path", "metrics.faithfulness.rubric.sha256"] and other.exit_code == 2


def test_setup_differences_in_the_json_are_typed_values_not_python_reprs(tmp_path):
    base = run(tmp_path, "base", ["nonllm_context_recall"], rows())
    candidate = run(tmp_path, "candidate", ["nonllm_context_recall"], rows(), options={"nonllm_context_recall": {"threshold": 0.6}})
    out = tmp_path / "c.json"
    assert invoke(["compare", str(base), str(candidate), "--json", str(out), "-q"]).exit_code == 0
    figures = json.loads(out.read_text(encoding="utf-8"))
    assert figures["setup_differences"] == [{"field": "metrics.nonllm_context_recall.threshold", "base": 0.5, "candidate": 0.6, "affects": ["nonllm_context_recall"], "changes_scores": True}]
    assert figures["inputs"]["base"]["path"] == str(tmp_path / "base.jsonl") and figures["inputs"]["same"] is True  # the input: apart (one content at two paths)


def test_max_drop_all_gates_every_compared_metric_each_its_own_way_and_a_named_gate_wins(tmp_path):
    metrics = [ID_RECALL, "noise_sensitivity"]
    base = run(tmp_path, "base", metrics, rows(), ScriptedJudge(supported))
    candidate = run(tmp_path, "candidate", metrics, rows(noisy=6), ScriptedJudge(supported))  # noise 0 -> 1: worse, lower is better
    found = compare(base, candidate, max_drop={"all": 0.05}, max_drop_on="mean")
    assert set(found.max_drop) == {ID_RECALL, "noise_sensitivity"}
    noise = found.metrics["noise_sensitivity"]
    assert noise.gate is not None and not noise.gate.ok and noise.gate.value is not None and noise.gate.value < -0.5  # the rise read as the drop
    recall = found.metrics[ID_RECALL]
    assert recall.gate is not None and recall.gate.ok and found.exit_code == 1
    named = compare(base, candidate, max_drop={"all": 0.05, "noise_sensitivity": 1.0}, max_drop_on="mean")
    assert named.max_drop == {ID_RECALL: 0.05, "noise_sensitivity": 1.0} and named.exit_code == 0
    config = tmp_path / "gates.toml"
    config.write_text('max_drop = { all = 0.05 }\nmax_drop_on = "mean"\n', encoding="utf-8")
    result = invoke(["compare", str(base), str(candidate), "--config", str(config), "-q"])
    assert result.exit_code == 1 and result.stderr.count("localeval: gate failed:") == 1 and "--max-drop noise_sensitivity=0.050" in result.stderr, result.output
    assert invoke(["compare", str(base), str(candidate), "--config", str(config), "--max-drop", "noise_sensitivity=1", "-q"]).exit_code == 0


def test_samples_with_ids_one_to_n_are_paired_by_id(tmp_path):
    """Item 12: ids 1..n were reported as "paired by line (the samples have no ids)"."""
    base, candidate = run(tmp_path, "base", [ID_RECALL], rows()), run(tmp_path, "candidate", [ID_RECALL], rows(lost=1))
    found = compare(base, candidate)
    assert found.paired_by == "id" and found.to_json_dict()["paired_by"] == "id"
    assert "Samples paired by id" in invoke(["compare", str(base), str(candidate)]).output
    without = run(tmp_path, "base_no_ids", [ID_RECALL], rows(ids=False)), run(tmp_path, "candidate_no_ids", [ID_RECALL], rows(lost=1, ids=False))
    assert compare(*without).paired_by == "line"


# ---- issue 77 item 11: config gates when -m narrows the run, in score and compare alike ------------------------


def test_compare_sets_aside_a_config_gate_for_a_metric_that_m_leaves_out_and_says_so(tmp_path):
    metrics = [ID_RECALL, "nonllm_context_recall"]
    base, candidate = run(tmp_path, "base", metrics, rows()), run(tmp_path, "candidate", metrics, rows(lost=1))
    config = tmp_path / "localeval.toml"  # beside CANDIDATE: compare reads it
    config.write_text("max_drop = { id_context_recall = 0.5, nonllm_context_recall = 0.02 }\n", encoding="utf-8")
    result = invoke(["compare", str(base), str(candidate), "-m", ID_RECALL, "-q"])
    assert result.exit_code == 0, result.output
    assert result.stderr == f"localeval: {config}: max_drop.nonllm_context_recall set aside: -m {ID_RECALL} leaves that metric out\n"
    typed = invoke(["compare", str(base), str(candidate), "-m", ID_RECALL, "--max-drop", "nonllm_context_recall=0.02", "-q"])
    assert typed.exit_code == 2 and "--max-drop nonllm_context_recall: not a metric both runs scored and compared" in typed.output  # typed: refused
    config.write_text('metrics = ["id_context_recall"]\nmax_drop = { nonllm_context_recall = 0.02 }\n', encoding="utf-8")
    outside = invoke(["compare", str(base), str(candidate), "-m", ID_RECALL, "-q"])
    assert outside.exit_code == 2 and "'max_drop.nonllm_context_recall': a gate for a metric that is not selected: the config's metrics (id_context_recall) leave" in outside.output
    config.write_text("max_drop = { nonllm_context_recal = 0.02 }\n", encoding="utf-8")  # misspelt: refused, never set aside
    misspelt = invoke(["compare", str(base), str(candidate), "-m", ID_RECALL, "-q"])
    assert misspelt.exit_code == 2 and "--max-drop nonllm_context_recal: not a metric" in misspelt.output


def test_score_sets_aside_a_config_gate_for_a_metric_that_m_leaves_out_and_says_so(tmp_path):
    data = tmp_path / "data.jsonl"
    data.write_text("".join(json.dumps(row) + "\n" for row in rows()), encoding="utf-8")
    config = tmp_path / "localeval.toml"
    config.write_text('metrics = ["context_recall", "id_context_recall"]\nmin_mean = { context_recall = 0.8, id_context_recall = 0.5 }\n', encoding="utf-8")
    result = invoke(["score", str(data), "-m", ID_RECALL, "-q"])
    assert result.exit_code == 0, result.output
    assert f"localeval: {config}: min_mean.context_recall set aside: -m {ID_RECALL} leaves that metric out" in result.stderr
    typed = invoke(["score", str(data), "-m", ID_RECALL, "--min-mean", "context_recall=0.8", "-q"])
    assert typed.exit_code == 2 and "--min-mean context_recall: a gate for a metric that is not selected" in typed.output
    config.write_text('metrics = ["id_context_recall"]\nmin_mean = { context_recall = 0.8 }\n', encoding="utf-8")
    outside = invoke(["score", str(data), "-m", ID_RECALL, "-q"])
    assert outside.exit_code == 2 and "'min_mean.context_recall': a gate for a metric that is not selected" in outside.output
    failing = tmp_path / "strict.toml"  # a gate on the metric -m names is still read, and fails
    failing.write_text("min_mean = { id_context_recall = 1.0, context_recall = 0.8 }\n", encoding="utf-8")
    lost = tmp_path / "lost.jsonl"
    lost.write_text("".join(json.dumps(row) + "\n" for row in rows(lost=3)), encoding="utf-8")
    assert invoke(["score", str(lost), "-m", ID_RECALL, "--config", str(failing), "-q"]).exit_code == 1


def test_which_metrics_asked_the_judge_is_read_from_the_options_each_header_records():
    """A metric graded by the verifier alone, answer_correctness with a factuality weight of 0 and
    id_context_recall ask no judge; an unknown metric, or options that cannot be read, count as judged."""
    from localeval.comparison.setup import judged_metrics

    recorded = {"metrics": {
        "faithfulness": {"grader": "verifier", "statements": "sentences"}, "context_recall": {"grader": "judge"}, "answer_correctness": {"weights": [0, 1]},
        "context_entity_recall": {"extractor": "judge"}, "context_precision": {"grader": "no such grader"}, "someone_elses_metric": {},
    }}
    names = [*recorded["metrics"], ID_RECALL]
    assert judged_metrics(recorded, names) == {"context_recall", "context_entity_recall", "context_precision", "someone_elses_metric"}
    assert judged_metrics({"metrics": "not a table"}, ["faithfulness", ID_RECALL]) == {"faithfulness"}


class ManyKeyJudge(ScriptedJudge):
    """A judge whose description differs from ScriptedJudge's in a dozen keys (a new judge, its settings and calibration)."""

    def describe(self) -> dict[str, Any]:
        return {"backend": "scripted", "model": "another", **{f"setting_{n}": n for n in range(11)}}


def test_a_refusal_across_many_differences_stays_one_short_line_and_junit_errors_only_the_refused_gate(tmp_path):
    """Issue 76 item 5: the refusal was printed twice and ran to 1.5 KB."""
    metrics = [ID_RECALL, "faithfulness"]
    base = run(tmp_path, "base", metrics, rows(), ScriptedJudge(supported))
    candidate = run(tmp_path, "candidate", metrics, rows(), ManyKeyJudge(supported))
    junit = tmp_path / "c.xml"
    result = invoke(["compare", str(base), str(candidate), "--max-drop", "all=0.05", "--junit-xml", str(junit)])
    assert result.exit_code == 2
    assert "--allow-setup-change" not in result.stdout  # the refusal is an error: standard error only
    (line,) = [line for line in result.stderr.splitlines() if "--allow-setup-change" in line]
    assert line.startswith("localeval: error: --max-drop faithfulness refused: the runs differ in judge.model, judge.setting_0, ") and " and 8 more, " in line
    assert len(line) < 300, line
    suite = ET.parse(junit).getroot().find("testsuite")
    assert suite is not None and (suite.get("tests"), suite.get("failures"), suite.get("errors")) == ("2", "0", "1")
    (error,) = suite.iter("error")
    assert "faithfulness" in (error.get("message") or "")
