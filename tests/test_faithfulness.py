"""faithfulness: the response's statements attributed to the retrieved contexts by context_recall's
engine. ragas parity on ragas' own cases (a scripted judge answering as ragas' mocked LLM:
the same statements, the same verdicts), verdicts that never depend on the question (scripted,
the real small judge, the verifier), one judge call for a verdict both metrics need, bad input."""

from __future__ import annotations

import math
from typing import Any

import pytest
from ragas_stand_ins import CERTAIN

from localeval import evaluate
from localeval.data.samples import Sample
from localeval.metrics import create_metric
from localeval.testing import ScriptedJudge, prompt_fields

EINSTEIN = ["Albert Einstein (born 14 March 1879) was a German-born theoretical physicist, widely held to be one of the greatest and most influential scientists of all time."]

# ragas' cases (tests/e2e/metrics_migration/test_faithfulness_migration.py and the worked example
# of docs/concepts/metrics/available_metrics/faithfulness.md): the question, response and
# contexts; the statements ragas' statement generator gives; ragas' NLI verdict for each; and
# ragas' score for those verdicts (Faithfulness._compute_score: supported / statements).
RAGAS_CASES: list[tuple[dict[str, Any], dict[str, int], float]] = [
    (
        {"user_input": "Where was Einstein born?", "response": "Einstein was born in Germany on 14th March 1879.", "retrieved_contexts": EINSTEIN},
        {"Einstein was born in Germany.": 1, "Einstein was born on 14th March 1879.": 1},
        1.0,
    ),
    (
        {"user_input": "Where and when was Einstein born?", "response": "Einstein was born in Germany on 20th March 1879.", "retrieved_contexts": EINSTEIN},
        {"Einstein was born in Germany.": 1, "Einstein was born on 20th March 1879.": 0},
        0.5,
    ),
    (
        {
            "user_input": "When was the first super bowl?",
            "response": "The first superbowl was held on Jan 15, 1967",
            "retrieved_contexts": ["The First AFL–NFL World Championship Game was an American football game played on January 15, 1967, at the Los Angeles Memorial Coliseum in Los Angeles."],
        },
        {"The first superbowl was held on Jan 15, 1967.": 1},
        1.0,
    ),
    (
        {
            "user_input": "What is photosynthesis?",
            "response": "Photosynthesis is how plants make energy and produce oxygen.",
            "retrieved_contexts": ["Photosynthesis is the process by which plants convert sunlight into energy.", "During photosynthesis, plants produce oxygen as a byproduct."],
        },
        {"Photosynthesis is how plants make energy.": 1, "Photosynthesis produces oxygen.": 1},
        1.0,
    ),
    (
        {"user_input": "What is the capital of France?", "response": "The capital of France is London.", "retrieved_contexts": ["Paris is the capital and largest city of France."]},
        {"The capital of France is London.": 0},
        0.0,
    ),
]


def as_ragas_mock(statements: dict[str, int]) -> ScriptedJudge:
    """A judge answering as ragas' mocked LLM: its statements when asked to break the response
    up, and its verdict on each statement when asked whether the contexts support it."""

    def verdict(messages: list[dict[str, str]]) -> float:
        kind, fields = prompt_fields(messages)
        assert kind == "attribution"
        return float(statements[fields["statement"]])

    return ScriptedJudge(verdict, lambda messages, schema: {"claims": list(statements)}, calibration=CERTAIN)


@pytest.mark.parametrize("sample, statements, expected", RAGAS_CASES)
def test_ragas_scores_on_ragas_cases(sample, statements, expected):
    metric = create_metric("faithfulness", {"statements": "claims", "verifier": False})
    run = evaluate([sample], [metric], judge=as_ragas_mock(statements))
    result = run.results[0]
    assert result["scores"]["faithfulness"] == expected
    assert [v["statement"] for v in result["details"]["faithfulness"]["statements"]] == list(statements)


def test_a_response_without_statements_is_nan_as_in_ragas():
    """ragas' Faithfulness returns NaN when no statement is generated; so does a blank response."""
    score = create_metric("faithfulness", {"verifier": False}).score_batch([Sample(user_input="q", retrieved_contexts=["c"], response="  ")], ScriptedJudge())[0]
    assert math.isnan(score.value) and score.details == {"statements": []}
    assert create_metric("faithfulness").explain_raw(score.details) == "the response has no statements"


def test_sentences_of_the_response_are_the_statements_with_evidence_and_reasons():
    sample = Sample(user_input="q", retrieved_contexts=EINSTEIN, response="Einstein was born in 1879. He won two Nobel Prizes.")
    judge = ScriptedJudge(lambda m: "Nobel" not in prompt_fields(m)[1]["statement"], calibration=CERTAIN)
    score = create_metric("faithfulness", {"verifier": False}).score_batch([sample], judge)[0]
    assert score.value == 0.5
    first, second = score.details["statements"]
    assert (first["attributed"], second["attributed"]) == (1, 0)
    assert first["evidence"] == [0] and "'nobel'" in second["reason"]
    assert "1 of 2 statements not attributed: 'He won two Nobel Prizes.'" in create_metric("faithfulness").explain_raw(score.details)


def test_a_missing_response_is_a_per_sample_error_and_answer_is_its_legacy_name():
    rows = [{"id": "a", "question": "q", "contexts": ["Ann wrote the book."], "answer": "Ann wrote it."}, {"id": "b", "user_input": "q", "retrieved_contexts": ["c"]}]
    run = evaluate(rows, ["faithfulness", "id_context_recall"], judge=ScriptedJudge(calibration=CERTAIN))
    legacy, missing = run.results
    assert legacy["scores"]["faithfulness"] == 1.0 and legacy["errors"] == {"id_context_recall": "missing required field 'retrieved_context_ids', 'reference_context_ids'"}
    assert missing["scores"]["faithfulness"] is None and missing["errors"]["faithfulness"] == "missing required field 'response'"


@pytest.mark.parametrize("name", ["faithfulness", "context_recall"])
def test_the_question_never_reaches_a_statement_verdict(name):
    judge = ScriptedJudge(calibration=CERTAIN)
    metric = create_metric(name, {"verifier": False})
    for question in ["", "Who wrote it and when?", "Did Ann write the book in 1990?"]:
        metric.score_batch([Sample(user_input=question, retrieved_contexts=["Ann wrote the book in 1990."], reference="Ann wrote it.", response="Ann wrote it.")], judge)
    assert len(judge.calls) == 3 and judge.calls[0] == judge.calls[1] == judge.calls[2]


def test_a_verdict_both_metrics_need_is_asked_once_and_the_contexts_split_once():
    """Where the reference and the response share statements, the second metric reads the
    first one's verdicts (localeval.judge.shared): same scores, fewer judge calls."""
    sample = {"user_input": "q", "retrieved_contexts": ["Ann wrote the book in 1990. It sold well."], "reference": "Ann wrote the book. It sold well.", "response": "Ann wrote the book. It was a film."}
    alone = ScriptedJudge(calibration=CERTAIN)
    recall_only = evaluate([sample], [create_metric("context_recall", {"verifier": False})], judge=alone).results[0]
    faithfulness_only = evaluate([sample], [create_metric("faithfulness", {"verifier": False})], judge=ScriptedJudge(calibration=CERTAIN)).results[0]
    both_judge = ScriptedJudge(calibration=CERTAIN)
    both = evaluate([sample], [create_metric(n, {"verifier": False}) for n in ("context_recall", "faithfulness")], judge=both_judge).results[0]
    assert both["scores"] == {**recall_only["scores"], **faithfulness_only["scores"]}
    assert both["details"]["faithfulness"] == faithfulness_only["details"]["faithfulness"]
    assert len(alone.calls) == 2 and len(both_judge.calls) == 3  # "Ann wrote the book." is judged once
    assert both["usage"]["faithfulness"]["calls"] == 1 and both["usage"]["faithfulness"]["reused"] == 1
    assert "reused" not in both["usage"]["context_recall"]


def test_the_claims_decomposition_is_asked_once_for_one_text():
    sample = {"user_input": "q", "retrieved_contexts": ["Ann wrote the book."], "reference": "Ann wrote it.", "response": "Ann wrote it."}
    judge = ScriptedJudge(lambda m: 1.0, lambda messages, schema: {"claims": ["Ann wrote it."]}, calibration=CERTAIN)
    evaluate([sample], [create_metric(n, {"verifier": False, "statements": "claims"}) for n in ("context_recall", "faithfulness")], judge=judge)
    assert len(judge.calls) == 2  # one decomposition, one verdict


def test_the_verifier_decides_without_a_judge_and_without_the_question():
    metric = create_metric("faithfulness", {"verifier": True})
    assert not metric.uses_judge()
    base = Sample(user_input="", retrieved_contexts=["The Eiffel Tower is in Paris. It was completed on 31 March 1889."], response="The Eiffel Tower was completed in 1889. It is made of chocolate.")
    seen = set()
    for question in ["", "When was the Eiffel Tower completed?"]:
        details = metric.score_batch([base.model_copy(update={"user_input": question})], None)[0].details["statements"]
        seen.add(tuple((v["probability"], v["attributed"]) for v in details))
        assert all(v["reason"] and math.isfinite(v["features"]["verifier"]) for v in details)
    assert len(seen) == 1
    assert [attributed for _, attributed in seen.pop()] == [1, 0]


def test_the_real_small_judge_gives_a_statement_the_same_verdict_with_and_without_a_question(small_judge):
    verdicts = {}
    for name in ("faithfulness", "context_recall"):
        for question in ["", "When was the tower completed, and who designed it?"]:
            sample = Sample(user_input=question, retrieved_contexts=["The tower in Paris was completed on 31 March 1889."], reference="The tower was completed in 1889.", response="The tower was completed in 1889.")
            score = create_metric(name, {"verifier": False}).score_batch([sample], small_judge)[0]
            verdict = score.details["statements"][0]
            verdicts.setdefault(name, set()).add((verdict["probability"], verdict["attributed"], verdict["judge_log_odds"]))
            assert 0.0 <= score.value <= 1.0
    assert len(verdicts["faithfulness"]) == 1 and verdicts["faithfulness"] == verdicts["context_recall"]


def test_the_contexts_are_split_once_for_both_metrics(monkeypatch):
    from localeval.metrics import judging

    seen: list[str] = []
    real = judging.split_sentences

    def counting(text: str, language: str = "en") -> list[str]:
        seen.append(text)
        return real(text, language)

    monkeypatch.setattr(judging, "split_sentences", counting)
    contexts = ["Zoe painted the mural in 2003, a test of splitting once.", "It faces the harbour."]
    sample = {"user_input": "q", "retrieved_contexts": contexts, "reference": "Zoe painted the mural.", "response": "The mural faces the harbour."}
    evaluate([sample], [create_metric(n, {"verifier": False}) for n in ("context_recall", "faithfulness")], judge=ScriptedJudge(calibration=CERTAIN))
    assert seen.count("\n".join(contexts)) == 1
