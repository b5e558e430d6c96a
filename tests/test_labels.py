"""A labels file's rows (localeval.labels, localeval.gold): each row labels the sample it names and
only that sample, read as the input reader reads the samples; a row that says something else about
its sample than the sample says is left out by line, saying why; human relevance shares count the
metric's own units; labels the run cannot use are named."""

from __future__ import annotations

import json

from click.testing import CliRunner

from localeval.cli import cli
from localeval.gold import read_gold
from localeval.summary import Summary


def _write(path, rows):
    path.write_text("".join(json.dumps(row) + "\n" for row in rows))
    return path


def _score(*args):
    return CliRunner().invoke(cli, ["score", *[str(a) for a in args]])


# Ids written as floats (pandas).


def test_a_label_id_written_as_a_float_is_read_as_the_input_reader_reads_it(tmp_path):
    contexts = ["Paris is the capital of France."]
    data = _write(tmp_path / "samples.jsonl", [{"id": 3.0, "user_input": "What is the capital of France?", "retrieved_contexts": contexts, "reference": "Paris is the capital of France."}])
    labels = _write(tmp_path / "labels.jsonl", [{"id": 3.0, "retrieved_contexts": contexts, "statement": "Paris is the capital of France.", "label": 1}])
    assert read_gold(str(labels)).scores == {"3": {"context_recall": 1.0}}
    summary = tmp_path / "s.json"
    result = _score(data, "-m", "context_recall", "--verifier", "--labels", labels, "--summary-json", summary)
    assert result.exit_code == 0, result.output
    figures = json.loads(summary.read_text())
    assert figures["labels"]["matched"] == 1 and figures["metrics"]["context_recall"]["ppi"]["labelled"] == 1
    fractional = _write(tmp_path / "fractional.jsonl", [{"id": 3.5, "retrieved_contexts": contexts, "statement": "s", "label": 1}])
    refused = _score(data, "-m", "context_recall", "--verifier", "--labels", fractional)
    assert refused.exit_code == 2 and f"{fractional}:1: field 'id'" in refused.output


# Relevance labels in lines.

BREADCRUMBS = "Home\nGermany\nDresden\n1901\nArt\nThe Dresden Secession was founded in Dresden in 1901 by painters.\nNews\nContact\nImprint"


def _relevance(tmp_path, contexts, required):
    return _write(tmp_path / "relevance.jsonl", [{"id": "q1", "user_input": "When was the Dresden Secession founded?", "retrieved_contexts": contexts, "required": required}])


def test_line_unit_relevance_labels_count_the_lines_that_hold_a_required_sentence_not_lines_inside_one(tmp_path):
    from localeval.gold import RelevanceUnits

    labels = _relevance(tmp_path, [BREADCRUMBS], ["The Dresden Secession was founded in Dresden in 1901 by painters."])
    assert read_gold(str(labels), RelevanceUnits("line")).scores["q1"]["context_relevance"] == 1 / 9  # not 3/9: the lines "Dresden" and "1901" only occur inside it
    # a sentence the splitter cut at a line break: both of its lines hold a part of it
    wrapped = _relevance(tmp_path, ["Dresden\nThe Dresden Secession was founded\nin Dresden in 1901 by painters.\nNews"], ["The Dresden Secession was founded in Dresden in 1901 by painters."])
    assert read_gold(str(wrapped), RelevanceUnits("line")).scores["q1"]["context_relevance"] == 2 / 4
    # two sentences on one line: the line counts once
    shared = _relevance(tmp_path, ["Dresden\nIt was founded in 1901. It closed in 1969.\nNews"], ["It was founded in 1901."])
    assert read_gold(str(shared), RelevanceUnits("line")).scores["q1"]["context_relevance"] == 1 / 3


# Labels the run cannot use.


def test_labels_for_a_metric_the_run_does_not_score_are_named_as_unused(tmp_path):
    samples = [{"id": f"s{i}", "retrieved_contexts": ["a", "b"], "retrieved_context_ids": ["a"], "reference_context_ids": ["a"]} for i in range(3)]
    data = _write(tmp_path / "samples.jsonl", samples)
    labels = _write(tmp_path / "labels.jsonl", [
        {"id": "s0", "retrieved_contexts": ["a", "b"], "useful": [1, 0]},
        {"id": "s1", "retrieved_contexts": ["a", "b"], "statement": "a", "label": 1, "metric": "faithfulness"},
    ])
    summary, markdown = tmp_path / "s.json", tmp_path / "s.md"
    result = _score(data, "-m", "id_context_recall", "--labels", labels, "--summary-json", summary, "--markdown", markdown)
    assert result.exit_code == 0, result.output
    assert json.loads(summary.read_text())["labels"]["unused_metrics"] == ["context_precision", "faithfulness"]
    for text in (result.output, markdown.read_text()):
        assert "the labels for context_precision, faithfulness are not used: this run does not score them" in text
    used = Summary(["context_precision", "faithfulness"], gold=read_gold(str(labels)))
    assert used.figures().labels.unused_metrics == ()


# A row describes the sample it names, or it is left out.

TOWERS = ["The Eiffel Tower is in Paris.", "The tower was finished in 1889.", "Berlin has a television tower."]
EIFFEL = {"user_input": "Where is the Eiffel Tower?", "retrieved_contexts": TOWERS, "reference": "The Eiffel Tower is in Paris.", "response": "It stands in Rome."}


def test_a_usefulness_row_whose_contexts_differ_from_the_samples_in_content_or_order_is_left_out_by_line(tmp_path):
    data = _write(tmp_path / "samples.jsonl", [{"id": f"s{i}", **EIFFEL} for i in range(3)])
    labels = _write(tmp_path / "labels.jsonl", [
        {"id": "s0", "retrieved_contexts": TOWERS, "useful": [1, 0, 0]},  # the sample's contexts: used
        {"id": "s1", "retrieved_contexts": TOWERS[::-1], "useful": [0, 0, 1]},  # the same contexts, reversed: ranks differ
        {"id": "s2", "retrieved_contexts": [TOWERS[0], "Rome is in Italy.", TOWERS[2]], "useful": [1, 0, 0]},  # another context
    ])
    summary = tmp_path / "s.json"
    for source, given in ((data, None), ("-", data.read_text())):  # a file is read twice; standard input is checked as it is read
        result = CliRunner().invoke(cli, ["score", str(source), "-m", "context_precision", "--verifier", "--labels", str(labels), "--summary-json", str(summary)], input=given)
        assert result.exit_code == 0, result.output
        figures = json.loads(summary.read_text())
        ppi = figures["metrics"]["context_precision"]["ppi"]
        assert ppi["labelled"] == 1 and ppi["human_mean"] == 1.0
        assert figures["labels"]["left_out"] == [
            f"{labels}:2: field 'retrieved_contexts': the sample's retrieved contexts in another order (a usefulness label belongs to a rank) (sample 's1', input line 2); the row is left out",
            f"{labels}:3: field 'retrieved_contexts': retrieved context 2 is not the sample's (sample 's2', input line 3); the row is left out",
        ]
        assert "labels: " in result.output and ":2: field 'retrieved_contexts'" in result.output


def test_an_attribution_row_must_show_its_samples_contexts_and_label_a_statement_of_the_metrics_own_text(tmp_path):
    data = _write(tmp_path / "samples.jsonl", [{"id": f"s{i}", **EIFFEL} for i in range(4)])
    labels = _write(tmp_path / "labels.jsonl", [
        {"id": "s0", "retrieved_contexts": TOWERS[::-1], "statement": "The Eiffel Tower is in Paris.", "label": 1},  # any order: used
        {"id": "s1", "retrieved_contexts": TOWERS, "statement": "It stands in Rome.", "label": 0},  # the response's: no "metric"
        {"id": "s2", "retrieved_contexts": TOWERS, "statement": "It stands in Rome.", "label": 0, "metric": "faithfulness"},  # used
        {"id": "s3", "retrieved_contexts": TOWERS[:2], "statement": "The Eiffel Tower is in Paris.", "label": 1},  # a context short
    ])
    summary = tmp_path / "s.json"
    result = _score(data, "-m", "context_recall", "-m", "faithfulness", "--verifier", "--labels", labels, "--summary-json", summary)
    assert result.exit_code == 0, result.output
    figures = json.loads(summary.read_text())
    recall, faithfulness = (figures["metrics"][name]["ppi"] for name in ("context_recall", "faithfulness"))
    assert (recall["labelled"], recall["human_mean"]) == (1, 1.0)  # s1's 0 does not correct context_recall
    assert (faithfulness["labelled"], faithfulness["human_mean"]) == (1, 0.0)
    assert figures["labels"]["left_out"] == [
        f"{labels}:2: field 'metric': the statement is in the sample's response, not its reference: a faithfulness label needs \"metric\": \"faithfulness\" (sample 's1', input line 2); the row is left out",
        f"{labels}:4: field 'retrieved_contexts': 2 retrieved contexts where the sample has 3 (sample 's3', input line 4); the row is left out",
    ]


def test_report_checks_labels_against_the_input_the_run_scored_or_says_it_cannot(tmp_path):
    data = _write(tmp_path / "samples.jsonl", [{"id": "s0", **EIFFEL}])
    labels = _write(tmp_path / "labels.jsonl", [{"id": "s0", "retrieved_contexts": TOWERS[::-1], "useful": [0, 0, 1]}])
    results, page = tmp_path / "r.jsonl", tmp_path / "r.html"
    assert _score(data, "-m", "context_precision", "--verifier", "-o", results).exit_code == 0
    reported = CliRunner().invoke(cli, ["report", str(results), "-o", str(page), "--labels", str(labels)])
    assert reported.exit_code == 0 and f"{labels}:1: field &#x27;retrieved_contexts&#x27;" in page.read_text()
    data.write_text(data.read_text().replace("Rome", "Paris"))  # the input changed since the run
    changed = CliRunner().invoke(cli, ["report", str(results), "-o", str(page), "--labels", str(labels)])
    assert changed.exit_code == 0 and "the labels are not checked against the samples they name" in changed.output
