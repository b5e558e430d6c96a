"""`localeval compare BASE CANDIDATE` on real runs of `localeval score` (the id and string metrics: no
judge): A/A, known regressions and improvements, the gates and their modes, pairing by id and by
line, what is left unpaired and why, the question check, setup differences, bad input, the reports."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from localeval import Comparison, compare
from tests.conftest import invoke

ID_RECALL = "id_context_recall"


def sample(index: int, found: int, *, with_id: bool = True, question: str | None = None, contexts: list[str] | None = None) -> dict[str, Any]:
    """A sample whose id_context_recall is found/2 (two reference ids, `found` of them retrieved)."""
    row: dict[str, Any] = {"user_input": question or f"Question {index}?", "retrieved_context_ids": [f"r{index}a", f"r{index}b"][:found] + ["other"], "reference_context_ids": [f"r{index}a", f"r{index}b"]}
    if contexts is not None:
        row["retrieved_contexts"] = contexts
        row["reference_contexts"] = [f"Reference text {index}."]
    if with_id:
        row["id"] = f"q{index}"
    return row


def scored(tmp_path: Path, name: str, rows: list[dict[str, Any] | str], *args: str) -> Path:
    data = tmp_path / f"{name}.jsonl"
    data.write_text("".join((row if isinstance(row, str) else json.dumps(row)) + "\n" for row in rows), encoding="utf-8")
    out = tmp_path / f"{name}.results.jsonl"
    result = invoke(["score", str(data), "-m", ID_RECALL, "-o", str(out), "-q", "--no-timing", *args])
    assert result.exit_code == 0, result.output
    return out


def base_and_candidate(tmp_path: Path, base: list[int], candidate: list[int]) -> tuple[Path, Path]:
    return scored(tmp_path, "base", [sample(i, f) for i, f in enumerate(base)]), scored(tmp_path, "candidate", [sample(i, f) for i, f in enumerate(candidate)])


def test_a_file_against_itself_shows_no_difference_and_passes_every_non_inferiority_gate(tmp_path):
    results = scored(tmp_path, "run", [sample(i, i % 3) for i in range(30)])
    for value in ("0.001", "0.02", "0.5"):
        result = invoke(["compare", str(results), str(results), "--max-drop", f"{ID_RECALL}={value}", "--max-drop-on", "pass-if-confidently-above"])
        assert result.exit_code == 0, result.output
        assert "no difference: the same input scored with the same setup gave every sample the same score" in result.output
    found = compare(results, results)
    metric = found.metrics[ID_RECALL]
    assert (metric.difference.mean, metric.difference.ci95, metric.difference.up, metric.difference.down) == (0.0, (0.0, 0.0), 0, 0)
    assert found.one_pipeline and found.setup == () and found.exit_code == 0


def test_two_runs_of_the_same_pipeline_on_the_same_input_show_no_difference(tmp_path):
    rows = [sample(i, i % 3) for i in range(12)]
    first, second = scored(tmp_path, "one", rows), scored(tmp_path, "one", rows)  # the same input file, scored twice
    other = tmp_path / "again.results.jsonl"
    other.write_bytes(second.read_bytes())
    found = compare(first, other, max_drop={ID_RECALL: 0.01}, max_drop_on="pass-if-confidently-above")
    assert found.metrics[ID_RECALL].difference.ci95 == (0.0, 0.0) and found.gates_hold


def test_a_known_regression_is_worse_with_confidence_and_fails_the_gate(tmp_path):
    base, candidate = base_and_candidate(tmp_path, [2] * 40, [2] * 25 + [0] * 15)
    result = invoke(["compare", str(base), str(candidate), "--max-drop", f"{ID_RECALL}=0.05"])
    assert result.exit_code == 1, result.output
    assert f"{ID_RECALL}: worse: -0.375" in result.output and "gates NOT met" in result.output
    metric = compare(base, candidate).metrics[ID_RECALL]
    assert metric.verdict.value == "worse" and (metric.difference.up, metric.difference.down, metric.difference.level) == (0, 15, 25)
    assert metric.difference.ci95 is not None and metric.difference.ci95[1] < -0.05


def test_a_known_improvement_is_better_and_passes(tmp_path):
    base, candidate = base_and_candidate(tmp_path, [1] * 40, [2] * 30 + [1] * 10)
    result = invoke(["compare", str(base), str(candidate), "--max-drop", f"{ID_RECALL}=0", "--max-drop-on", "pass-if-confidently-above"])
    assert result.exit_code == 0, result.output
    assert "better: +0.375" in result.output and "gates met" in result.output


def test_a_small_sample_gives_no_verdict_and_a_non_inferiority_gate_is_not_met(tmp_path):
    """Ten samples, one dropped by 0.5: the data cannot tell, and it says so rather than "no regression"."""
    base, candidate = base_and_candidate(tmp_path, [2] * 10, [2] * 9 + [1])
    found = compare(base, candidate, max_drop={ID_RECALL: 0.05}, max_drop_on="pass-if-confidently-above")
    metric = found.metrics[ID_RECALL]
    assert metric.verdict.value == "no difference shown" and "the data allow anything from a drop of" in metric.sentence()
    assert metric.gate is not None and not metric.gate.ok and found.exit_code == 1
    lenient = compare(base, candidate, max_drop={ID_RECALL: 0.05})  # fail-if-confidently-below: the benefit of the doubt
    assert lenient.exit_code == 0


@pytest.mark.parametrize(("mode", "figure"), [("mean", "difference"), ("fail-if-confidently-below", "ci95_high"), ("pass-if-confidently-above", "ci95_low")])
def test_each_gate_mode_reads_its_figure(tmp_path, mode, figure):
    base, candidate = base_and_candidate(tmp_path, [2] * 30, [2] * 27 + [1] * 3)
    found = compare(base, candidate, max_drop={ID_RECALL: 0.1}, max_drop_on=mode)
    gate = found.metrics[ID_RECALL].gate
    d = found.metrics[ID_RECALL].difference
    assert gate is not None and d.ci95 is not None
    expected = {"difference": d.mean, "ci95_low": d.ci95[0], "ci95_high": d.ci95[1]}[figure]
    assert (gate.figure, gate.value, gate.ok) == (figure, expected, expected >= -0.1)


def test_samples_in_one_file_only_errors_and_nan_are_counted_listed_and_fail_a_gate(tmp_path):
    base_rows = [sample(i, 2) for i in range(6)]
    candidate_rows = [sample(i, 2) for i in range(1, 6)] + [sample(9, 2)]
    candidate_rows[0] = {**candidate_rows[0], "reference_context_ids": []}  # q1: undefined (NaN) in the candidate
    del candidate_rows[1]["retrieved_context_ids"]  # q2: not scored in the candidate
    base, candidate = scored(tmp_path, "base", base_rows), scored(tmp_path, "candidate", candidate_rows)
    found = compare(base, candidate, max_drop={ID_RECALL: 0.5})
    assert {(u.id, u.side, u.why) for u in found.unpaired} == {("q0", "base", "in the base only"), ("q9", "candidate", "in the candidate only")}
    metric = found.metrics[ID_RECALL]
    assert [(u.id, u.side) for u in metric.not_compared] == [("q1", "candidate"), ("q2", "candidate")]
    assert "undefined (NaN) in the candidate" in metric.not_compared[0].why and "not scored" in metric.not_compared[1].why
    assert metric.difference.count == 3 and metric.gate is not None and not metric.gate.ok and "4 sample(s) could not be compared" in (metric.gate.reason or "")
    result = invoke(["compare", str(base), str(candidate)])
    assert result.exit_code == 0 and "2 sample(s) not paired" in result.output and "id 'q9'" in result.output


def test_two_runs_of_other_questions_are_said_to_share_no_sample(tmp_path):
    base = scored(tmp_path, "base", [sample(i, 2) for i in range(3)])
    candidate = scored(tmp_path, "candidate", [sample(i, 2) for i in range(3, 6)])
    result = invoke(["compare", str(base), str(candidate)])
    assert result.exit_code == 0 and "No sample was compared: are these two runs of the same questions?" in result.output and "6 sample(s) not paired" in result.output


def test_samples_without_ids_pair_by_line_and_it_says_so(tmp_path):
    base = scored(tmp_path, "base", [sample(i, 2, with_id=False) for i in range(5)])
    candidate = scored(tmp_path, "candidate", [sample(i, 1, with_id=False) for i in range(5)])
    found = compare(base, candidate)
    assert found.paired_by == "line" and found.metrics[ID_RECALL].difference.count == 5
    assert "Samples paired by line (the samples have no ids)" in invoke(["compare", str(base), str(candidate)]).output
    assert compare(*base_and_candidate(tmp_path, [1, 2], [2, 1])).paired_by == "id"


def test_a_pair_whose_question_differs_is_listed_not_paired(tmp_path):
    base = scored(tmp_path, "base", [sample(i, 2) for i in range(4)])
    candidate = scored(tmp_path, "candidate", [sample(0, 2, question="Another question?")] + [sample(i, 2) for i in range(1, 4)])
    found = compare(base, candidate)
    assert found.questions == "question text checked on 4 pairs: 1 differ"
    assert [(u.id, u.side) for u in found.unpaired] == [("q0", "both")] and "another question" in found.unpaired[0].why
    assert found.metrics[ID_RECALL].difference.count == 3


def test_questions_are_not_checked_when_an_input_is_gone_and_it_says_why(tmp_path):
    base, candidate = base_and_candidate(tmp_path, [1, 2], [2, 1])
    (tmp_path / "base.jsonl").unlink()
    assert compare(base, candidate).questions.startswith("question text not checked:") and "is not a file here" in compare(base, candidate).questions


def test_a_gate_over_another_setup_is_refused_unless_the_setup_change_is_what_is_compared(write_jsonl, tmp_path):
    rows = [{"id": f"q{i}", "retrieved_contexts": [f"the text {i}"], "reference_contexts": [f"the text {i}!"]} for i in range(10)]
    data = write_jsonl(rows, "d.jsonl")
    paths = []
    for name, measure in (("a", "levenshtein"), ("b", "partial_ratio")):
        out = tmp_path / f"{name}.results.jsonl"
        assert invoke(["score", str(data), "-m", "nonllm_context_recall", "--option", f"nonllm_context_recall.measure={measure}", "-o", str(out), "-q"]).exit_code == 0
        paths.append(out)
    refused = invoke(["compare", str(paths[0]), str(paths[1]), "--max-drop", "nonllm_context_recall=0.1"])
    assert refused.exit_code == 2
    assert refused.stdout.startswith("The runs differ in what a score means:")  # the table, on standard output
    assert 'metrics.nonllm_context_recall.measure: "levenshtein" in the base, "partial_ratio" in the candidate (changes nonllm_context_recall)' in refused.stdout
    assert "--allow-setup-change" not in refused.stdout and "refused: the runs differ in" not in refused.stdout  # the refusal is an error: standard error only
    assert refused.stderr.count("--allow-setup-change") == 1 and refused.stderr.count("refused: the runs differ in") == 1  # said once, short
    (refusal,) = [line for line in refused.stderr.splitlines() if "--allow-setup-change" in line]
    assert refusal.startswith("localeval: error: --max-drop nonllm_context_recall refused") and len(refusal) < 300, refusal
    allowed = invoke(["compare", str(paths[0]), str(paths[1]), "--max-drop", "nonllm_context_recall=0.1", "--allow-setup-change"])
    assert allowed.exit_code == 0, allowed.output
    assert invoke(["compare", str(paths[0]), str(paths[1])]).exit_code == 0  # no gate, nothing refused: the differences are printed first
    assert invoke(["compare", str(paths[0]), str(paths[1])]).output.startswith("The runs differ in what a score means:")


def test_another_input_file_is_information_not_a_refusal(tmp_path):
    base, candidate = base_and_candidate(tmp_path, [2] * 20, [2] * 19 + [1])
    found = compare(base, candidate, max_drop={ID_RECALL: 0.1})
    assert found.setup == () and found.inputs is not None and not found.inputs.same  # another input file: no setup difference
    assert found.gate_refusal is None and found.exit_code == 0 and not found.one_pipeline
    said = invoke(["compare", str(base), str(candidate)]).output
    assert "Input: " in said and "(another file, as a candidate's own run has)" in said and "The runs differ" not in said and "sha256" not in said
    inputs = found.to_json_dict()["inputs"]
    assert inputs["same"] is False and inputs["base"]["path"].endswith("base.jsonl") and len(inputs["candidate"]["sha256"]) == 64


def test_bad_input_is_a_clear_error_naming_the_file_line_and_field(tmp_path, write_jsonl):
    good = scored(tmp_path, "run", [sample(0, 2), sample(1, 1)])
    data = write_jsonl([sample(0, 2)], "not_results.jsonl")
    result = invoke(["compare", str(good), str(data)])
    assert result.exit_code == 2 and f"{data}:1: field 'format': not a localeval results file" in result.output
    broken = tmp_path / "broken.jsonl"
    broken.write_text(good.read_text(encoding="utf-8") + '{"id": "q9", "line": 3, "scores": {"id_context_recall": 2.5}, "details": {}, "errors": {}}\n', encoding="utf-8")
    result = invoke(["compare", str(good), str(broken)])
    assert result.exit_code == 2 and f"{broken}:4: field 'scores.id_context_recall'" in result.output
    torn = tmp_path / "torn.jsonl"
    torn.write_text(good.read_text(encoding="utf-8") + '{"id": "q9", "li\n', encoding="utf-8")
    result = invoke(["compare", str(torn), str(good)])
    assert result.exit_code == 2 and f"{torn}:4: not a localeval result: invalid JSON" in result.output
    empty = tmp_path / "empty.jsonl"
    empty.write_text("", encoding="utf-8")
    assert invoke(["compare", str(good), str(empty)]).exit_code == 2
    assert invoke(["compare", str(good), str(tmp_path / "missing.jsonl")]).exit_code == 2
    assert "Traceback" not in result.output


def test_gates_and_options_that_cannot_be_read_are_usage_errors(tmp_path):
    base, candidate = base_and_candidate(tmp_path, [1, 2], [2, 1])
    for args, words in (
        (["--max-drop", "nope=0.1"], "--max-drop nope: not a metric both runs scored"),
        (["--max-drop", f"{ID_RECALL}=much"], "is not a number"),
        (["--max-drop", f"{ID_RECALL}=1.5"], "is not a share in [0, 1]"),
        (["--max-drop", f"{ID_RECALL}=0.1", "--max-drop", f"{ID_RECALL}=0.2"], f"--max-drop {ID_RECALL} is given twice"),
        (["--max-drop-on", "lower"], "'lower' is no longer accepted"),
        (["-m", "context_recall"], "context_recall: not scored by both runs"),
    ):
        result = invoke(["compare", str(base), str(candidate), *args])
        assert result.exit_code == 2 and words in result.output, (args, result.output)
    assert "--json" in invoke(["compare", str(base), str(candidate), "--json", str(base)]).output  # an output naming an input is refused


def test_the_config_file_beside_the_candidate_sets_the_gate(tmp_path):
    base, candidate = base_and_candidate(tmp_path, [2] * 40, [2] * 25 + [0] * 15)
    (tmp_path / "localeval.toml").write_text(f'max_drop = {{ {ID_RECALL} = 0.05 }}\nmax_drop_on = "mean"\n', encoding="utf-8")
    result = invoke(["compare", str(base), str(candidate)])
    assert result.exit_code == 1 and "(mean): mean difference -0.375 against -0.050: NOT met" in result.output
    assert invoke(["compare", str(base), str(candidate), "--max-drop", f"{ID_RECALL}=0.5"]).exit_code == 0  # the command line wins


def test_markdown_json_and_junit_say_the_same(tmp_path):
    base, candidate = base_and_candidate(tmp_path, [2] * 40, [2] * 25 + [0] * 15)
    md, js, xml = tmp_path / "c.md", tmp_path / "c.json", tmp_path / "c.xml"
    result = invoke(["compare", str(base), str(candidate), "--max-drop", f"{ID_RECALL}=0.05", "--markdown", str(md), "--json", str(js), "--junit-xml", str(xml), "-q"])
    assert result.exit_code == 1 and result.stdout == ""  # -q: no table; a failed gate says which on standard error, one line each
    assert result.stderr.splitlines() == [f"localeval: gate failed: --max-drop {ID_RECALL}=0.050 (fail-if-confidently-below): upper 95% bound -0.204 against -0.050: NOT met"]
    text = md.read_text(encoding="utf-8")
    assert text.startswith(f"**localeval compare**: 1 of 1 metric worse: {ID_RECALL} -0.375 (")
    assert text.splitlines()[0].endswith(f"; gate failed: {ID_RECALL}")
    assert f"| {ID_RECALL} | 40 | 1.000 → 0.625 | -0.375 (" in text and "### What moved" in text
    figures = json.loads(js.read_text(encoding="utf-8"))
    assert figures["metrics"][ID_RECALL]["difference"] == -0.375 and figures["metrics"][ID_RECALL]["verdict"] == "worse" and figures["gates_hold"] is False
    assert figures["paired_by"] == "id" and len(figures["metrics"][ID_RECALL]["worsened"]) == 5
    junit = xml.read_text(encoding="utf-8")
    assert 'tests="1" failures="1"' in junit and "id_context_recall max drop 0.050" in junit


def test_what_moved_names_the_ids_found_and_the_contexts_that_entered_or_left(tmp_path):
    base = scored(tmp_path, "base", [sample(i, 2, contexts=["Paris is in France.", "Old text."]) for i in range(6)])
    candidate = scored(tmp_path, "candidate", [sample(0, 0, contexts=["Old text.", "A new context."])] + [sample(i, 2, contexts=["Paris is in France.", "Old text."]) for i in range(1, 6)])
    worsened = compare(base, candidate).metrics[ID_RECALL].worsened
    assert [m.id for m in worsened] == ["q0"] and (worsened[0].base, worsened[0].candidate) == (1.0, 0.0)
    assert tuple(change.text for change in worsened[0].changes) == (
        "context entered at rank 2: 'A new context.'", "context left (rank 1 in the base): 'Paris is in France.'",
        "found in the base only: 'r0a'", "found in the base only: 'r0b'",
    )
    assert compare(base, candidate, show=0).metrics[ID_RECALL].worsened == ()


def test_report_compare_to_writes_the_comparison_page_escaped(tmp_path):
    base = scored(tmp_path, "base", [sample(i, 2) for i in range(5)])
    candidate = scored(tmp_path, "candidate", [{**sample(0, 0), "id": "<script>alert(1)</script>"}] + [sample(i, 1) for i in range(1, 5)])
    page = tmp_path / "c.html"
    result = invoke(["report", str(candidate), "--compare-to", str(base), "-o", str(page)])
    assert result.exit_code == 0, result.output
    html = page.read_text(encoding="utf-8")
    assert "<h2>Paired differences (candidate minus base)</h2>" in html and "<h2>What moved</h2>" in html
    assert "<script>alert" not in html and "&lt;script&gt;alert(1)&lt;/script&gt;" in html


def test_the_python_api_returns_the_typed_comparison(tmp_path):
    base, candidate = base_and_candidate(tmp_path, [2] * 20, [1] * 20)
    found = compare(str(base), str(candidate), metrics=[ID_RECALL], max_drop={ID_RECALL: 0.1})
    assert isinstance(found, Comparison) and found.exit_code == 1
    assert json.loads(json.dumps(found.to_json_dict()))["metrics"][ID_RECALL]["verdict"] == "worse"


def test_the_markdown_and_the_page_say_which_statement_flipped_and_why(tmp_path):
    """A reader sees why recall dropped without opening the two files: the statement, and each run's evidence."""

    def results(name: str, attributed: int, reason: str) -> Path:
        header = {"format": "localeval-results", "version": 1, "run": {"input": {"path": "gone.jsonl", "sha256": name}, "metrics": {"context_recall": {}}, "judge": None}}
        rows = [
            {"id": f"q{i}", "line": i + 1, "scores": {"context_recall": 1.0 if i or attributed else 0.5},
             "details": {"context_recall": {"statements": [{"statement": "Paris is the capital of France.", "attributed": 1 if i else attributed, "probability": 0.9, "reason": reason}, {"statement": "It is large.", "attributed": 1, "probability": 0.9}]}},
             "errors": {}}
            for i in range(4)
        ]
        path = tmp_path / f"{name}.jsonl"
        path.write_text("".join(json.dumps(line) + "\n" for line in [header, *rows]), encoding="utf-8")
        return path

    base, candidate = results("base", 1, "'capital of France' in context 2"), results("candidate", 0, "no context names a capital")
    md, page = tmp_path / "c.md", tmp_path / "c.html"
    assert invoke(["compare", str(base), str(candidate), "--markdown", str(md), "-q"]).exit_code == 0
    flipped = "statement 'Paris is the capital of France.': attributed in the base (\"'capital of France' in context 2\"), not attributed in the candidate ('no context names a capital')"
    assert "<details><summary>context_recall: worsened most (1)</summary>" in md.read_text(encoding="utf-8") and flipped in md.read_text(encoding="utf-8")
    assert invoke(["report", str(candidate), "--compare-to", str(base), "-o", str(page)]).exit_code == 0
    assert "Paris is the capital of France." in page.read_text(encoding="utf-8") and "not attributed in the candidate" in page.read_text(encoding="utf-8")


def test_an_id_two_rows_share_an_unreadable_line_and_another_question_are_listed_and_fail_a_gate(tmp_path):
    base = scored(tmp_path, "base", [sample(i, 2) for i in range(8)])
    rows = [sample(0, 2), sample(0, 2), "{not json", sample(3, 2, question="Another question?")] + [sample(i, 2) for i in range(4, 8)]
    data = tmp_path / "candidate.jsonl"
    data.write_text("".join((row if isinstance(row, str) else json.dumps(row)) + "\n" for row in rows), encoding="utf-8")
    candidate = tmp_path / "candidate.results.jsonl"
    assert invoke(["score", str(data), "-m", ID_RECALL, "-o", str(candidate), "-q", "--no-timing"]).exit_code == 2  # the unreadable line
    found = compare(base, candidate, max_drop={ID_RECALL: 0.5})
    why = {(u.id, u.side): u.why for u in found.unpaired}
    assert why[("q0", "candidate")] == "2 rows of the candidate have this id: it pairs with none"
    assert [u.line for u in found.unpaired if u.why.startswith("its input line could not be read")] == [3]
    assert why[("q3", "both")].startswith("another question") and why[("q0", "base")] == "in the base only"
    metric = found.metrics[ID_RECALL]
    assert metric.difference.count == 4 and metric.difference.mean == 0.0  # q4-q7: no drop among the pairs
    assert metric.gate is not None and not metric.gate.ok and f"{len(found.unpaired)} sample(s) could not be compared" in (metric.gate.reason or "")
    result = invoke(["compare", str(base), str(candidate), "--max-drop", f"{ID_RECALL}=0.5"])
    assert result.exit_code == 1 and f"{len(found.unpaired)} sample(s) not paired" in result.output, result.output


def test_no_output_may_name_the_config_or_an_input_a_header_records(tmp_path):
    base, candidate = base_and_candidate(tmp_path, [1, 2], [2, 1])
    data = tmp_path / "base.jsonl"  # the input the base's header records, read for the question check
    before = data.read_bytes()
    results_before = {path: path.read_bytes() for path in (base, candidate)}
    config = tmp_path / "gates.toml"
    config.write_text(f"max_drop = {{ {ID_RECALL} = 0.5 }}\n", encoding="utf-8")
    for args, words in (
        (["--json", str(data)], f"--json {data} is the same file as the input BASE records"),
        (["--markdown", str(config), "--config", str(config)], f"--markdown {config} is the same file as the config file"),
        (["--junit-xml", str(candidate)], f"--junit-xml {candidate} is the same file as CANDIDATE"),
        (["--junit-xml", str(base)], f"--junit-xml {base} is the same file as BASE"),
        (["--html", str(base)], f"--html {base} is the same file as BASE"),
        (["--html", str(candidate)], f"--html {candidate} is the same file as CANDIDATE"),
    ):
        result = invoke(["compare", str(base), str(candidate), *args])
        assert result.exit_code == 2 and words in result.stderr and "it would be overwritten" in result.stderr, (args, result.output)
        assert "Traceback" not in result.output and result.stdout == "", (args, result.stdout)  # refused before any report
    assert {path: path.read_bytes() for path in (base, candidate)} == results_before
    result = invoke(["report", str(candidate), "--compare-to", str(base), "-o", str(tmp_path / "candidate.jsonl")])
    assert result.exit_code == 2 and "is the same file as the input CANDIDATE records" in result.output
    assert data.read_bytes() == before and config.read_text(encoding="utf-8").startswith("max_drop")
    assert compare(base, candidate).metrics  # both results files still read


def test_a_results_file_a_windows_editor_saved_with_a_byte_order_mark_and_crlf_is_read(tmp_path):
    base, candidate = base_and_candidate(tmp_path, [1, 2, 0], [2, 2, 1])
    saved = tmp_path / "saved.jsonl"
    saved.write_bytes(b"\xef\xbb\xbf" + candidate.read_bytes().replace(b"\n", b"\r\n"))
    assert compare(base, saved).to_json_dict()["metrics"] == compare(base, candidate).to_json_dict()["metrics"]
    assert invoke(["report", str(saved), "-o", str(tmp_path / "page.html")]).exit_code == 0


def test_ids_that_differ_only_in_json_type_or_are_null_are_said_to_be_so(tmp_path):
    rows = [sample(i, 2) for i in range(3)]
    for i, row in enumerate(rows):
        row["id"] = 10 + i
    base = scored(tmp_path, "base", rows)
    candidate = tmp_path / "strings.results.jsonl"  # the ids rewritten as strings by another tool
    lines = base.read_text(encoding="utf-8").splitlines(keepends=True)
    candidate.write_text(lines[0] + "".join(line.replace(f'"id": {10 + i},', f'"id": "{10 + i}",') for i, line in enumerate(lines[1:])), encoding="utf-8")
    found = {(u.side, u.why) for u in compare(base, candidate).unpaired}
    assert ("base", "in the base only: the other run has the id '10', a string (a number id and a string id are two ids)") in found
    assert ("candidate", "in the candidate only: the other run has the id 10, a number (a number id and a string id are two ids)") in found
    nulls = tmp_path / "nulls.results.jsonl"
    nulls.write_text(lines[0] + "".join(line.replace(f'"id": {10 + i},', '"id": null,') for i, line in enumerate(lines[1:])), encoding="utf-8")
    assert {u.why for u in compare(base, nulls).unpaired if u.side == "candidate"} == {"its id is null: it pairs with none"}


def test_a_score_of_minus_zero_reads_as_zero_never_as_a_negative_score(tmp_path):
    base, candidate = base_and_candidate(tmp_path, [2, 2, 2], [2, 2, 0])
    lines = candidate.read_text(encoding="utf-8").splitlines(keepends=True)
    lines[3] = lines[3].replace(f'"{ID_RECALL}": 0.0', f'"{ID_RECALL}": -0.0')
    candidate.write_text("".join(lines), encoding="utf-8")
    worst = compare(base, candidate).metrics[ID_RECALL].worsened[0]
    assert str(worst.candidate) == "0.0"
    result = invoke(["compare", str(base), str(candidate)])
    assert result.exit_code == 0 and "1.000 -> 0.000" in result.output and "-0.000" not in result.output


def test_the_python_api_refuses_arguments_of_the_wrong_kind_with_a_config_error(tmp_path):
    from localeval.errors import ConfigError

    base, candidate = base_and_candidate(tmp_path, [1, 2], [2, 1])
    assert list(compare(base, candidate, metrics=ID_RECALL).metrics) == [ID_RECALL]  # one name, not its letters
    for kwargs, words in (
        ({"metrics": []}, "an empty list names no metric"),
        ({"show": "5"}, "--show must be a whole number"),
        ({"show": 2.5}, "--show must be a whole number"),
        ({"max_drop_on": "bogus"}, "max_drop_on must be one of"),
    ):
        with pytest.raises(ConfigError, match=words):
            compare(base, candidate, **kwargs)
