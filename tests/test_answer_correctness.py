"""answer_correctness: ragas' weighted mean of the statements' F-beta (factual_correctness' verdicts)
and the texts' semantic similarity. ragas parity on ragas' own cases (a scripted judge giving the
claims and verdicts ragas' classifier would; the similarity by ragas' formula computed on its own),
the weights and their checks, NaN-free empty cases, factual_correctness' verdicts reused within a
run, one embedding call per batch, and the verifier."""

from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pytest
from ragas_stand_ins import CERTAIN, embed_as, ragas_cosine, ragas_judge

from localeval import evaluate
from localeval.data.samples import Sample
from localeval.errors import ConfigError
from localeval.metrics import DEFAULT_METRICS, create_metric
from localeval.metrics.answer_correctness import AnswerCorrectness
from localeval.testing import ScriptedJudge, prompt_fields

# ragas' cases (tests/e2e/metrics_migration/test_answer_correctness_migration.py: sample_data and the
# factual error cases; docs/concepts/metrics/available_metrics/answer_correctness.md: the super bowl
# example and the Einstein calculation): the response, the reference, and for each the statements
# ragas' generator gives with the classification of its CorrectnessClassifier (1: TP for a response
# statement / present in the answer for a reference one; 0: FP / FN).
RAGAS_CASES: list[tuple[str, str, dict[str, int], dict[str, int]]] = [
    ("The first superbowl was held on Jan 15, 1967", "The first superbowl was held on January 15, 1967",
     {"The first superbowl was held on Jan 15, 1967.": 1}, {"The first superbowl was held on January 15, 1967.": 1}),
    ("Einstein was born in Spain in 1879.", "Einstein was born in 1879 in Germany.",
     {"Einstein was born in Spain.": 0, "Einstein was born in 1879.": 1}, {"Einstein was born in 1879.": 1, "Einstein was born in Germany.": 0}),
    ("In 1879, Einstein was born in Germany.", "Einstein was born in 1879 in Germany.",
     {"Einstein was born in 1879.": 1, "Einstein was born in Germany.": 1}, {"Einstein was born in 1879.": 1, "Einstein was born in Germany.": 1}),
    ("The capital of France is Paris.", "Paris is the capital of France.", {"The capital of France is Paris.": 1}, {"Paris is the capital of France.": 1}),
    ("The sun is powered by nuclear fission reactions.", "The sun is powered by nuclear fusion reactions where hydrogen atoms combine to form helium.",
     {"The sun is powered by nuclear fission reactions.": 0}, {"The sun is powered by nuclear fusion reactions.": 0, "In fusion, hydrogen atoms combine to form helium.": 0}),
    ("Photosynthesis is the process by which plants convert sunlight into energy.",
     "Photosynthesis is the process by which plants use sunlight, carbon dioxide, and water to produce glucose and oxygen using chlorophyll.",
     {"Photosynthesis is the process by which plants convert sunlight into energy.": 1},
     {"Plants use sunlight, carbon dioxide and water in photosynthesis.": 1, "Photosynthesis produces glucose and oxygen.": 0, "Photosynthesis uses chlorophyll.": 0}),
    ("2 + 2 equals 4. This is basic arithmetic.", "2 + 2 = 4", {"2 + 2 equals 4.": 1, "This is basic arithmetic.": 0}, {"2 + 2 = 4.": 1}),
    ("Water boils at 90 degrees Celsius at sea level.", "Water boils at 100 degrees Celsius (212 degrees Fahrenheit) at sea level.",
     {"Water boils at 90 degrees Celsius at sea level.": 0}, {"Water boils at 100 degrees Celsius at sea level.": 0, "Water boils at 212 degrees Fahrenheit at sea level.": 0}),
    ("The capital of Italy is Milan.", "The capital of Italy is Rome.", {"The capital of Italy is Milan.": 0}, {"The capital of Italy is Rome.": 0}),
]
WEIGHTS = [[0.75, 0.25], [0.9, 0.1], [0.1, 0.9], [1.0, 0.0]]


def ragas_score(response_verdicts: list[int], reference_verdicts: list[int], similarity: float, weights: list[float], beta: float = 1.0) -> float:
    """ragas 0.4.3's AnswerCorrectness._ascore on the classification: F-beta by ragas' fbeta_score
    (1.0 where neither text has a statement), 0 similarity for a weight of 0, np.average."""
    tp, fp, fn = sum(response_verdicts), len(response_verdicts) - sum(response_verdicts), len(reference_verdicts) - sum(reference_verdicts)
    if not response_verdicts and not reference_verdicts:
        f1 = 1.0
    else:
        precision = tp / (tp + fp) if tp + fp else 0.0
        recall_ = tp / (tp + fn) if tp + fn else 0.0
        f1 = 0.0 if precision == 0 and recall_ == 0 else (1 + beta**2) * precision * recall_ / (beta**2 * precision + recall_)
    return float(np.average([f1, similarity if weights[1] else 0.0], weights=weights))


@pytest.mark.parametrize("weights", WEIGHTS, ids=[str(w) for w in WEIGHTS])
@pytest.mark.parametrize(("response", "reference", "response_claims", "reference_claims"), RAGAS_CASES, ids=[c[0][:30] for c in RAGAS_CASES])
def test_ragas_cases_score_as_ragas_computes_them(response, reference, response_claims, reference_claims, weights, embedding_model):
    judge = ragas_judge({response: list(response_claims), reference: list(reference_claims)}, {**response_claims, **reference_claims})
    metric = create_metric("answer_correctness", {"statements": "claims", "grader": "judge", "weights": weights})
    score = metric.score_batch([Sample(response=response, reference=reference)], judge)[0]
    expected = ragas_score(list(response_claims.values()), list(reference_claims.values()), ragas_cosine(reference, response), weights)
    assert score.value == pytest.approx(expected, abs=1e-6)
    assert (score.details["tp"], score.details["fp"]) == (sum(response_claims.values()), len(response_claims) - sum(response_claims.values()))
    assert ("similarity" in score.details) == bool(weights[1])


@pytest.mark.parametrize("beta", [0.5, 2.0])
def test_beta_weighs_recall_as_ragas_fbeta_score_does(beta):
    """ragas' photosynthesis case: TP 1, FP 0, FN 2 (precision 1, recall 1/3): F1 0.5, F0.5 0.714, F2 0.385.
    A weight of 0 on the similarity: nothing is embedded."""
    response, reference, response_claims, reference_claims = RAGAS_CASES[5]
    judge = ragas_judge({response: list(response_claims), reference: list(reference_claims)}, {**response_claims, **reference_claims})
    metric = create_metric("answer_correctness", {"statements": "claims", "grader": "judge", "weights": [1.0, 0.0], "beta": beta})
    score = metric.score_batch([Sample(response=response, reference=reference)], judge)[0]
    expected = ragas_score(list(response_claims.values()), list(reference_claims.values()), 0.0, [1.0, 0.0], beta)
    assert expected != pytest.approx(0.5) and score.value == pytest.approx(expected, abs=1e-9)


def test_the_arithmetic_and_the_empty_cases(monkeypatch):
    """Known vectors: cosine 24/25 between the texts. F1 of TP 1, FP 1, FN 1 is 0.5: 0.75 * 0.5 +
    0.25 * 0.96 = 0.615. No statement on either side is F1 1 (ragas); a negative cosine counts 0."""
    vectors = {"Ann wrote it. Bob sang.": [3.0, 4.0], "Ann wrote it. Cy read.": [4.0, 3.0], " ": [1.0, 0.0], "Ann wrote it.": [-1.0, 0.0]}
    calls = embed_as(monkeypatch, vectors)
    judge = ScriptedJudge(lambda m: prompt_fields(m)[1]["statement"] in prompt_fields(m)[1]["document"], calibration=CERTAIN)
    metric = create_metric("answer_correctness", {"grader": "judge"})
    half, empty, opposite = metric.score_batch([
        Sample(response="Ann wrote it. Bob sang.", reference="Ann wrote it. Cy read."), Sample(response="", reference=""), Sample(response="", reference="Ann wrote it."),
    ], judge)
    assert half.value == pytest.approx(0.75 * 0.5 + 0.25 * 0.96, abs=1e-6) and half.details["factuality"] == 0.5 and half.details["similarity"] == 0.96
    assert empty.value == pytest.approx(1.0) and empty.details["factuality"] == 1.0  # ragas: no statements at all -> F1 1, cos(" ", " ") 1
    assert opposite.value == 0.0 and opposite.details["similarity"] == -1.0  # F1 0 (FN 1); cosine -1 counts 0
    assert len(calls) == 1 and len(calls[0]) == 6  # one embedding call for the batch's six texts
    assert "unsupported 'Bob sang.'" in AnswerCorrectness.explain_raw(half.details)
    weightless = create_metric("answer_correctness", {"grader": "judge", "weights": "1,0"}).score_batch([Sample(response="Ann wrote it. Bob sang.", reference="Ann wrote it. Cy read.")], judge)[0]
    assert weightless.value == 0.5 and "similarity" not in weightless.details and len(calls) == 1  # no embedding at all


def test_factual_correctness_verdicts_are_reused_within_a_run(embedding_model):
    sample = {"response": "Ann wrote the book. It sold well.", "reference": "Ann wrote the book in 1990. It sold well."}
    alone = ScriptedJudge(calibration=CERTAIN)
    evaluate([sample], [create_metric("factual_correctness", {"grader": "judge"})], judge=alone)
    both = ScriptedJudge(calibration=CERTAIN)
    run = evaluate([sample], [create_metric("factual_correctness", {"grader": "judge"}), create_metric("answer_correctness", {"grader": "judge"})], judge=both)
    assert len(both.calls) == len(alone.calls) == 4
    usage = run.results[0]["usage"]["answer_correctness"]
    assert usage["reused"] == 4 and usage["calls"] == 0


def test_weights_and_beta_are_checked_as_ragas_checks_them():
    for bad, message in (("0.5", "two weights"), ([0.5, 0.2, 0.3], "two weights"), ("0,0", "non-zero"), ([-0.1, 0.5], "non-negative"), ([True, 1], "number"), ("a,b", "number")):
        with pytest.raises(ConfigError, match=message):
            create_metric("answer_correctness", {"weights": bad})
    with pytest.raises(ConfigError, match="beta"):
        create_metric("answer_correctness", {"beta": 0})
    assert create_metric("answer_correctness", {"weights": "[0.9, 0.1]"}).params.weights == [0.9, 0.1]
    assert create_metric("answer_correctness").params.weights == [0.75, 0.25] and "answer_correctness" not in DEFAULT_METRICS


def test_the_verifier_decides_the_statements_without_a_judge(embedding_model):
    metric = create_metric("answer_correctness", {"grader": "verifier"})
    assert not metric.uses_judge()
    score = metric.score_batch([Sample(response="The Eiffel Tower was completed in 1889.", reference="The Eiffel Tower was completed in 1889.")], None)[0]
    assert score.value == pytest.approx(1.0, abs=1e-6) and score.details["tp"] == 1


def test_the_command_line_runs_it_with_the_verifier(write_jsonl, tmp_path, embedding_model):
    data = write_jsonl([{"id": "a", "response": "Ann wrote the book in 1990.", "reference": "Ann wrote the book in 1990."}])
    run = subprocess.run([sys.executable, "-m", "localeval", "score", str(data), "-m", "answer_correctness", "-m", "semantic_similarity", "--verifier", "-o", str(tmp_path / "out.jsonl"), "-q"],
                         capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    scores = json.loads((tmp_path / "out.jsonl").read_text().splitlines()[1])["scores"]
    assert scores["answer_correctness"] == pytest.approx(1.0, abs=1e-6) and scores["semantic_similarity"] == pytest.approx(1.0, abs=1e-6)
