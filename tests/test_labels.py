"""A labels file's rows (localeval.data.labels, localeval.stats.human_scores): each row labels the sample it names and
only that sample, read as the input reader reads the samples; a row that says something else about
its sample than the sample says is left out by line, saying why; human relevance shares count the
metric's own units; labels the run cannot use are named."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner
from conftest import FIVE, id_recall_samples, run_score, statement_labels

from localeval.cli import cli
from localeval.data.labels import LeftOut, required_sentences
from localeval.stats.human_scores import RelevanceUnits, read_gold
from localeval.stats.summary import Summary


def _write(path, rows):
    path.write_text("".join(json.dumps(row) + "\n" for row in rows))
    return path


# Ids written as floats (pandas).


def test_a_label_id_written_as_a_float_is_read_as_the_input_reader_reads_it(tmp_path):
    contexts = ["Paris is the capital of France."]
    data = _write(tmp_path / "samples.jsonl", [{"id": 3.0, "user_input": "What is the capital of France?", "retrieved_contexts": contexts, "reference": "Paris is the capital of France."}])
    labels = _write(tmp_path / "labels.jsonl", [{"id": 3.0, "retrieved_contexts": contexts, "statement": "Paris is the capital of France.", "label": 1}])
    assert read_gold(str(labels)).scores == {"3": {"context_recall": 1.0}}
    summary = tmp_path / "s.json"
    result = run_score(data, "-m", "context_recall", "--verifier", "--labels", labels, "--summary-json", summary)
    assert result.exit_code == 0, result.output
    figures = json.loads(summary.read_text())
    assert figures["labels"]["matched"] == 1 and figures["metrics"]["context_recall"]["ppi"]["labelled"] == 1
    fractional = _write(tmp_path / "fractional.jsonl", [{"id": 3.5, "retrieved_contexts": contexts, "statement": "s", "label": 1}])
    refused = run_score(data, "-m", "context_recall", "--verifier", "--labels", fractional)
    assert refused.exit_code == 2 and f"{fractional}:1: field 'id'" in refused.output


# Relevance labels in lines.

BREADCRUMBS = "Home\nGermany\nDresden\n1901\nArt\nThe Dresden Secession was founded in Dresden in 1901 by painters.\nNews\nContact\nImprint"


def _relevance(tmp_path, contexts, required):
    return _write(tmp_path / "relevance.jsonl", [{"id": "q1", "user_input": "When was the Dresden Secession founded?", "retrieved_contexts": contexts, "required": required}])


def test_line_unit_relevance_labels_count_the_lines_that_hold_a_required_sentence_not_lines_inside_one(tmp_path):
    from localeval.stats.human_scores import RelevanceUnits

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
    result = run_score(data, "-m", "id_context_recall", "--labels", labels, "--summary-json", summary, "--markdown", markdown)
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
    result = run_score(data, "-m", "context_recall", "-m", "faithfulness", "--verifier", "--labels", labels, "--summary-json", summary)
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
    assert run_score(data, "-m", "context_precision", "--verifier", "-o", results).exit_code == 0
    reported = CliRunner().invoke(cli, ["report", str(results), "-o", str(page), "--labels", str(labels)])
    assert reported.exit_code == 0 and f"{labels}:1: field &#x27;retrieved_contexts&#x27;" in page.read_text()
    data.write_text(data.read_text().replace("Rome", "Paris"))  # the input changed since the run
    changed = CliRunner().invoke(cli, ["report", str(results), "-o", str(page), "--labels", str(labels)])
    assert changed.exit_code == 0 and "the labels are not checked against the samples they name" in changed.output


def _relevance_labels(tmp_path, row):
    path = tmp_path / "relevance.jsonl"
    path.write_text(json.dumps({"id": "q1", "user_input": "q?", **row}) + "\n")
    return path


def test_relevance_labels_are_counted_in_the_metric_unit(tmp_path):
    labels = _relevance_labels(tmp_path, {"retrieved_contexts": ["Alpha one is first. Alpha two is second.\nAlpha three is third.", "Beta one is here."], "required": ["Alpha one is first."]})
    assert read_gold(str(labels)).scores["q1"]["context_relevance"] == 1 / 4  # 4 sentences
    assert read_gold(str(labels), RelevanceUnits("chunk")).scores["q1"]["context_relevance"] == 1 / 2  # 2 contexts
    assert read_gold(str(labels), RelevanceUnits("line")).scores["q1"]["context_relevance"] == 1 / 3  # 3 lines


def test_relevance_labels_are_split_in_the_metric_language(tmp_path):
    labels = _relevance_labels(tmp_path, {"retrieved_contexts": ["Er kam am 3. Mai in Berlin an. Dann ging er nach Hause."], "required": ["Er kam am 3. Mai in Berlin an."]})
    assert read_gold(str(labels), RelevanceUnits(language="de")).scores["q1"]["context_relevance"] == 1 / 2
    english = read_gold(str(labels))  # English pysbd cuts after "3.": the sentence is not one of its sentences
    assert "q1" not in english.scores and "is not a sentence of the retrieved contexts" in english.left_out[0]


def test_score_counts_relevance_labels_in_the_unit_the_run_uses(tmp_path):
    contexts = ["Alpha one is first. Alpha two is second.", "Beta one is here."]
    data = tmp_path / "samples.jsonl"
    data.write_text(json.dumps({"id": "q1", "user_input": "Which alpha is first?", "retrieved_contexts": contexts}) + "\n")
    labels = _relevance_labels(tmp_path, {"retrieved_contexts": contexts, "required": ["Alpha one is first."]})
    summary = tmp_path / "s.json"
    for unit, share in (("sentence", 1 / 3), ("chunk", 1 / 2)):
        result = run_score(data, "-m", "context_relevance", "--verifier", "--option", f"context_relevance.unit={unit}", "--labels", labels, "--summary-json", summary)
        assert result.exit_code == 0, result.output
        assert json.loads(summary.read_text())["metrics"]["context_relevance"]["ppi"]["human_mean"] == share


def test_a_label_whose_id_two_samples_have_labels_neither(tmp_path):
    data = id_recall_samples(tmp_path, [1.0, 1.0, 0.0], ids=["dup", "dup", "other"])
    labels = statement_labels(tmp_path, [("dup", 1), ("other", 0)])
    summary = Summary(["context_recall"], gold=read_gold(str(labels)))
    from localeval.data.results import ResultRow

    for line, sample_id in ((1, "dup"), (2, "dup"), (3, "other")):
        summary.add(ResultRow(id=sample_id, line=line, scores={"context_recall": 1.0}))
    figures = summary.figures()
    assert figures.metrics["context_recall"].ppi.labelled == 1  # only "other"
    assert figures.labels.ambiguous == 1 and figures.labels.ambiguous_ids == ("dup",) and figures.labels.matched == 1
    assert data.exists()


def test_a_label_with_id_3_does_not_match_both_the_sample_with_id_3_and_the_id_less_one_on_line_3(tmp_path):
    contexts = tmp_path / "contexts.jsonl"
    sample = {"user_input": "Where is Paris?", "retrieved_contexts": ["Paris is in France."], "reference": "Paris is in France."}
    rows = [{"id": "3", **sample}, {"id": "two", **sample}, sample]  # line 3, no id: its id is 3
    contexts.write_text("".join(json.dumps(r) + "\n" for r in rows))
    labels = statement_labels(tmp_path, [(3, 1)], contexts=["Paris is in France."])
    summary = tmp_path / "s.json"
    result = run_score(contexts, "-m", "context_recall", "--verifier", "--labels", labels, "--summary-json", summary)
    assert result.exit_code == 0, result.output
    figures = json.loads(summary.read_text())
    assert figures["metrics"]["context_recall"]["ppi"]["labelled"] == 0 and figures["labels"]["ambiguous"] == 1
    assert "name more than one sample" in result.output


def test_score_leaves_out_a_relevance_row_whose_required_sentence_is_nowhere_as_calibrate_does(tmp_path):
    labels = tmp_path / "labels.jsonl"
    ghost = "This sentence appears in no context at all."
    labels.write_text(json.dumps({"id": "q1", "user_input": "q?", "retrieved_contexts": ["Alpha is here. Beta is there."], "required": [ghost, ghost, ghost]}) + "\n")
    gold = read_gold(str(labels))
    assert gold.scores == {} and gold.left_out == [f"{labels}:1: field 'required': {ghost!r} is not a sentence of the retrieved contexts; the row is left out"]
    with pytest.raises(LeftOut, match=":1: field 'required'"):
        required_sentences(json.loads(labels.read_text()), str(labels), 1)
    from localeval.run.calibrate import collect
    from localeval.testing import ScriptedJudge

    assert collect(str(labels), ScriptedJudge(lambda messages: 0.9)).errors == gold.left_out  # calibrate: the same rule, the same words
    data = tmp_path / "samples.jsonl"
    data.write_text(json.dumps({"id": "q1", "user_input": "q?", "retrieved_contexts": ["Alpha is here. Beta is there."]}) + "\n")
    result = run_score(data, "-m", "context_relevance", "--verifier", "--labels", labels)
    assert result.exit_code == 0 and "labels: " in result.output and "the row is left out" in result.output


def test_a_labels_file_with_no_id_row_says_that_it_labels_nothing(tmp_path):
    data = id_recall_samples(tmp_path, FIVE)
    labels = tmp_path / "labels.jsonl"
    labels.write_text(json.dumps({"retrieved_contexts": ["c"], "statement": "s", "label": 1}) + "\n")
    result = run_score(data, "-m", "id_context_recall", "--labels", labels)
    assert result.exit_code == 0 and "has no row with an id, so no sample is labelled" in result.output


def test_a_required_sentence_that_is_not_in_the_contexts_leaves_its_row_out_by_name(tmp_path):
    from localeval.run.calibrate import collect
    from localeval.testing import ScriptedJudge

    labels = tmp_path / "labels.jsonl"
    contexts = ["Alpha is here. Beta is there."]
    labels.write_text(json.dumps({"user_input": "q", "retrieved_contexts": contexts, "required": ["Gamma is nowhere."]}) + "\n"
                      + json.dumps({"user_input": "q", "retrieved_contexts": contexts, "required": ["Alpha is here."]}) + "\n")
    rows = collect(str(labels), ScriptedJudge(lambda messages: 0.9))
    assert len(rows.questions) == 1 and rows.required == [{0}]
    assert rows.errors == [f"{labels}:1: field 'required': 'Gamma is nowhere.' is not a sentence of the retrieved contexts; the row is left out"]


def test_a_labels_line_with_a_lone_surrogate_is_refused_by_line(tmp_path):
    from localeval.data.labels import read_labels
    from localeval.errors import InputError

    labels = tmp_path / "labels.jsonl"
    labels.write_text('{"retrieved_contexts": ["ok"], "statement": "fine", "label": 1}\n{"retrieved_contexts": ["\\ud800"], "statement": "x", "label": 1}\n')
    with pytest.raises(InputError, match=":2:"):
        read_labels(str(labels))
