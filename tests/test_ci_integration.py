"""CI integration: config files, field mapping, JUnit, Markdown, mean gates, the pytest helper, the HTML report."""

from __future__ import annotations

import hashlib
import json
import re
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from conftest import invoke, result_rows

from localeval.metrics import DEFAULT_METRICS
from localeval.testing import assert_metric

ROWS = [
    {"id": "good", "retrieved_context_ids": [1, 2], "reference_context_ids": [1, 2]},
    {"id": "half", "retrieved_context_ids": [1], "reference_context_ids": [1, 9]},
    {"id": "none", "retrieved_context_ids": [], "reference_context_ids": [5]},
    {"id": "undefined", "retrieved_context_ids": [1], "reference_context_ids": []},
    {"id": "broken"},
]


def test_localeval_toml_next_to_the_data_sets_metrics_and_thresholds(write_jsonl, tmp_path):
    data = write_jsonl(ROWS[:2])
    (tmp_path / "localeval.toml").write_text('metrics = ["id_context_recall"]\nthresholds = { id_context_recall = 0.9 }\n')
    summary = tmp_path / "s.json"
    result = invoke(["score", str(data), "--summary-json", str(summary)])
    assert result.exit_code == 1
    figures = json.loads(summary.read_text())
    assert list(figures["metrics"]) == ["id_context_recall"]
    config = tmp_path / "localeval.toml"
    assert figures["run"]["config"] == {"file": str(config), "table": "", "sha256": hashlib.sha256(config.read_bytes()).hexdigest()}
    assert f"using config {config}" in result.stderr  # a config that came with the data is named
    assert invoke(["score", str(data), "-t", "id_context_recall=0.5"]).exit_code == 0  # the command line wins


def test_pyproject_tool_table_in_the_working_directory(write_jsonl, tmp_path, monkeypatch):
    data = write_jsonl(ROWS[:2])
    project = tmp_path / "project"
    project.mkdir()
    (project / "pyproject.toml").write_text('[project]\nname = "x"\n\n[tool.localeval]\nmetrics = ["id_context_recall"]\nmin_mean = { id_context_recall = 0.8 }\n')
    monkeypatch.chdir(project)
    result = invoke(["score", str(data)])
    assert result.exit_code == 1  # mean 0.75 < 0.8
    assert "id_context_recall mean 0.750 < 0.8" in result.stdout


def test_an_unknown_config_key_is_named(write_jsonl, tmp_path):
    data = write_jsonl(ROWS[:1])
    (tmp_path / "localeval.toml").write_text('metrics = ["id_context_recall"]\nthreshold = { id_context_recall = 0.9 }\n')
    result = invoke(["score", str(data)])
    assert result.exit_code == 2
    assert "localeval.toml: 'threshold': unknown key" in result.stderr


def test_config_options_and_model_settings(write_jsonl, tmp_path):
    reference = "The Eiffel Tower was completed on 31 March 1889."
    data = write_jsonl([{"retrieved_contexts": ["Other text about Paris. " * 4 + reference], "reference_contexts": [reference]}])
    config = tmp_path / "ci.toml"
    config.write_text('metrics = ["nonllm_context_recall"]\n[options.nonllm_context_recall]\nmeasure = "partial_ratio"\n')
    out = tmp_path / "o.jsonl"
    assert invoke(["score", str(data), "--config", str(config), "-o", str(out)]).exit_code == 0
    assert result_rows(out)[0]["scores"]["nonllm_context_recall"] == 1.0
    invoke(["score", str(data), "--config", str(config), "-o", str(out), "--option", "nonllm_context_recall.measure=levenshtein"])
    assert result_rows(out)[0]["scores"]["nonllm_context_recall"] == 0.0


def test_field_mapping(write_jsonl, tmp_path):
    data = write_jsonl([{"got_ids": ["a", "b"], "want_ids": ["b"]}, {"got_ids": "oops", "want_ids": []}])
    out = tmp_path / "o.jsonl"
    result = invoke(["score", str(data), "-m", "id_context_recall", "--map", "got_ids=retrieved_context_ids", "--map", "want_ids=reference_context_ids", "-o", str(out)])
    rows = result_rows(out)
    assert rows[0]["scores"]["id_context_recall"] == 1.0
    assert "field 'got_ids'" in rows[1]["errors"]["input"]  # errors name the key as written
    assert result.exit_code == 2


def test_junit_xml_has_a_case_per_sample_and_metric_with_reasons(write_jsonl, tmp_path):
    data = write_jsonl(ROWS)
    junit = tmp_path / "junit.xml"
    result = invoke(["score", str(data), "-m", "id_context_recall", "-t", "id_context_recall=0.75", "--junit-xml", str(junit)])
    assert result.exit_code == 1
    suite = ET.parse(junit).getroot().find("testsuite")
    assert suite.get("name") == "id_context_recall"
    assert (suite.get("tests"), suite.get("failures"), suite.get("skipped")) == ("5", "3", "1")
    cases = {case.get("name"): case for case in suite.findall("testcase")}
    assert cases["good (line 1)"].find("failure") is None
    failure = cases["half (line 2)"].find("failure")
    assert failure.get("message") == "score 0.500 < threshold 0.75: missing ids: 9"
    assert cases["undefined (line 4)"].find("skipped") is not None
    assert "missing required field" in cases["broken (line 5)"].find("failure").get("message")


def test_markdown_lists_the_failing_samples(write_jsonl, tmp_path):
    data = write_jsonl(ROWS)
    md = tmp_path / "summary.md"
    invoke(["score", str(data), "-m", "id_context_recall", "-t", "id_context_recall=0.75", "--min-mean", "id_context_recall=0.1", "--markdown", str(md)])
    text = md.read_text()
    assert text.startswith("## localeval: FAILED")
    assert "| id_context_recall | 0.500 | 0.289 | 0.000-1.000 | 0.500 | 3 | 1 | 1 | 0.750 | 0.250 | 0.100, read on the mean 0.500 (not met: 1 of 5 samples could not be scored, and an unscored sample fails a gate) |" in text
    assert "| half | 2 | id_context_recall | 0.500 | 0.750 | missing ids: 9 |" in text
    assert "| none | 3 | id_context_recall | 0.000 | 0.750 | missing ids: 5 |" in text
    assert "good" not in text


def test_assert_metric_lists_failing_samples_with_reasons():
    assert_metric(ROWS[:1], "id_context_recall", threshold=1.0)
    with pytest.raises(AssertionError) as info:
        assert_metric(ROWS, "id_context_recall", threshold=0.75)
    message = str(info.value)
    assert message.splitlines()[0] == "3 of 5 samples below id_context_recall >= 0.75:"
    assert "half (line 2): id_context_recall = 0.500: missing ids: 9" in message
    assert "broken (line 5): id_context_recall = null: missing required field" in message
    with pytest.raises(AssertionError, match="undefined"):
        assert_metric(ROWS[3:4], "id_context_recall", threshold=0.5, allow_nan=False)


def test_shared_judge_is_loaded_once(small_model_path):
    from localeval.testing import shared_judge

    assert shared_judge(str(small_model_path), 1024) is shared_judge(str(small_model_path), 1024)


def test_html_report_is_self_contained_and_escapes(write_jsonl, tmp_path):
    rows = [*ROWS[:3], {"id": "<script>alert(1)</script>", "retrieved_context_ids": [1], "reference_context_ids": [1]}]
    results = tmp_path / "results.jsonl"
    invoke(["score", str(write_jsonl(rows)), "-m", "id_context_recall", "-o", str(results)])
    page = tmp_path / "report.html"
    assert invoke(["report", str(results), "-o", str(page)]).exit_code == 0
    html = page.read_text()
    assert "<script>alert(1)</script>" not in html and "&lt;script&gt;alert(1)&lt;/script&gt;" in html
    assert not re.search(r"(src|href)=\"?(https?:)?//", html)  # nothing loaded from anywhere
    assert html.count("<svg") == 1 and "<rect" in html
    assert "missing ids: 9" in html


def test_the_readme_example_goes_through_every_report(small_model_path, tmp_path):
    """The README's example file, scored with every metric by the real (small) judge, then
    written as JUnit XML, a Markdown summary and the HTML report: what a CI job does."""
    example = Path(__file__).resolve().parents[1] / "examples" / "rag_samples.jsonl"
    results, junit, md, html = (tmp_path / name for name in ("results.jsonl", "junit.xml", "summary.md", "report.html"))
    scored = invoke(
        ["score", str(example), "--model", str(small_model_path), "-o", str(results), "--junit-xml", str(junit), "--markdown", str(md), "-t", "context_recall=0.5"]
    )
    assert scored.exit_code in (0, 1), scored.output
    rows = result_rows(results)
    assert len(rows) == sum(1 for line in example.read_text().splitlines() if line.strip())
    assert all(set(row["scores"]) == set(DEFAULT_METRICS) for row in rows)
    assert all(row["scores"]["faithfulness"] is not None and row["scores"]["context_precision"] is not None for row in rows)
    suites = {suite.get("name") for suite in ET.parse(junit).getroot().findall("testsuite")}
    assert suites == set(DEFAULT_METRICS)
    assert md.read_text().startswith("## localeval: ")
    reported = invoke(["report", str(results), "-o", str(html)])
    assert reported.exit_code == 0, reported.output
    assert all(row["id"] in html.read_text() for row in rows)
