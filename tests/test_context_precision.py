"""context_precision: each retrieved context judged useful or not for arriving at the reference (or
the response), then ragas' average precision. ragas parity on ragas' own cases with a scripted
judge answering as ragas' mocked LLM (the same verdict per context), the options, the verifier,
the real small judge, bad input."""

from __future__ import annotations

import itertools
import math
from typing import Any

import pytest

from localeval import evaluate
from localeval.data.samples import Sample
from localeval.metrics import create_metric
from localeval.metrics.ranking import average_precision
from localeval.testing import ScriptedJudge, prompt_fields

# ragas' cases (tests/e2e/metrics_migration/test_context_precision_migration.py and the example of
# docs/concepts/metrics/available_metrics/context_precision.md), with the verdict ragas' mocked
# LLM gives each context, in retrieval order, and ragas' score for those verdicts.
RAGAS_CASES: list[tuple[dict[str, Any], list[int], float]] = [
    (
        {
            "user_input": "What is the capital of France?",
            "response": "Paris is the capital of France.",
            "reference": "The capital of France is Paris.",
            "retrieved_contexts": [
                "Paris is the capital and largest city of France, with a population of over 2 million people.",
                "Berlin is the capital of Germany and has a rich historical background.",
            ],
        },
        [1, 0],
        1.0,
    ),
    (
        {
            "user_input": "Who developed the theory of relativity?",
            "response": "Albert Einstein developed the theory of relativity.",
            "reference": "Einstein developed the theory of relativity in the early 1900s.",
            "retrieved_contexts": [
                "Albert Einstein was a German-born theoretical physicist who developed the theory of relativity.",
                "Einstein published his special theory of relativity in 1905 and general relativity in 1915.",
                "Isaac Newton developed the laws of motion and universal gravitation.",
            ],
        },
        [1, 1, 0],
        1.0,
    ),
    (
        {
            "user_input": "What is photosynthesis?",
            "response": "Photosynthesis is the process by which plants make energy from sunlight.",
            "reference": "Photosynthesis is how plants convert sunlight into energy using chlorophyll.",
            "retrieved_contexts": [
                "Photosynthesis is the process by which plants use sunlight, carbon dioxide, and water to produce glucose.",
                "During photosynthesis, chlorophyll in plant leaves absorbs light energy to drive the reaction.",
                "Plants also undergo cellular respiration to break down glucose for energy.",
            ],
        },
        [1, 1, 0],
        1.0,
    ),
    (
        {
            "user_input": "Where is the Eiffel Tower located?",
            "reference": "The Eiffel Tower is located in Paris.",
            "retrieved_contexts": ["The Brandenburg Gate is located in Berlin.", "The Eiffel Tower is located in Paris."],
        },
        [0, 1],
        0.5,
    ),
    (
        {
            "user_input": "Who developed the theory of relativity?",
            "reference": "Einstein developed the theory of relativity in the early 1900s.",
            "retrieved_contexts": [
                "Isaac Newton developed the laws of motion and universal gravitation.",
                "Albert Einstein was a German-born theoretical physicist who developed the theory of relativity.",
                "Berlin is the capital of Germany and has a rich historical background.",
                "Einstein published his special theory of relativity in 1905 and general relativity in 1915.",
            ],
        },
        [0, 1, 0, 1],
        0.5,
    ),
    ({"user_input": "q", "reference": "r", "retrieved_contexts": ["Newton.", "Berlin."]}, [0, 0], 0.0),
]


def ragas_average_precision(verdicts: list[int]) -> float:
    """ragas' formula as its docs write it: sum_k precision@k * v_k / (relevant items + 1e-10)."""
    precision_at = [sum(verdicts[: k + 1]) / (k + 1) for k in range(len(verdicts))]
    return sum(p * v for p, v in zip(precision_at, verdicts)) / (sum(verdicts) + 1e-10)


def as_ragas_mock(useful: dict[str, int]) -> ScriptedJudge:
    def verdict(messages: list[dict[str, str]]) -> float:
        kind, fields = prompt_fields(messages)
        assert kind == "usefulness"
        return float(useful[fields["paragraph"]])

    return ScriptedJudge(verdict)


@pytest.mark.parametrize("sample, verdicts, expected", RAGAS_CASES)
@pytest.mark.parametrize("against", ["reference", "response"])
def test_ragas_scores_on_ragas_cases(sample, verdicts, expected, against):
    if against not in sample:
        pytest.skip("ragas' case has no response")
    judge = as_ragas_mock(dict(zip(sample["retrieved_contexts"], verdicts)))
    result = evaluate([sample], [create_metric("context_precision", {"against": against})], judge=judge).results[0]
    assert result["scores"]["context_precision"] == pytest.approx(expected, abs=1e-9)
    assert result["scores"]["context_precision"] == pytest.approx(ragas_average_precision(verdicts), abs=1e-9)
    assert [c["useful"] for c in result["details"]["context_precision"]["contexts"]] == verdicts
    assert all(prompt_fields(call)[1]["answer"] == sample[against] for call in judge.calls)


def test_average_precision_is_ragas_formula_on_every_ranking_up_to_seven():
    for length in range(8):
        for verdicts in itertools.product([0, 1], repeat=length):
            assert average_precision([bool(v) for v in verdicts]) == pytest.approx(ragas_average_precision(list(verdicts)), abs=1e-9)
    assert average_precision([True, True]) == 1.0  # ragas: 0.9999999999 (its 1e-10), here exactly 1


def test_the_prompt_asks_about_the_answer_with_question_and_answer_first():
    judge = ScriptedJudge()
    create_metric("context_precision").score_batch([Sample(user_input="Who wrote it?", retrieved_contexts=["Ann wrote the book.", "Bob sings."], reference="Ann.")], judge)
    assert [prompt_fields(call) for call in judge.calls] == [
        ("usefulness", {"question": "Who wrote it?", "answer": "Ann.", "paragraph": "Ann wrote the book."}),
        ("usefulness", {"question": "Who wrote it?", "answer": "Ann.", "paragraph": "Bob sings."}),
    ]


def test_the_threshold_and_a_calibration_decide_usefulness():
    sample = Sample(user_input="q", retrieved_contexts=["a.", "b."], reference="r")
    identity = {"usefulness": {"intercept": 0.0, "weights": {"judge": 1.0}}}  # P(useful) = P(Yes)
    judge = ScriptedJudge(lambda m: 0.3 if prompt_fields(m)[1]["paragraph"] == "a." else 0.8, calibration=identity)
    details = create_metric("context_precision").score_batch([sample], judge)[0].details["contexts"]
    assert [c["useful"] for c in details] == [0, 1] and [c["probability"] for c in details] == [0.3, 0.8]
    assert create_metric("context_precision", {"threshold": "0.2"}).score_batch([sample], judge)[0].value == 1.0
    lenient = ScriptedJudge(lambda m: 0.3, calibration={"usefulness": {"intercept": 2.0, "weights": {"judge": 1.0}}})
    assert create_metric("context_precision").score_batch([sample], lenient)[0].value == 1.0


def test_without_a_fitted_table_a_small_judges_cheap_yes_is_not_usefulness():
    """The documented default (round numbers of the default judge's fit): useful from P(Yes) of about 0.72."""
    sample = Sample(user_input="q", retrieved_contexts=["a.", "b."], reference="r")
    judge = ScriptedJudge(lambda m: 0.65 if prompt_fields(m)[1]["paragraph"] == "a." else 0.8)
    assert [c["useful"] for c in create_metric("context_precision").score_batch([sample], judge)[0].details["contexts"]] == [0, 1]


def test_edge_cases_blank_answer_blank_context_no_context():
    metric = create_metric("context_precision")
    judge = ScriptedJudge()
    blank = metric.score_batch([Sample(user_input="q", retrieved_contexts=["c."], reference=" ")], judge)[0]
    assert math.isnan(blank.value) and metric.explain_raw(blank.details) == "the reference is blank: there is no answer to arrive at"
    empty = metric.score_batch([Sample(user_input="q", retrieved_contexts=[" ", "c."], reference="r")], judge)[0]
    assert empty.value == 0.5 and empty.details["contexts"][0] == {"useful": 0, "probability": 0.0}
    none = metric.score_batch([Sample(user_input="q", retrieved_contexts=[], reference="r")], judge)[0]
    assert none.value == 0.0 and metric.explain_raw(none.details) == "no retrieved context"  # ragas: 0 / 1e-10
    assert len(judge.calls) == 1


def test_the_explanation_names_the_useful_ranks():
    judge = ScriptedJudge(lambda m: prompt_fields(m)[1]["paragraph"] != "b.")
    metric = create_metric("context_precision")
    score = metric.score_batch([Sample(user_input="q", retrieved_contexts=["a.", "b.", "c."], reference="r")], judge)[0]
    assert score.value == pytest.approx((1 + 2 / 3) / 2)
    assert metric.explain_raw(score.details) == "useful for arriving at the reference: contexts at rank 1, 3 of 3"


def test_against_response_needs_a_response_not_a_reference_and_missing_fields_are_named():
    rows = [{"id": "a", "question": "q", "contexts": ["Ann wrote it."], "answer": "Ann."}, {"id": "b", "user_input": "q", "retrieved_contexts": ["c"], "reference": "r"}]
    by_response = evaluate(rows, [create_metric("context_precision", {"against": "response"})], judge=ScriptedJudge()).results
    assert by_response[0]["scores"]["context_precision"] == 1.0
    assert by_response[1]["errors"]["context_precision"] == "missing required field 'response'"
    by_reference = evaluate(rows, ["context_precision"], judge=ScriptedJudge()).results
    assert by_reference[0]["errors"]["context_precision"] == "missing required field 'reference'"
    assert by_reference[1]["scores"]["context_precision"] == 1.0


def test_the_verifier_finds_the_context_that_states_the_answer():
    metric = create_metric("context_precision", {"verifier": True})
    assert not metric.uses_judge()
    sample = Sample(
        user_input="When was the Eiffel Tower completed?",
        retrieved_contexts=["Paris has many museums. The Louvre is the largest.", "The Eiffel Tower is in Paris. It was completed on 31 March 1889."],
        reference="The Eiffel Tower was completed on 31 March 1889.",
    )
    score = metric.score_batch([sample], None)[0]
    assert [c["useful"] for c in score.details["contexts"]] == [0, 1] and score.value == 0.5
    assert all(math.isfinite(c["verifier"]) for c in score.details["contexts"])


def test_the_real_small_judge_reads_each_context_once_with_probabilities(small_judge):
    sample = Sample(user_input="Which organ produces insulin?", retrieved_contexts=["Insulin is made in the pancreas.", "The liver stores glycogen."], reference="The pancreas.")
    first = create_metric("context_precision").score_batch([sample], small_judge)[0]
    again = create_metric("context_precision").score_batch([sample], small_judge)[0]
    assert (first.value, first.details, first.error) == (again.value, again.details, None)  # the prefix cache changes only the cost
    assert all(0.0 <= c["probability"] <= 1.0 and math.isfinite(c["judge_log_odds"]) for c in first.details["contexts"])
    assert first.usage is not None and first.usage["calls"] == 2 and first.usage["completion_tokens"] == 0
    assert 0.0 <= first.value <= 1.0


def test_a_config_run_gates_reports_and_resumes_the_new_metrics(tmp_path, write_jsonl):
    """Options and gates from a config file's keys, JUnit and Markdown, and a resume refused when
    an option that changes the scores (against) changed."""
    from xml.etree import ElementTree

    from localeval import ConfigError
    from localeval.run.pipeline import score_file
    from localeval.run.settings import build_settings

    rows = [{"id": f"q{i}", "user_input": "q", "retrieved_contexts": ["Bob sings.", "Ann wrote the book."], "reference": "Ann wrote it.", "response": "Ann wrote the book. Bob wrote it too."} for i in range(2)]
    data, out, junit, markdown = write_jsonl(rows), tmp_path / "r.jsonl", tmp_path / "j.xml", tmp_path / "s.md"
    judge = ScriptedJudge(lambda m: "Bob" not in prompt_fields(m)[1].get("paragraph", prompt_fields(m)[1].get("statement", "")))
    values = {
        "input": str(data), "output": str(out), "junit_xml": str(junit), "markdown": str(markdown),
        "metrics": ["faithfulness", "context_precision"],
        "options": {"faithfulness": {"verifier": False, "threshold": 0.5}, "context_precision": {"against": "reference"}},
        "thresholds": {"faithfulness": 0.4}, "min_mean": {"context_precision": 0.6},
    }
    run = score_file(build_settings(values), judge=judge)
    assert run.exit_code == 1  # context_precision's mean 0.5 is under 0.6; faithfulness 0.5 meets 0.4
    assert run.summary["metrics"]["faithfulness"]["mean"] == 0.5 and run.summary["metrics"]["context_precision"]["mean"] == 0.5
    suites = {suite.get("name"): suite for suite in ElementTree.parse(junit).getroot().findall("testsuite")}
    assert set(suites) == {"faithfulness", "context_precision"} and "context_precision" in markdown.read_text()
    header = out.read_text().splitlines()[0]
    assert '"against":"reference"' in header.replace(" ", "")
    out.write_text("\n".join(out.read_text().splitlines()[:2]) + "\n")  # interrupted after one sample
    with pytest.raises(ConfigError, match="cannot resume.*metrics"):
        score_file(build_settings({**values, "options": {**values["options"], "context_precision": {"against": "response"}}, "resume": True}), judge=judge)
    resumed = score_file(build_settings({**values, "resume": True}), judge=judge)
    figures = ("count", "scored", "mean", "errors", "prompt_tokens")  # judge seconds are the clock's
    assert resumed.written == 1
    assert all(resumed.summary["metrics"][m][f] == run.summary["metrics"][m][f] for m in ("faithfulness", "context_precision") for f in figures)
