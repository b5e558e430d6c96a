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
    assert used.to_dict()["labels"]["unused_metrics"] == []
