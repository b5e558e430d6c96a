"""noise_sensitivity: the share of the response's statements the reference does not support and a
relevant (or irrelevant) retrieved context does. ragas' `_compute_score` against localeval's on
ragas' own verdict matrices and on every small matrix, ragas' docs example through the whole metric
with a scripted judge, NaN and empty cases, its verdicts shared with faithfulness, context_recall
and factual_correctness within a run, and the verifier."""

from __future__ import annotations

import itertools
import json
import math
import subprocess
import sys

import numpy as np
import pytest
from ragas_stand_ins import CERTAIN

from localeval import evaluate
from localeval.data.samples import Sample
from localeval.errors import ConfigError
from localeval.metrics import DEFAULT_METRICS, create_metric
from localeval.metrics.noise_sensitivity import NoiseSensitivity, noise_score, sentence_contexts
from localeval.testing import ScriptedJudge, prompt_fields


def ragas_compute_score(answers: dict[str, np.ndarray], mode: str) -> float:
    """ragas 0.4.3's NoiseSensitivity._compute_score, as it is written (boolean matrices:
    ground_truth2answer 1 x statements, retrieved2ground_truth reference statements x contexts,
    retrieved2answer statements x contexts)."""
    incorrect = ~answers["ground_truth2answer"]
    relevant_retrieved = np.max(answers["retrieved2ground_truth"], axis=0, keepdims=True)
    relevant_faithful = np.max(relevant_retrieved & answers["retrieved2answer"], axis=1)
    if mode == "irrelevant":
        irrelevant_retrieved = ~relevant_retrieved
        irrelevant_faithful = np.max(irrelevant_retrieved & answers["retrieved2answer"], axis=1)
        irrelevant_faithful &= ~relevant_faithful
        return float(np.mean(irrelevant_faithful & incorrect))
    return float(np.mean(relevant_faithful & incorrect))


def both(correct: list[int], response_by_context: list[list[int]], reference_by_context: list[list[int]], mode: str) -> tuple[float, float]:
    answers = {
        "ground_truth2answer": np.array([correct], dtype=bool),
        "retrieved2answer": np.array(response_by_context, dtype=bool).reshape(len(correct), -1),
        "retrieved2ground_truth": np.array(reference_by_context, dtype=bool).reshape(len(reference_by_context), -1),
    }
    ours = noise_score([not c for c in correct], [[bool(v) for v in row] for row in response_by_context], [[bool(v) for v in row] for row in reference_by_context], mode)
    return ours, ragas_compute_score(answers, mode)


# ragas' docs example (docs/concepts/metrics/available_metrics/noise_sensitivity.md, also the first
# case of tests/e2e/metrics_migration/test_noise_sensitivity_migration.py): ragas' statements of the
# response and of the reference, and which of the four contexts supports each, as its "How it's
# calculated" reads them; ragas' outputs 1/3 (relevant) and 0.0 (irrelevant).
LIC_QUESTION = "What is the Life Insurance Corporation of India (LIC) known for?"
LIC_RESPONSE = "The Life Insurance Corporation of India (LIC) is the largest insurance company in India, known for its vast portfolio of investments. LIC contributes to the financial stability of the country."
LIC_REFERENCE = "The Life Insurance Corporation of India (LIC) is the largest insurance company in India, established in 1956 through the nationalization of the insurance industry. It is known for managing a large portfolio of investments."
LIC_CONTEXTS = [
    "The Life Insurance Corporation of India (LIC) was established in 1956 following the nationalization of the insurance industry in India.",
    "LIC is the largest insurance company in India, with a vast network of policyholders and huge investments.",
    "As the largest institutional investor in India, LIC manages substantial funds, contributing to the financial stability of the country.",
    "The Indian economy is one of the fastest-growing major economies in the world, thanks to sectors like finance, technology, manufacturing etc.",
]
LIC_RESPONSE_CLAIMS = {  # statement: (supported by the reference, the contexts supporting it)
    "The Life Insurance Corporation of India (LIC) is the largest insurance company in India.": (1, [1]),
    "LIC is known for its vast portfolio of investments.": (1, [1, 2]),
    "LIC contributes to the financial stability of the country.": (0, [2]),
}
LIC_REFERENCE_CLAIMS = {
    "The Life Insurance Corporation of India (LIC) is the largest insurance company in India.": [1],
    "LIC was established in 1956 through the nationalization of the insurance industry.": [0],
    "LIC is known for managing a large portfolio of investments.": [1, 2],
}
RAGAS_MATRICES = [  # (ground_truth2answer, retrieved2answer, retrieved2ground_truth): the example's, and the migration test's photosynthesis case
    ([1, 1, 0], [[0, 1, 0, 0], [0, 1, 1, 0], [0, 0, 1, 0]], [[0, 1, 0, 0], [1, 0, 0, 0], [0, 1, 1, 0]]),
    ([1], [[1, 1, 0]], [[1, 1, 0], [0, 0, 0], [0, 1, 0]]),
    ([0, 1], [[0, 0, 1], [1, 0, 0]], [[1, 0, 0]]),  # an incorrect statement only an irrelevant context supports
]


@pytest.mark.parametrize("mode", ["relevant", "irrelevant"])
@pytest.mark.parametrize(("correct", "response_by_context", "reference_by_context"), RAGAS_MATRICES)
def test_ragas_matrices_score_as_ragas_computes_them(correct, response_by_context, reference_by_context, mode):
    ours, theirs = both(correct, response_by_context, reference_by_context, mode)
    assert ours == theirs


def test_every_small_matrix_scores_as_ragas_computes_it():
    """Every verdict pattern with 2 response statements, 2 reference statements and 2 contexts:
    2^(2 + 4 + 4) = 1,024 cases per mode, 0 differences."""
    differences = 0
    for bits in itertools.product([0, 1], repeat=10):
        correct, answer, truth = list(bits[:2]), [list(bits[2:4]), list(bits[4:6])], [list(bits[6:8]), list(bits[8:10])]
        for mode in ("relevant", "irrelevant"):
            ours, theirs = both(correct, answer, truth, mode)
            differences += ours != theirs
    assert differences == 0


def lic_judge() -> ScriptedJudge:
    """ragas' verdicts: a claims request answered with ragas' statements; an attribution prompt
    answered Yes where the document (the reference, or a chunk of the contexts) holds a context
    ragas found supporting the statement."""
    claims = {LIC_RESPONSE: list(LIC_RESPONSE_CLAIMS), LIC_REFERENCE: list(LIC_REFERENCE_CLAIMS)}

    def answer(messages, schema):
        return {"claims": claims[messages[-1]["content"].split("Answer: ", 1)[1].split("\n\nBreak the answer", 1)[0]]}

    def verdict(messages):
        _, fields = prompt_fields(messages)
        statement, document = fields["statement"], fields["document"]
        if document == LIC_REFERENCE:
            return float(LIC_RESPONSE_CLAIMS[statement][0])
        supporting = LIC_RESPONSE_CLAIMS[statement][1] if statement in LIC_RESPONSE_CLAIMS and document != LIC_REFERENCE else []
        if statement in LIC_REFERENCE_CLAIMS and statement not in LIC_RESPONSE_CLAIMS:
            supporting = LIC_REFERENCE_CLAIMS[statement]
        return float(any(LIC_CONTEXTS[c] in document for c in supporting))

    return ScriptedJudge(verdict, answer, calibration=CERTAIN)


@pytest.mark.parametrize(("mode", "expected"), [("relevant", 1 / 3), ("irrelevant", 0.0)])
def test_ragas_docs_example_through_the_metric(mode, expected):
    sample = Sample(user_input=LIC_QUESTION, response=LIC_RESPONSE, reference=LIC_REFERENCE, retrieved_contexts=LIC_CONTEXTS)
    score = create_metric("noise_sensitivity", {"mode": mode, "statements": "claims", "grader": "judge"}).score_batch([sample], lic_judge())[0]
    assert score.value == pytest.approx(expected, abs=1e-12)
    wrong = [s for s in score.details["statements"] if not s["correct"]]
    assert [s["statement"] for s in wrong] == ["LIC contributes to the financial stability of the country."]
    assert wrong[0]["contexts"] == [2] and score.details["relevant_contexts"] == [0, 1, 2]
    assert wrong[0]["counted"] == (mode == "relevant")
    if mode == "relevant":
        assert "(context 3)" in NoiseSensitivity.explain_raw(score.details)


def test_nan_and_empty_cases():
    judge = ScriptedJudge(calibration=CERTAIN)
    metric = create_metric("noise_sensitivity", {"grader": "judge"})
    base = Sample(user_input="q", response="Ann wrote the book.", reference="Ann wrote the book.", retrieved_contexts=["Ann wrote the book."])
    no_response, no_reference, no_context = metric.score_batch([
        base.model_copy(update={"response": ""}), base.model_copy(update={"reference": " "}), base.model_copy(update={"retrieved_contexts": []}),
    ], judge)
    assert all(math.isnan(s.value) for s in (no_response, no_reference, no_context)) and not judge.calls
    assert NoiseSensitivity.explain_raw(no_response.details) == "the response has no statements"
    # Every statement correct: 0, and the contexts' relevance is never asked (one call: the statement against the reference).
    correct = metric.score_batch([base], judge)[0]
    assert correct.value == 0.0 and correct.details["relevant_contexts"] is None and len(judge.calls) == 1


def test_verdicts_are_shared_with_faithfulness_context_recall_and_factual_correctness():
    sample = {"user_input": "q", "response": "Ann wrote the book. It sold a million copies.", "reference": "Ann wrote the book in 1990.",
              "retrieved_contexts": ["Ann wrote the book in 1990. It sold a million copies.", "Bob lives in Rome."]}
    supported = lambda m: all(w in prompt_fields(m)[1]["document"] for w in prompt_fields(m)[1]["statement"].rstrip(".").split())  # noqa: E731
    others = ["faithfulness", "context_recall", "factual_correctness"]
    alone = ScriptedJudge(supported, calibration=CERTAIN)
    evaluate([sample], [create_metric(name, {"grader": "judge"}) for name in others], judge=alone)
    together = ScriptedJudge(supported, calibration=CERTAIN)
    run = evaluate([sample], [create_metric(name, {"grader": "judge"}) for name in [*others, "noise_sensitivity"]], judge=together)
    assert len(together.calls) == len(alone.calls)
    assert run.results[0]["usage"]["noise_sensitivity"]["calls"] == 0
    assert run.results[0]["scores"]["noise_sensitivity"] == 0.5  # "It sold a million copies." is not in the reference, and context 1 says it


def test_options_and_named_to_run():
    with pytest.raises(ConfigError, match="mode"):
        create_metric("noise_sensitivity", {"mode": "noisy"})
    assert "noise_sensitivity" not in DEFAULT_METRICS and create_metric("noise_sensitivity").params.mode == "relevant"


def test_a_sentence_belongs_to_the_contexts_it_spans():
    contexts = ["Ann wrote it. Bob read it", "Cy sang.", "Dee danced."]
    assert sentence_contexts(contexts, ["Ann wrote it.", "Bob read it\nCy sang.", "Dee danced."]) == [{0}, {0, 1}, {2}]


def test_the_verifier_decides_without_a_judge(write_jsonl, tmp_path):
    data = write_jsonl([{"user_input": "q", "response": "The Eiffel Tower was completed in 1889. It is made of chocolate.", "reference": "The Eiffel Tower was completed in 1889.",
                         "retrieved_contexts": ["The Eiffel Tower was completed in 1889 and is made of wrought iron."]}])
    run = subprocess.run([sys.executable, "-m", "localeval", "score", str(data), "-m", "noise_sensitivity", "--verifier", "-o", str(tmp_path / "out.jsonl"), "-q"], capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    header, row = (json.loads(line) for line in (tmp_path / "out.jsonl").read_text().splitlines())
    assert header["run"]["judge"] is None and header["run"]["metrics"]["noise_sensitivity"]["grader"] == "verifier"  # no judge loaded
    assert not row["errors"] and 0.0 <= row["scores"]["noise_sensitivity"] <= 1.0
