"""The reports (`localeval report`, --markdown, --junit-xml): a results line that is crafted,
overlong or not a number is refused by line and the rest reported; what ids and errors carry is
shown as text, never as markup; a page stays small whatever the file names; a metric's details
are explained in every format."""

from __future__ import annotations

import json
import shutil
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from click.testing import CliRunner
from conftest import invoke, result_rows

from localeval.cli import MAX_REPORT_METRICS, cli
from localeval.errors import EXIT_THRESHOLD_FAILED, EXIT_USAGE

ROOT = Path(__file__).resolve().parents[1]


NONLLM = ["-m", "nonllm_context_recall", "-m", "id_context_recall"]


UNRECALLED = {"id": "q1", "retrieved_contexts": ["Paris has many museums."], "reference_contexts": ["Construction was completed on 31 March 1889."]}


RECALLED = {"id": "q2", "retrieved_contexts": ["The tower was completed on 31 March 1889."], "reference_contexts": ["The tower was completed on 31 March 1889."]}


def test_reports_explain_a_reference_that_was_not_recalled(write_jsonl, tmp_path):
    data = write_jsonl([UNRECALLED, RECALLED])
    out, page, junit, md = (tmp_path / name for name in ("r.jsonl", "p.html", "j.xml", "s.md"))
    args = ["score", str(data), "-m", "nonllm_context_recall", "-o", str(out), "-t", "nonllm_context_recall=0.5"]
    result = invoke([*args, "--junit-xml", str(junit), "--markdown", str(md)])
    assert result.exit_code == EXIT_THRESHOLD_FAILED, result.output
    assert result_rows(out)[0]["details"]["nonllm_context_recall"]["references"][0]["similarity"] is None
    assert "#0 (no close match)" in md.read_text()
    failure = ET.parse(junit).getroot().find("testsuite/testcase/failure")
    assert "1 of 1 reference contexts not recalled: #0 (no close match)" in failure.get("message")
    report = invoke(["report", str(out), "-o", str(page)])
    assert report.exit_code == 0, report.output
    assert "no close match" in page.read_text()


def test_markup_in_a_results_file_never_reaches_the_page_as_markup(write_jsonl, tmp_path):
    out = tmp_path / "r.jsonl"
    invoke(["score", str(write_jsonl([RECALLED])), "-m", "nonllm_context_recall", "-o", str(out)])
    payload = '<img src=x onerror="document.title=1">'
    lines = out.read_text().splitlines()
    row = json.loads(lines[1])
    crafted = [
        json.dumps({**row, "line": payload}),  # not a line number: refused, by line
        json.dumps({**row, "line": 2, "id": payload, "errors": {"nonllm_context_recall": payload}}),
        json.dumps({**row, "line": 3, "id": "a\u202eexe.txt", "scores": {"nonllm_context_recall": 0.5}}),
    ]
    out.write_text("\n".join([*lines, *crafted]) + "\n")
    page = tmp_path / "p.html"
    result = invoke(["report", str(out), "-o", str(page)])
    assert result.exit_code == EXIT_USAGE
    assert f"{out}:3: field 'line'" in result.stderr  # the crafted line is named and left out
    html = page.read_text()
    assert "<img" not in html and "&lt;img src=x onerror=" in html
    assert "\u202e" not in html and "\\u202e" in html
    assert html.count("<script>") == 1


@pytest.mark.parametrize("score", ["-3", "Infinity", '"high"', "-0.15", "1.5", "NaN", "true"])
def test_crafted_scores_are_refused_by_line_and_the_rest_reported(write_jsonl, tmp_path, score):
    out = tmp_path / "r.jsonl"
    invoke(["score", str(write_jsonl([RECALLED])), "-m", "nonllm_context_recall", "-o", str(out)])
    good = out.read_text()
    bad = json.dumps({"id": "x", "line": 2, "scores": {"nonllm_context_recall": 0.5}}).replace("0.5", score)
    out.write_text(good + bad + "\n")
    page = tmp_path / "p.html"
    result = invoke(["report", str(out), "-o", str(page)])
    assert result.exit_code == EXIT_USAGE and "Traceback" not in result.output
    assert f"{out}:3: field 'scores.nonllm_context_recall'" in result.stderr
    assert "q2" in page.read_text()


def test_markdown_and_junit_escape_what_ids_carry(write_jsonl, tmp_path):
    rows = [{"id": "<b>bold</b>\r\nnext | ![x](http://t/p.png) \x01\x1b[31m", "retrieved_context_ids": [1], "reference_context_ids": [2]}]
    md, junit = tmp_path / "s.md", tmp_path / "j.xml"
    invoke(["score", str(write_jsonl(rows)), "-m", "id_context_recall", "-t", "id_context_recall=1", "--markdown", str(md), "--junit-xml", str(junit)])
    text = md.read_text()
    failing = [line for line in text.splitlines() if line.startswith("| &lt;b&gt;")]
    assert len(failing) == 1 and "<b>" not in text and "\r" not in text and "![" not in text and "\x1b" not in text
    assert failing[0].count(" | ") == 5  # the pipe in the id did not open a column
    ET.parse(junit)  # control characters did not make it invalid XML


def test_a_unicode_line_separator_in_an_id_does_not_break_the_markdown_row(write_jsonl, tmp_path):
    """U+2028 and U+2029 end a line for str.splitlines and some viewers: a cell shows them as spaces."""
    md = tmp_path / "s.md"
    rows = [{"id": "one\u2028two\u2029three", "retrieved_context_ids": [1], "reference_context_ids": [2]}]
    invoke(["score", str(write_jsonl(rows)), "-m", "id_context_recall", "-t", "id_context_recall=1", "--markdown", str(md)])
    failing = [line for line in md.read_text().splitlines() if line.startswith("| one")]
    assert failing == [failing[0]] and failing[0].startswith("| one two three | ") and failing[0].count(" | ") == 5


def test_an_overlong_id_does_not_stretch_the_page(write_jsonl, tmp_path):
    out, page = tmp_path / "r.jsonl", tmp_path / "p.html"
    invoke(["score", str(write_jsonl([{"id": "x" * 2_000_000, "retrieved_context_ids": [1], "reference_context_ids": [1]}])), "-m", "id_context_recall", "-o", str(out)])
    assert invoke(["report", str(out), "-o", str(page)]).exit_code == 0
    assert page.stat().st_size < 100_000


def test_report_refuses_an_overlong_line_without_holding_it(write_jsonl, tmp_path, monkeypatch):
    from localeval.data import jsonl as io

    out = tmp_path / "r.jsonl"
    invoke(["score", str(write_jsonl([RECALLED])), *NONLLM, "-o", str(out), "-q"])
    monkeypatch.setattr(io, "MAX_LINE_BYTES", 2000)
    with open(out, "a") as handle:
        handle.write("x" * 5000 + "\n")
    result = invoke(["report", str(out), "-o", str(tmp_path / "p.html")])
    assert result.exit_code == EXIT_USAGE and ":3: longer than" in result.stderr


def test_a_report_of_a_file_naming_thousands_of_metrics_stays_small(tmp_path):
    rows = [{"line": 1, "id": "q", "scores": {f"m{i}": 0.5 for i in range(20000)}, "details": {}, "errors": {}}]
    results = tmp_path / "r.jsonl"
    results.write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    page = tmp_path / "p.html"
    result = invoke(["report", str(results), "-o", str(page)])
    assert result.exit_code == 0 and f"shows the first {MAX_REPORT_METRICS}" in result.stderr
    assert page.stat().st_size < 2 << 20


def _results(tmp_path: Path) -> Path:
    data = tmp_path / "samples.jsonl"
    shutil.copy(ROOT / "examples" / "rag_samples.jsonl", data)
    out = tmp_path / "out.jsonl"
    assert CliRunner().invoke(cli, ["score", str(data), "-m", "id_context_recall", "-o", str(out), "-q"]).exit_code == 0
    return out


def test_a_results_line_with_a_lone_surrogate_is_refused_by_number_and_the_rest_reported(tmp_path):
    out = _results(tmp_path)
    lines = out.read_text(encoding="utf-8").splitlines()
    lines[2] = lines[2].replace('"id": "insulin"', '"id": "\\ud800"')
    out.write_text("\n".join(lines) + "\n", encoding="utf-8")
    result = CliRunner().invoke(cli, ["report", str(out), "-o", str(tmp_path / "r.html")])
    assert result.exit_code == 2 and ":3:" in result.output and "Traceback" not in result.output
    assert "eiffel" in (tmp_path / "r.html").read_text(encoding="utf-8")


def test_report_refuses_a_file_it_cannot_read_twice(tmp_path):
    result = CliRunner().invoke(cli, ["report", "/dev/stdin", "-o", str(tmp_path / "r.html")], input=_results(tmp_path).read_text())
    assert result.exit_code == 2 and "not a regular file" in result.output
