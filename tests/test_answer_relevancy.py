"""answer_relevancy: questions the judge writes from the response, compared with the user's question
by all-MiniLM-L6-v2 embeddings. ragas parity on ragas' own cases (a scripted judge answering as
ragas' question generator would: the questions and the noncommittal flag), the cosine arithmetic
pinned by vectors whose cosines are known by hand, NaN and empty cases, one judge call per sample
that never reads the question, the real small judge's answer parsing, and the hand-written cases'
file (benchmarks/answer_relevancy.py ranks them with the default judge)."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from ragas_stand_ins import embed_as

from localeval import evaluate
from localeval.data.samples import Sample
from localeval.metrics import DEFAULT_METRICS, create_metric
from localeval.metrics.answer_relevancy import AnswerRelevancy, questions_schema
from localeval.testing import ScriptedJudge, prompt_fields

CASES = Path(__file__).parent / "data" / "answer_relevancy_cases.jsonl"

# ragas' cases (tests/e2e/metrics_migration/test_answer_relevancy_migration.py, the example of
# docs/concepts/metrics/available_metrics/answer_relevance.md and its "how it's calculated"
# answers), each with the questions and noncommittal flag ragas' ResponseRelevancePrompt asks its
# LLM for (one per generation, `strictness` = 3 generations).
RAGAS_CASES: list[tuple[dict[str, str], list[str], int]] = [
    (
        {"user_input": "What is the capital of France?", "response": "The capital of France is Paris, which is located in the north-central part of the country and serves as the political, economic, and cultural center."},
        ["What is the capital of France?", "Where is Paris located in France?", "Which city is the political center of France?"],
        0,
    ),
    (
        {"user_input": "How does photosynthesis work?", "response": "Photosynthesis is the process by which plants convert sunlight, carbon dioxide, and water into glucose and oxygen using chlorophyll."},
        ["What is photosynthesis?", "How do plants convert sunlight into glucose?", "What do plants produce during photosynthesis?"],
        0,
    ),
    (
        {"user_input": "What is the weather like today?", "response": "I don't have access to real-time weather data, so I cannot tell you what the weather is like today."},
        ["What is the weather like today?", "What is today's weather?", "Can you tell me the current weather?"],
        1,
    ),
    (
        {"user_input": "Explain quantum computing", "response": "Classical computers use bits, but quantum computers are different. There are many complex theories involved."},
        ["How are quantum computers different from classical computers?", "What do classical computers use?", "Are quantum computers complex?"],
        0,
    ),
    ({"user_input": "What is 2 + 2?", "response": "2 + 2 equals 4."}, ["What is 2 + 2?", "What does 2 plus 2 equal?", "What is the sum of 2 and 2?"], 0),
    ({"user_input": "What is the population of Tokyo?", "response": "I don't know the exact population of Tokyo."}, ["What is the population of Tokyo?"] * 3, 1),
    (
        {"user_input": "What is the population of Tokyo?", "response": "Tokyo has a population of approximately 14 million people in the metropolitan area."},
        ["What is the population of Tokyo?", "How many people live in the Tokyo metropolitan area?", "How large is Tokyo's population?"],
        0,
    ),
    (
        {"user_input": "When was the first super bowl?", "response": "The first superbowl was held on Jan 15, 1967"},
        ["When was the first Super Bowl held?", "What was the date of the first Super Bowl?", "When did the first Super Bowl take place?"],
        0,
    ),
    (
        {"user_input": "Where is France and what is it's capital?", "response": "France is in western Europe."},
        ["In which part of Europe is France located?", "What is the geographical location of France within Europe?", "Can you identify the region of Europe where France is situated?"],
        0,
    ),
]


def _script(questions: list[str], noncommittal: int, reason: str = "scripted") -> ScriptedJudge:
    return ScriptedJudge(answer=lambda messages, schema: {"questions": questions, "reason": reason, "noncommittal": noncommittal})


def ragas_score(question_vector: np.ndarray, generated: np.ndarray, noncommittal: int) -> float:
    """ragas 0.4.3's ResponseRelevancy: calculate_similarity (dot over the norms' product), then
    the mean times int(not committal)."""
    question = question_vector.reshape(1, -1)
    norm = np.linalg.norm(generated, axis=1) * np.linalg.norm(question, axis=1)
    return float((np.dot(generated, question.T).reshape(-1) / norm).mean() * int(not noncommittal))


@pytest.mark.parametrize(("sample", "questions", "noncommittal"), RAGAS_CASES, ids=[c[0]["user_input"][:30] for c in RAGAS_CASES])
def test_ragas_cases_score_as_ragas_computes_them(sample, questions, noncommittal, embedding_model):
    from localeval.models.embedding import load_embedder

    result = evaluate([sample], ["answer_relevancy"], judge=_script(questions, noncommittal)).results[0]
    vectors = load_embedder().embed([sample["user_input"], *questions])
    expected = ragas_score(vectors[0], vectors[1:], noncommittal)
    assert result["scores"]["answer_relevancy"] == pytest.approx(expected, abs=1e-6)
    details = result["details"]["answer_relevancy"]
    assert [q["question"] for q in details["questions"]] == questions and details["noncommittal"] == noncommittal
    if noncommittal:
        assert result["scores"]["answer_relevancy"] == 0.0
    else:
        assert expected > 0.5  # questions written from an answer to the question come back close to it


def test_the_cosine_arithmetic_on_vectors_whose_cosines_are_known(monkeypatch):
    """Embeddings replaced by vectors of known cosines (not unit length, as ragas' formula allows):
    q = (3, 4, 0); (3, 4, 0) -> 1, (0, 0, 2) -> 0, (4, 3, 0) -> 24/25, (-3, -4, 0) -> -1."""
    vectors = {"q": [3.0, 4.0, 0.0], "same": [3.0, 4.0, 0.0], "orthogonal": [0.0, 0.0, 2.0], "near": [4.0, 3.0, 0.0], "opposite": [-3.0, -4.0, 0.0]}
    embed_as(monkeypatch, vectors)
    sample = {"user_input": "q", "response": "an answer"}
    score = evaluate([sample], ["answer_relevancy"], judge=_script(["same", "orthogonal", "near"], 0)).results[0]
    assert score["scores"]["answer_relevancy"] == pytest.approx((1 + 0 + 0.96) / 3, abs=1e-12)
    assert [q["similarity"] for q in score["details"]["answer_relevancy"]["questions"]] == [1.0, 0.0, 0.96]
    noncommittal = evaluate([sample], ["answer_relevancy"], judge=_script(["same", "orthogonal", "near"], 1)).results[0]
    assert noncommittal["scores"]["answer_relevancy"] == 0.0
    # A mean below 0 (ragas reports it) scores 0; the details keep it.
    away = evaluate([sample], ["answer_relevancy"], judge=_script(["opposite", "orthogonal", "near"], 0)).results[0]
    assert away["scores"]["answer_relevancy"] == 0.0
    assert away["details"]["answer_relevancy"]["mean_similarity"] == pytest.approx((-1 + 0 + 0.96) / 3, abs=1e-4)


def test_no_question_written_is_nan_and_an_empty_response_is_0_without_a_judge_call():
    blank = create_metric("answer_relevancy").score_batch([Sample(user_input="q", response="Something.")], _script(["", " ", ""], 0))[0]
    assert math.isnan(blank.value) and blank.error is None  # ragas: every generated question blank -> NaN
    judge = _script(["unused"] * 3, 0)
    empty = evaluate([{"user_input": "q", "response": "  "}], ["answer_relevancy"], judge=judge).results[0]
    assert empty["scores"]["answer_relevancy"] == 0.0 and not judge.calls
    assert empty["details"]["answer_relevancy"]["reason"] == "the response is empty"


def test_one_judge_call_per_sample_that_never_reads_the_question(embedding_model):
    judge = _script(["When was the tower completed?"] * 3, 0)
    samples = [{"user_input": q, "response": "The tower was completed in 1889."} for q in ("When was the tower completed?", "Who painted it?", "Why?")]
    results = evaluate(samples, ["answer_relevancy"], judge=judge).results
    assert len(judge.calls) == 3 and judge.calls[0] == judge.calls[1] == judge.calls[2]
    assert all(r["usage"]["answer_relevancy"]["calls"] == 1 for r in results)
    assert "Who painted it?" not in json.dumps(judge.calls)
    scores = [r["scores"]["answer_relevancy"] for r in results]
    assert scores[0] > scores[1]  # the same questions, compared with the question asked


def test_the_grammar_asks_for_exactly_strictness_questions():
    """And the flag first; a reason in a noncommittal answer only, where the grammar requires it."""
    schema = questions_schema(5).model_json_schema()
    committal, noncommittal = (schema["$defs"][name]["properties"] for name in ("Committal5", "Noncommittal5"))
    assert committal["questions"]["minItems"] == committal["questions"]["maxItems"] == noncommittal["questions"]["maxItems"] == 5
    # The flag first, as the judge writes it (the grammar orders keys alphabetically; pydantic, for a server, as declared).
    assert list(committal) == ["noncommittal", "questions"] and list(noncommittal) == ["noncommittal", "questions", "reason"]
    assert (committal["noncommittal"]["const"], noncommittal["noncommittal"]["const"]) == (0, 1)
    with pytest.raises(Exception, match="at least 5"):
        questions_schema(5).model_validate({"noncommittal": 0, "questions": ["a"] * 3})
    with pytest.raises(Exception, match="reason"):
        questions_schema(5).model_validate({"noncommittal": 1, "questions": ["a"] * 5})
    assert "write 5 different" in prompt_kind_text(create_metric("answer_relevancy", {"strictness": 5}))


def prompt_kind_text(metric: Any) -> str:
    judge = _script(["q"] * 5, 1)
    metric.score_batch([Sample(user_input="q", response="I don't know.")], judge)
    assert prompt_fields(judge.calls[0]) == ("questions", {"response": "I don't know.", "count": "5"})
    return judge.calls[0][0]["content"]


def test_a_prompt_that_only_looks_like_the_questions_request_is_other():
    """The request is known by its system message too: a rubric's prompt that opens "Answer: " is not it."""
    assert prompt_fields([{"role": "system", "content": "Judge it."}, {"role": "user", "content": "Answer: yes"}]) == ("other", {})


def test_a_committal_verdict_s_reason_names_the_closest_question_and_a_noncommittal_one_the_judge_s(embedding_model):
    """The judge writes a reason for a noncommittal response only (its tokens were most of the
    metric's cost); a committal one's is built from the questions it wrote, and a scripted reason
    for it is ignored."""
    sample = {"user_input": "When was the tower completed?", "response": "The tower was completed in 1889 and is 330 metres tall."}
    committal = evaluate([sample], ["answer_relevancy"], judge=_script(["How tall is the tower?", "When was the tower completed?", ""], 0, reason="ignored")).results[0]
    details = committal["details"]["answer_relevancy"]
    similarity = next(q["similarity"] for q in details["questions"] if q["question"] == "When was the tower completed?")
    assert similarity == 1.0 and details["reason"] == "committal: it answers 'When was the tower completed?', 1.00 similar to the question asked"
    evasive = evaluate([{**sample, "response": "I cannot say."}], ["answer_relevancy"], judge=_script(["q"] * 3, 1, reason=" It declines. ")).results[0]
    assert evasive["details"]["answer_relevancy"]["reason"] == "It declines." and evasive["scores"]["answer_relevancy"] == 0.0
    blank = evaluate([sample], ["answer_relevancy"], judge=_script(["", "", ""], 0)).results[0]["details"]["answer_relevancy"]
    assert blank["reason"] == "no question could be written from the response"


def test_the_real_small_judge_answers_in_the_grammar(small_judge, embedding_model):
    score = create_metric("answer_relevancy").score_batch([Sample(user_input="Which organ produces insulin?", response="Insulin is produced by the pancreas.")], small_judge)[0]
    assert score.error is None and 0.0 <= score.value <= 1.0
    assert len(score.details["questions"]) == 3 and score.details["noncommittal"] in (0, 1) and score.details["reason"]
    assert score.usage is not None and score.usage["calls"] == 1
    assert AnswerRelevancy.explain_raw(score.details)


def test_answer_relevancy_is_named_to_run_and_has_no_verifier():
    assert "answer_relevancy" not in DEFAULT_METRICS
    with pytest.raises(Exception, match="verifier"):
        create_metric("answer_relevancy", {"verifier": True})


def test_the_hand_written_cases_hold_each_kind_once_per_question():
    rows = [json.loads(line) for line in CASES.read_text().splitlines() if line.strip()]
    groups: dict[str, list[str]] = {}
    for row in rows:
        Sample.model_validate({k: v for k, v in row.items() if k not in ("group", "kind")})
        groups.setdefault(row["group"], []).append(row["kind"])
        assert len({r["user_input"] for r in rows if r["group"] == row["group"]}) == 1
    assert all(sorted(kinds) == ["direct", "evasive", "other_question", "partial"] for kinds in groups.values()) and len(groups) >= 3
