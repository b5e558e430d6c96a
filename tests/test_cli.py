"""The command line, through click's CliRunner and through a real subprocess."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner
from conftest import invoke, result_rows

from localeval.cli import cli
from localeval.errors import EXIT_INTERNAL
from localeval.metrics import BUILTIN

ROOT = Path(__file__).resolve().parents[1]

GOOD = {
    "id": "s1",
    "retrieved_contexts": ["Paris is the capital of France."],
    "reference_contexts": ["Paris is the capital of France.", "The Eiffel Tower is one of the most famous landmarks in Paris."],
    "retrieved_context_ids": ["doc_1", "doc_2", "doc_3"],
    "reference_context_ids": ["doc_1", "doc_4", "doc_5", "doc_6"],
    "team": "search",
}
NONLLM = ["-m", "nonllm_context_recall", "-m", "id_context_recall"]


def read_results(path):
    return result_rows(path)


def test_scores_are_written_in_the_documented_shape(write_jsonl, tmp_path):
    data = write_jsonl([GOOD, {k: v for k, v in GOOD.items() if k != "id"}])
    out = tmp_path / "out.jsonl"
    result = invoke(["score", str(data), *NONLLM, "-o", str(out)])
    assert result.exit_code == 0, result.output
    first, second = read_results(out)
    assert first["id"] == "s1" and first["line"] == 1
    assert first["scores"] == {"nonllm_context_recall": 0.5, "id_context_recall": 0.25}
    assert first["errors"] == {}
    assert first["extra"] == {"team": "search"}
    assert first["details"]["nonllm_context_recall"]["references"][0] == {"best_index": 0, "similarity": 1.0, "recalled": True}
    assert first["details"]["id_context_recall"] == {"found": ["doc_1"], "missing": ["doc_4", "doc_5", "doc_6"]}
    assert second["id"] == 2  # the line number when a sample has no id
    assert "nonllm_context_recall" in result.output and "0.500" in result.output


def test_missing_field_is_a_per_sample_error_not_a_crash(write_jsonl, tmp_path):
    data = write_jsonl([{"retrieved_contexts": ["a"]}, GOOD])
    out = tmp_path / "out.jsonl"
    summary = tmp_path / "summary.json"
    result = invoke(["score", str(data), *NONLLM, "-o", str(out), "--summary-json", str(summary)])
    assert result.exit_code == 0
    first, _ = read_results(out)
    assert first["scores"] == {"nonllm_context_recall": None, "id_context_recall": None}
    assert first["errors"]["nonllm_context_recall"] == "missing required field 'reference_contexts'"
    assert first["errors"]["id_context_recall"] == "missing required field 'retrieved_context_ids', 'reference_context_ids'"
    figures = json.loads(summary.read_text())["metrics"]["nonllm_context_recall"]
    assert figures == {"count": 2, "scored": 1, "mean": 0.5, "stderr": None, "ci95": None, "median": 0.5, "nan": 0, "errors": 1}


def test_summary_counts_nan_and_mean_ignores_it(write_jsonl, tmp_path):
    data = write_jsonl([GOOD, {**GOOD, "reference_context_ids": []}, {**GOOD, "retrieved_context_ids": ["doc_1", "doc_4"]}])
    summary = tmp_path / "s.json"
    result = invoke(["score", str(data), "-m", "id_context_recall", "--summary-json", str(summary), "-t", "id_context_recall=0.5"])
    figures = json.loads(summary.read_text())
    m = figures["metrics"]["id_context_recall"]
    assert (m["count"], m["nan"], m["mean"], m["median"]) == (3, 1, 0.375, 0.375)
    assert (m["passed"], m["failed"], m["pass_rate"], m["threshold"]) == (1, 1, 0.5, 0.5)
    assert figures["thresholds_met"] is False
    assert result.exit_code == 1
    assert figures["run"]["metrics"] == {"id_context_recall": {}}


def test_exit_code_zero_when_thresholds_are_met(write_jsonl):
    data = write_jsonl([GOOD])
    assert invoke(["score", str(data), *NONLLM, "-t", "nonllm_context_recall=0.5"]).exit_code == 0
    assert invoke(["score", str(data), *NONLLM, "-t", "nonllm_context_recall=0.51"]).exit_code == 1


def test_bad_lines_give_exit_code_two_and_the_rest_is_scored(write_jsonl, tmp_path):
    data = write_jsonl([GOOD, "{broken", {"retrieved_context_ids": "x", "reference_context_ids": []}, GOOD])
    out = tmp_path / "out.jsonl"
    result = invoke(["score", str(data), *NONLLM, "-o", str(out)])
    assert result.exit_code == 2
    assert f"{data}:2: invalid JSON" in result.stderr
    assert f"{data}:3: field 'retrieved_context_ids'" in result.stderr
    rows = read_results(out)
    assert [r["line"] for r in rows] == [1, 2, 3, 4]
    assert rows[1]["errors"]["input"].startswith(f"{data}:2: invalid JSON")
    assert rows[3]["scores"]["id_context_recall"] == 0.25


def test_strict_stops_with_exit_code_two(write_jsonl, tmp_path):
    data = write_jsonl([GOOD, "{broken", GOOD])
    out = tmp_path / "out.jsonl"
    result = invoke(["score", str(data), *NONLLM, "-o", str(out), "--strict"])
    assert result.exit_code == 2
    assert f"{data}:2: invalid JSON" in result.stderr
    assert len(read_results(out)) == 1


@pytest.mark.parametrize(
    "args, message",
    [
        (["-m", "nope"], "unknown metric 'nope'"),
        (["-m", "id_context_recall", "-t", "id_context_recall=high"], "is not a number"),
        (["-m", "id_context_recall", "-t", "nope=0.5"], "not selected: nope"),
        (["-m", "id_context_recall", "--option", "nope.measure=jaro"], "'nope', which is no metric"),
        (["-m", "nonllm_context_recall", "--option", "nonllm_context_recall.measure=cosine"], "option 'measure'"),
        (["-m", "id_context_recall", "--resume"], "--resume needs --output"),
        (["-m", "id_context_recall", "-m", "id_context_recall"], "selected twice"),
        (["-m", "id_context_recall", "-t", "id_context_recall=0.9", "-t", "id_context_recall=0.5"], "--threshold id_context_recall is given twice, as '0.9' and as '0.5'"),
        (["-m", "id_context_recall", "--min-mean", "id_context_recall=0.9", "--min-mean", "id_context_recall=0.5"], "--min-mean id_context_recall is given twice, as '0.9' and as '0.5'"),
        (["-m", "nonllm_context_recall", "--option", "nonllm_context_recall.measure=jaro", "--option", "nonllm_context_recall.measure=levenshtein"],
         "--option nonllm_context_recall.measure is given twice, as 'jaro' and as 'levenshtein'"),
        (["-m", "id_context_recall", "--map", "reference_context_ids=a", "--map", "reference_context_ids=b"], "--map reference_context_ids is given twice, as 'a' and as 'b'"),
    ],
)
def test_usage_errors_exit_two_with_a_message(write_jsonl, args, message):
    data = write_jsonl([GOOD])
    result = invoke(["score", str(data), *args])
    assert result.exit_code == 2
    assert message in result.stderr


def test_options_of_known_metrics_left_out_of_the_run_are_left_aside_and_their_gates_refused(write_jsonl):
    """A config may set every metric's options; -m on the command line narrows the run. A gate
    names a metric the user cares about, so one for a metric left out is refused (issue 68)."""
    data = write_jsonl([GOOD])
    result = invoke(["score", str(data), "-m", "id_context_recall", "--option", "nonllm_context_recall.measure=jaro", "--no-verifier", "-q"])
    assert result.exit_code == 0, result.output
    gated = invoke(["score", str(data), "-m", "id_context_recall", "-t", "nonllm_context_recall=0.5", "-q"])
    assert gated.exit_code == 2 and "not selected: nonllm_context_recall" in gated.stderr


def test_missing_input_file_is_exit_two():
    result = invoke(["score", "/nonexistent/data.jsonl", "-m", "id_context_recall"])
    assert result.exit_code == 2
    assert "input file not found: /nonexistent/data.jsonl" in result.stderr


def test_measure_option_changes_the_score(write_jsonl, tmp_path):
    reference = "The Eiffel Tower was completed on 31 March 1889."
    data = write_jsonl([{"retrieved_contexts": ["Lots of other text about Paris. " * 4 + reference], "reference_contexts": [reference]}])
    out = tmp_path / "o.jsonl"
    invoke(["score", str(data), "-m", "nonllm_context_recall", "-o", str(out)])
    assert read_results(out)[0]["scores"]["nonllm_context_recall"] == 0.0
    invoke(["score", str(data), "-m", "nonllm_context_recall", "--option", "nonllm_context_recall.measure=partial_ratio", "-o", str(out)])
    assert read_results(out)[0]["scores"]["nonllm_context_recall"] == 1.0


def test_resume_skips_done_samples_and_keeps_input_order(write_jsonl, tmp_path):
    rows = [{**GOOD, "id": f"s{i}"} for i in range(1, 7)]
    data = write_jsonl(rows)
    full = tmp_path / "full.jsonl"
    invoke(["score", str(data), *NONLLM, "-o", str(full)])
    expected = full.read_text().splitlines(keepends=True)

    partial = tmp_path / "partial.jsonl"
    partial.write_text("".join(expected[:3]) + expected[3][:25])  # three results and a torn fourth
    summary = tmp_path / "s.json"
    result = invoke(["score", str(data), *NONLLM, "-o", str(partial), "--resume", "--summary-json", str(summary)])
    assert result.exit_code == 0
    assert partial.read_text() == "".join(expected)
    assert json.loads(summary.read_text())["metrics"]["id_context_recall"]["count"] == 6


def test_standard_input_and_output(write_jsonl):
    result = invoke(["score", "-", *NONLLM, "-o", "-", "-q"], input=json.dumps(GOOD) + "\n")
    assert result.exit_code == 0
    assert json.loads(result.stdout)["scores"]["id_context_recall"] == 0.25


def test_metrics_command_lists_required_fields_and_options():
    result = invoke(["metrics", "--json"])
    rows = {row["name"]: row for row in json.loads(result.stdout)}
    assert set(rows) == {m.name for m in BUILTIN}
    assert rows["id_context_recall"]["required_fields"] == ["retrieved_context_ids", "reference_context_ids"]
    assert rows["nonllm_context_recall"]["options"]["threshold"]["default"] == 0.5
    assert rows["context_recall"]["needs_judge"] is True and rows["context_recall"]["judge_by_default"] is True
    assert [name for name, row in rows.items() if not row["default_run"]] == [
        "answer_relevancy", "factual_correctness", "semantic_similarity", "answer_correctness", "context_entity_recall", "noise_sensitivity",
        "ndcg_at_k", "reciprocal_rank", "average_precision", "precision_at_k", "recall_at_k", "hit_rate_at_k", "r_precision",
    ]
    assert "--option nonllm_context_recall.measure" in invoke(["metrics"]).stdout


def test_real_subprocess_exit_codes_and_no_llama_import(write_jsonl, tmp_path):
    data = write_jsonl([GOOD])
    probe = (
        "import sys, runpy; sys.argv = ['localeval', 'score', sys.argv[1], '-m', 'nonllm_context_recall', "
        "'-m', 'id_context_recall', '-t', 'id_context_recall=0.3', '-q'];\n"
        "try:\n    runpy.run_module('localeval', run_name='__main__')\n"
        "finally:\n    print('llama_cpp' in sys.modules, file=sys.stderr)"
    )
    completed = subprocess.run([sys.executable, "-c", probe, str(data)], capture_output=True, text=True)
    assert completed.returncode == 1, completed.stderr
    assert completed.stderr.strip().splitlines()[-1] == "False"
    ok = subprocess.run([sys.executable, "-m", "localeval", "score", str(data), *NONLLM], capture_output=True, text=True)
    assert ok.returncode == 0
    assert "id_context_recall" in ok.stdout
    bad = subprocess.run([sys.executable, "-m", "localeval", "score", str(data), "-m", "nope"], capture_output=True, text=True)
    assert bad.returncode == 2 and "unknown metric" in bad.stderr and "Traceback" not in bad.stderr


def test_report_draws_every_builtin_metric_and_caps_a_crafted_file_naming_more_than_max_report_metrics(tmp_path):
    from localeval.cli import MAX_REPORT_METRICS

    assert MAX_REPORT_METRICS >= 4 * len(BUILTIN)  # room for every built-in metric and plugins', whatever their number
    names = [f"m{i}" for i in range(MAX_REPORT_METRICS + 6)]
    results = tmp_path / "r.jsonl"
    results.write_text(json.dumps({"id": 1, "line": 1, "scores": dict.fromkeys(names, 0.5), "details": {}, "errors": {}}) + "\n")
    result = CliRunner().invoke(cli, ["report", str(results), "-o", str(tmp_path / "r.html")])
    assert result.exit_code == 0 and f"names {len(names)} metrics; the report shows the first {MAX_REPORT_METRICS}" in result.output


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


def test_samples_that_could_not_be_scored_are_said_and_can_fail_the_run(write_jsonl):
    data = write_jsonl([{"id": "q"}])  # no field any metric needs
    quiet = invoke(["score", str(data), "-m", "id_context_recall"])
    assert quiet.exit_code == 0 and "1 of 1 samples could not be scored by id_context_recall" in quiet.stderr
    strict = invoke(["score", str(data), "-m", "id_context_recall", "--fail-on-error"])
    assert strict.exit_code == 1


def test_a_broken_dependency_exits_three_with_one_line_never_one():
    import subprocess
    import sys

    code = "import sys; sys.modules['rapidfuzz'] = None; sys.argv = ['localeval', '--version']; from localeval.entry import main; main()"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT)
    assert done.returncode == 3 and "cannot start" in done.stderr and "Traceback" not in done.stderr


def test_closed_standard_streams_give_one_line_or_a_normal_run(tmp_path):
    import subprocess
    import sys

    data = str(ROOT / "examples" / "rag_samples.jsonl")
    out = tmp_path / "o.jsonl"
    base = [sys.executable, "-m", "localeval", "score", data, "-m", "id_context_recall"]
    no_stderr = subprocess.run([*base, "-o", str(out)], stderr=subprocess.DEVNULL, stdout=subprocess.PIPE, cwd=tmp_path, pass_fds=(), close_fds=True,
                               preexec_fn=lambda: __import__("os").close(2))
    assert no_stderr.returncode == 0 and len(out.read_text().splitlines()) == 5
    no_stdout = subprocess.run([*base, "-o", "-"], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, cwd=tmp_path,
                               preexec_fn=lambda: __import__("os").close(1))
    assert no_stdout.returncode == 2 and "standard output is closed" in no_stdout.stderr


@pytest.mark.parametrize("args", [["--judge-option", "bogus=1"], [str(Path("no-such-model.gguf"))]])
def test_serve_says_it_serves_only_once_its_options_and_model_are_good(tmp_path, args):
    result = subprocess.run([sys.executable, "-m", "localeval", "serve", *args], capture_output=True, text=True, cwd=tmp_path, timeout=120,
                            env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert result.returncode == 2, result.stderr
    assert "serving" not in result.stderr and "error" in result.stderr


def test_the_cli_names_no_metric():
    """The CLI derives its shortcut flags and calibrate's tables from what the metrics declare
    (their options, their calibration key): no built-in metric's name is a string in its code
    (docstrings and --help example lines aside), so a new metric needs no edit there."""
    import ast
    import re

    tree = ast.parse((ROOT / "localeval" / "cli.py").read_text(encoding="utf-8"))
    docstrings = {
        id(node.body[0].value) for node in ast.walk(tree)
        if isinstance(node, (ast.Module, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))
        and node.body and isinstance(node.body[0], ast.Expr) and isinstance(node.body[0].value, ast.Constant)
    }
    examples = {  # each command's --help example line is documentation, as a docstring is
        id(argument) for node in ast.walk(tree)
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "_example"
        for argument in node.args
    }
    strings = [
        node.value for node in ast.walk(tree)
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docstrings | examples
    ]
    assert [cls.name for cls in BUILTIN if any(re.search(rf"\b{cls.name}\b", text) for text in strings)] == []


def test_the_shortcut_flags_reach_every_builtin_metric_with_the_option():
    """--verifier, --statements and --no-reasons set their option for the built-ins that have it,
    the same metrics the CLI once listed by hand."""
    from localeval.cli import SHORTCUTS

    assert SHORTCUTS["verifier"][0] == ("context_relevance", "context_recall", "faithfulness", "context_precision", "factual_correctness", "answer_correctness", "noise_sensitivity")
    assert SHORTCUTS["statements"][0] == SHORTCUTS["no_reasons"][0] == ("context_recall", "faithfulness", "factual_correctness", "answer_correctness", "noise_sensitivity")
    help_text = invoke(["score", "--help"]).output
    assert SHORTCUTS["grader"][0] == SHORTCUTS["verifier"][0] and SHORTCUTS["verifier"][1] == "verifier"  # read as grader=verifier/judge
    assert "answer_relevancy always uses the judge" in " ".join(help_text.split())
