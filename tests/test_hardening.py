"""What an adversarial pass broke (issue 13), one test each: careless and crafted input
never gives a traceback, never loses the other samples, never runs markup, and a crash
never looks like a failed threshold."""

from __future__ import annotations

import fcntl
import json
import os
import subprocess
import sys
import xml.etree.ElementTree as ET

import pytest
from click.testing import CliRunner
from conftest import result_rows

from localeval.cli import cli
from localeval.errors import EXIT_INTERNAL, EXIT_THRESHOLD_FAILED, EXIT_USAGE

NONLLM = ["-m", "nonllm_context_recall", "-m", "id_context_recall"]
UNRECALLED = {"id": "q1", "retrieved_contexts": ["Paris has many museums."], "reference_contexts": ["Construction was completed on 31 March 1889."]}
RECALLED = {"id": "q2", "retrieved_contexts": ["The tower was completed on 31 March 1889."], "reference_contexts": ["The tower was completed on 31 March 1889."]}


def invoke(args, **kwargs):
    return CliRunner().invoke(cli, args, **kwargs)


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


@pytest.mark.parametrize("through", ["path", "symlink", "relative"])
def test_output_naming_the_input_is_refused_and_the_input_kept(write_jsonl, tmp_path, monkeypatch, through):
    data = write_jsonl([RECALLED])
    before = data.read_bytes()
    target = str(data)
    if through == "symlink":
        (tmp_path / "link.jsonl").symlink_to(data)
        target = str(tmp_path / "link.jsonl")
    elif through == "relative":
        monkeypatch.chdir(tmp_path)
        target = f"./{data.name}"
    for option in ("-o", "--summary-json", "--junit-xml", "--markdown"):
        result = invoke(["score", str(data), *NONLLM, option, target])
        assert result.exit_code == EXIT_USAGE and "same file as INPUT" in result.stderr, (option, result.output)
        assert data.read_bytes() == before


def test_report_output_naming_its_input_is_refused(write_jsonl, tmp_path):
    out = tmp_path / "r.jsonl"
    invoke(["score", str(write_jsonl([RECALLED])), *NONLLM, "-o", str(out)])
    before = out.read_bytes()
    result = invoke(["report", str(out), "-o", str(out)])
    assert result.exit_code == EXIT_USAGE and "same file as RESULTS" in result.stderr
    assert out.read_bytes() == before


@pytest.mark.parametrize(
    "change, differs",
    [
        (["-m", "id_context_recall"], "metrics"),
        (["-m", "nonllm_context_recall", "-m", "id_context_recall", "--option", "nonllm_context_recall.threshold=0.9"], "metrics"),
        (["-m", "nonllm_context_recall", "-m", "id_context_recall", "--map", "foo=reference"], "map"),
    ],
)
def test_resume_refuses_a_file_written_by_a_different_run(write_jsonl, tmp_path, change, differs):
    data = write_jsonl([RECALLED, UNRECALLED])
    out = tmp_path / "r.jsonl"
    invoke(["score", str(data), *NONLLM, "-o", str(out)])
    lines = out.read_text().splitlines(keepends=True)
    out.write_text("".join(lines[:2]))  # the header and one result: an interrupted run
    result = invoke(["score", str(data), *change, "-o", str(out), "--resume"])
    assert result.exit_code == EXIT_USAGE, result.output
    assert "cannot resume" in result.stderr and f"({differs}." in result.stderr  # the differing key, dotted
    assert out.read_text() == "".join(lines[:2])  # nothing was merged


def test_resume_refuses_a_changed_input_and_a_file_without_header(write_jsonl, tmp_path):
    data = write_jsonl([RECALLED, UNRECALLED])
    out = tmp_path / "r.jsonl"
    invoke(["score", str(data), *NONLLM, "-o", str(out)])
    data.write_text(data.read_text() + json.dumps(RECALLED) + "\n")
    result = invoke(["score", str(data), *NONLLM, "-o", str(out), "--resume"])
    assert result.exit_code == EXIT_USAGE and "input:" in result.stderr
    out.write_text("\n".join(out.read_text().splitlines()[1:]) + "\n")
    result = invoke(["score", str(data), *NONLLM, "-o", str(out), "--resume"])
    assert result.exit_code == EXIT_USAGE and "run header" in result.stderr


def test_one_bad_line_of_any_kind_never_stops_the_run(write_jsonl, tmp_path):
    lines = [
        '{"id": "\\ud800", "retrieved_context_ids": [1], "reference_context_ids": [1]}',
        '{"id": "big", "n": ' + "9" * 5000 + ', "retrieved_context_ids": [1], "reference_context_ids": [1]}',
        '{"id": "deep", "extra": ' + "[" * 900 + "]" * 900 + ', "retrieved_context_ids": [1], "reference_context_ids": [1]}',
        json.dumps({"id": "fine", "retrieved_context_ids": [1], "reference_context_ids": [1]}),
    ]
    out = tmp_path / "r.jsonl"
    result = invoke(["score", str(write_jsonl(lines)), "-m", "id_context_recall", "-o", str(out)])
    assert result.exit_code == EXIT_USAGE and "Traceback" not in result.output
    rows = result_rows(out)
    assert [r["line"] for r in rows] == [1, 2, 3, 4]
    assert all("invalid JSON" in r["errors"]["input"] for r in rows[:3])
    assert rows[3]["scores"] == {"id_context_recall": 1.0}


def test_an_unexpected_error_has_its_own_exit_code_and_one_line(write_jsonl, tmp_path):
    data = write_jsonl([{"retrieved_context_ids": [1], "reference_context_ids": [1]}])
    code = (
        "import sys\nfrom localeval.metrics import id_recall\n"
        "def boom(*a, **k):\n    raise ZeroDivisionError('a bug')\n"
        "id_recall.IdContextRecall.score_batch = boom\n"
        "from localeval.cli import main\nsys.argv = ['localeval', 'score', sys.argv[1], '-m', 'id_context_recall', '-t', 'id_context_recall=0.5']\nmain()"
    )
    completed = subprocess.run([sys.executable, "-c", code, str(data)], capture_output=True, text=True)
    assert completed.returncode == EXIT_INTERNAL
    message = completed.stderr.strip()
    assert len(message.splitlines()) == 1 and "Traceback" not in message
    assert "internal error (ZeroDivisionError: a bug)" in message
    saved = message.rsplit("The traceback is in ", 1)[1]
    assert "ZeroDivisionError" in open(saved).read()
    os.unlink(saved)


def test_a_second_run_on_a_locked_output_is_told_and_writes_nothing(write_jsonl, tmp_path):
    data = write_jsonl([RECALLED])
    out = tmp_path / "r.jsonl"
    out.write_text("someone else's partial run\n")
    with open(out, "r+") as holder:
        fcntl.flock(holder, fcntl.LOCK_EX)
        result = invoke(["score", str(data), *NONLLM, "-o", str(out)])
    assert result.exit_code == EXIT_USAGE and "being written by another localeval run" in result.stderr
    assert out.read_text() == "someone else's partial run\n"


@pytest.mark.parametrize("where", ["missing directory", "read-only directory"])
def test_unwritable_outputs_are_messages_not_tracebacks(write_jsonl, tmp_path, where):
    data = write_jsonl([RECALLED])
    directory = tmp_path / "nowhere"
    if where == "read-only directory":
        if os.geteuid() == 0:
            pytest.skip("root writes into read-only directories")
        directory.mkdir()
        directory.chmod(0o500)
    for option in ("-o", "--summary-json", "--junit-xml", "--markdown"):
        result = invoke(["score", str(data), *NONLLM, option, str(directory / "x")])
        assert result.exit_code == EXIT_USAGE and "cannot write" in result.stderr and "Traceback" not in result.output, option


def test_a_read_only_filesystem_is_a_message(write_jsonl):
    data = write_jsonl([RECALLED])
    result = invoke(["score", str(data), *NONLLM, "-o", "/proc/localeval-results.jsonl"])
    assert result.exit_code == EXIT_USAGE and "cannot write" in result.stderr


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


def test_an_empty_input_with_a_threshold_fails_and_says_nothing_was_scored(tmp_path):
    empty = tmp_path / "empty.jsonl"
    empty.write_text("")
    result = invoke(["score", str(empty), "-m", "id_context_recall", "-t", "id_context_recall=0.5"])
    assert result.exit_code == EXIT_THRESHOLD_FAILED
    assert "nothing was scored" in result.stderr
    assert invoke(["score", str(empty), "-m", "id_context_recall"]).exit_code == 0  # no gate, nothing to fail


def test_a_fifo_and_process_substitution_are_read(write_jsonl, tmp_path):
    data = write_jsonl([RECALLED])
    completed = subprocess.run(
        ["bash", "-c", f'{sys.executable} -m localeval score <(cat "$0") -m nonllm_context_recall -o - -q', str(data)],
        capture_output=True,
        text=True,
    )
    assert completed.returncode == 0, completed.stderr
    assert json.loads(completed.stdout)["scores"] == {"nonllm_context_recall": 1.0}
