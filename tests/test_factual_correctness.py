"""factual_correctness: the response's statements against the reference and the reference's against the
response, decided by faithfulness' and context_recall's engine. ragas parity on ragas' own cases (a
scripted judge answering as ragas' LLM would: its claims, its NLI verdicts) in every mode, ragas'
zero cases (no NaN), the cost of each mode, verdicts that never read the question, statements
split or decomposed once per text for all the metrics of a run, the verifier, the command line."""

from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pytest
from ragas_stand_ins import CERTAIN, ragas_judge

from localeval import evaluate
from localeval.data import text
from localeval.data.samples import Sample
from localeval.errors import ConfigError
from localeval.metrics import DEFAULT_METRICS, create_metric
from localeval.metrics.factual_correctness import FactualCorrectness, factual_score
from localeval.testing import ScriptedJudge, prompt_fields

EINSTEIN_REFERENCE = "Albert Einstein was born in Ulm, Germany on March 14, 1879."

# ragas' cases (tests/e2e/metrics_migration/test_factual_correctness_migration.py, and the example
# of docs/concepts/metrics/available_metrics/factual_correctness.md): the response and reference;
# the claims ragas' ClaimDecompositionPrompt gives for each, with ragas' NLI verdict for each claim
# against the other text.
RAGAS_CASES: list[tuple[str, str, dict[str, int], dict[str, int]]] = [
    (
        "Einstein was born in Germany on 14th March 1879.", EINSTEIN_REFERENCE,
        {"Einstein was born in Germany.": 1, "Einstein was born on 14th March 1879.": 1},
        {"Albert Einstein was born in Ulm, Germany.": 0, "Albert Einstein was born on March 14, 1879.": 1},
    ),
    (
        "Einstein was born in France on 14th March 1879.", EINSTEIN_REFERENCE,
        {"Einstein was born in France.": 0, "Einstein was born on 14th March 1879.": 1},
        {"Albert Einstein was born in Ulm, Germany.": 0, "Albert Einstein was born on March 14, 1879.": 1},
    ),
    (
        "The first superbowl was held on Jan 15, 1967.", "The First AFL–NFL World Championship Game was played on January 15, 1967.",
        {"The first superbowl was held on Jan 15, 1967.": 1},
        {"The First AFL–NFL World Championship Game was played on January 15, 1967.": 1},
    ),
    (
        "Photosynthesis converts sunlight into energy and produces oxygen.",
        "Photosynthesis is the process by which plants convert sunlight into energy and produce oxygen as a byproduct.",
        {"Photosynthesis converts sunlight into energy.": 1, "Photosynthesis produces oxygen.": 1},
        {"Photosynthesis is the process by which plants convert sunlight into energy.": 1, "Photosynthesis produces oxygen as a byproduct.": 1},
    ),
    (
        "Newton discovered gravity when an apple fell on his head.",
        "Newton developed his theory of universal gravitation, though the apple story is likely apocryphal.",
        {"Newton discovered gravity.": 1, "An apple fell on Newton's head.": 0},
        {"Newton developed his theory of universal gravitation.": 1, "The apple story about Newton is likely apocryphal.": 0},
    ),
    (
        "The Eiffel Tower is located in Paris.", "The Eiffel Tower is located in Paris. I has a height of 1000ft.",
        {"The Eiffel Tower is located in Paris.": 1},
        {"The Eiffel Tower is located in Paris.": 1, "The Eiffel Tower has a height of 1000ft.": 0},
    ),
    (
        "Einstein was a physicist born in Germany.",
        "Albert Einstein was a German-born theoretical physicist who developed the theory of relativity.",
        {"Einstein was a physicist.": 1, "Einstein was born in Germany.": 1},
        {"Albert Einstein was a German-born theoretical physicist.": 1, "Albert Einstein developed the theory of relativity.": 0},
    ),
]


def ragas_score(mode: str, response_verdicts: list[int], reference_verdicts: list[int], beta: float = 1.0) -> float:
    """ragas 0.4.3's FactualCorrectness._single_turn_ascore on the verdicts, with its utils.fbeta_score."""
    reference_response = np.array(response_verdicts, dtype=bool)
    response_reference = np.array(reference_verdicts if mode != "precision" else [], dtype=bool)
    tp, fp = sum(reference_response), sum(~reference_response)
    fn = sum(~response_reference) if mode != "precision" else 0
    if mode == "precision":
        score = tp / (tp + fp + 1e-8)
    elif mode == "recall":
        score = tp / (tp + fn + 1e-8)
    else:
        precision = 0 if tp + fp == 0 else tp / (tp + fp)
        recall_ = 0 if tp + fn == 0 else tp / (tp + fn)
        score = 0.0 if precision == 0 and recall_ == 0 else (1 + beta**2) * precision * recall_ / (beta**2 * precision + recall_)
    return float(np.round(score, 2))


@pytest.mark.parametrize("mode", ["f1", "precision", "recall"])
@pytest.mark.parametrize(("response", "reference", "response_claims", "reference_claims"), RAGAS_CASES, ids=[c[0][:30] for c in RAGAS_CASES])
def test_ragas_cases_score_as_ragas_computes_them(mode, response, reference, response_claims, reference_claims):
    judge = ragas_judge({response: list(response_claims), reference: list(reference_claims)}, {**response_claims, **reference_claims})
    metric = create_metric("factual_correctness", {"mode": mode, "statements": "claims", "verifier": False})
    score = metric.score_batch([Sample(response=response, reference=reference)], judge)[0]
    assert score.value == ragas_score(mode, list(response_claims.values()), list(reference_claims.values()))
    assert [v["attributed"] for v in score.details["response_statements"]] == list(response_claims.values())
    if mode == "precision":  # ragas decomposes and checks the reference only for recall and f1
        assert "reference_statements" not in score.details and "fn" not in score.details
        assert all(prompt_fields(call)[1].get("document", reference) == reference for call in judge.calls)


def test_ragas_docs_example_by_hand():
    """response "The Eiffel Tower is located in Paris."; reference: that, and a height of 1000ft.
    TP 1, FP 0, FN 1: precision 1.0, recall 0.5, F1 2/3 -> 0.67."""
    response, reference, response_claims, reference_claims = RAGAS_CASES[5]
    judge = ragas_judge({response: list(response_claims), reference: list(reference_claims)}, {**response_claims, **reference_claims})
    scores = {
        mode: create_metric("factual_correctness", {"mode": mode, "statements": "claims", "verifier": False}).score_batch([Sample(response=response, reference=reference)], judge)[0].value
        for mode in ("precision", "recall", "f1")
    }
    assert scores == {"precision": 1.0, "recall": 0.5, "f1": 0.67}


def test_ragas_zero_cases_are_0_never_nan():
    assert factual_score("precision", 0, 0, 0) == 0.0  # no response statement: 0 / 1e-8
    assert factual_score("recall", 0, 0, 3) == 0.0
    assert factual_score("f1", 0, 0, 0) == 0.0 and factual_score("f1", 0, 2, 2) == 0.0
    assert factual_score("f1", 2, 0, 0) == 1.0 and factual_score("recall", 2, 0, 0) == 1.0
    assert factual_score("f1", 1, 0, 3, beta=2.0) == round(5 * 1 * 0.25 / (4 * 1 + 0.25), 2)
    judge = ScriptedJudge(calibration=CERTAIN)
    empty = create_metric("factual_correctness", {"verifier": False}).score_batch([Sample(response="", reference="Ann wrote the book.")], judge)[0]
    assert empty.value == 0.0 and empty.details["tp"] == empty.details["fp"] == 0 and empty.details["response_statements"] == []
    nothing = ScriptedJudge(lambda m: 0.0, calibration=CERTAIN)
    unsupported = create_metric("factual_correctness", {"verifier": False}).score_batch([Sample(response="Bob wrote it.", reference="Ann wrote the book.")], nothing)[0]
    assert unsupported.value == 0.0 and unsupported.details["tp"] == 0 and unsupported.details["fn"] == 1


def test_each_mode_judges_only_what_its_counts_need():
    sample = Sample(response="Ann wrote the book. It sold well.", reference="Ann wrote the book in 1990. It won a prize. It sold well.")
    calls = {}
    for mode in ("precision", "f1"):
        judge = ScriptedJudge(calibration=CERTAIN)
        create_metric("factual_correctness", {"mode": mode, "verifier": False}).score_batch([sample], judge)
        calls[mode] = len(judge.calls)
    assert calls == {"precision": 2, "f1": 5}  # one verdict per statement: the response's 2, then the reference's 3


def test_the_question_never_reaches_a_verdict():
    judge = ScriptedJudge(calibration=CERTAIN)
    metric = create_metric("factual_correctness", {"verifier": False})
    for question in [None, "", "Who wrote the book, and when?"]:
        metric.score_batch([Sample(user_input=question, response="Ann wrote it.", reference="Ann wrote the book in 1990.")], judge)
    assert len(judge.calls) == 6 and judge.calls[0:2] == judge.calls[2:4] == judge.calls[4:6]
    assert "Who wrote the book" not in json.dumps(judge.calls)


def test_a_reason_names_the_text_a_statement_is_read_against():
    nothing = ScriptedJudge(lambda m: 0.0, calibration=CERTAIN)
    score = create_metric("factual_correctness", {"verifier": False}).score_batch([Sample(response="Bob sang it.", reference="Ann wrote the book.")], nothing)[0]
    assert "the reference never mentions 'bob'" in score.details["response_statements"][0]["reason"]
    assert "the response never mentions 'ann'" in score.details["reference_statements"][0]["reason"]
    assert "unsupported 'Bob sang it.'" in FactualCorrectness.explain_raw(score.details)


def test_statements_are_split_once_for_every_metric_that_reads_the_text(monkeypatch):
    seen: list[str] = []
    real = text._segments

    def counting(piece: str, language: str):
        seen.append(piece)
        return real(piece, language)

    monkeypatch.setattr(text, "_segments", counting)
    text._split.cache_clear()
    sample = {"user_input": "q", "retrieved_contexts": ["Zoe painted the mural in 2003, a test of splitting once."],
              "reference": "Zoe painted the mural in 2003, the reference once.", "response": "The mural, a response split once, faces the harbour."}
    metrics = [create_metric(n, {"verifier": False}) for n in ("context_recall", "faithfulness", "factual_correctness")]
    evaluate([sample], metrics, judge=ScriptedJudge(calibration=CERTAIN))
    assert seen.count(sample["response"]) == 1 and seen.count(sample["reference"]) == 1


def test_claims_are_decomposed_once_per_text_for_every_metric():
    sample = {"user_input": "q", "retrieved_contexts": ["Ann wrote the book."], "reference": "Ann wrote it, the reference.", "response": "Ann wrote it, the response."}
    judge = ScriptedJudge(lambda m: 1.0, lambda messages, schema: {"claims": ["Ann wrote it."]}, calibration=CERTAIN)
    metrics = [create_metric(n, {"verifier": False, "statements": "claims"}) for n in ("context_recall", "faithfulness", "factual_correctness")]
    results = evaluate([sample], metrics, judge=judge).results[0]
    decompositions = [call for call in judge.calls if prompt_fields(call)[0] == "other"]
    assert len(decompositions) == 2  # the reference once, the response once
    assert results["usage"]["factual_correctness"]["reused"] == 2


def test_the_verifier_decides_without_a_judge_or_the_question():
    metric = create_metric("factual_correctness", {"verifier": True})
    assert not metric.uses_judge() and not create_metric("factual_correctness", {"verifier": True, "statements": "sentences"}).uses_judge()
    base = Sample(response="The Eiffel Tower was completed in 1889. It is made of chocolate.", reference="The Eiffel Tower was completed on 31 March 1889.")
    seen = set()
    for question in ["", "When was the Eiffel Tower completed?"]:
        score = metric.score_batch([base.model_copy(update={"user_input": question})], None)[0]
        seen.add((score.value, tuple(v["probability"] for v in score.details["response_statements"])))
    assert len(seen) == 1
    value, _ = seen.pop()
    assert value == 0.5  # 1889 supported, chocolate not (TP 1, FP 1); the reference's date is not in the response (FN 1)


def test_options_and_calibration_are_checked():
    with pytest.raises(ConfigError, match="mode"):
        create_metric("factual_correctness", {"mode": "accuracy"})
    with pytest.raises(ConfigError, match="beta"):
        create_metric("factual_correctness", {"beta": 0})
    with pytest.raises(ConfigError, match="calibration 'attribution'"):
        create_metric("factual_correctness").check_calibration({"attribution": {"intercept": 0.0, "weights": {"judge": 1.0}}})
    assert "factual_correctness" not in DEFAULT_METRICS


def test_the_command_line_verifier_covers_it(write_jsonl, tmp_path):
    data = write_jsonl([{"id": "a", "response": "Ann wrote the book in 1990.", "reference": "Ann wrote the book in 1990."}, {"id": "b", "user_input": "q"}])
    out = tmp_path / "out.jsonl"
    run = subprocess.run([sys.executable, "-m", "localeval", "score", str(data), "-m", "factual_correctness", "--verifier", "-o", str(out), "-q"],
                         capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    header, first, second = (json.loads(line) for line in out.read_text().splitlines())
    assert header["run"]["metrics"]["factual_correctness"]["grader"] == "verifier" and header["run"]["judge"] is None
    assert first["scores"]["factual_correctness"] == 1.0
    assert "missing required field 'response', 'reference'" in second["errors"]["factual_correctness"]


def test_the_real_small_judge_gives_faithfulness_verdicts_with_the_reference_as_evidence(small_judge):
    """The same engine: a response statement's verdict against the reference is faithfulness'
    verdict with the reference as the retrieved context."""
    reference, response = "The tower in Paris was completed on 31 March 1889.", "The tower was completed in 1889."
    ours = create_metric("factual_correctness", {"verifier": False, "mode": "precision"}).score_batch([Sample(response=response, reference=reference)], small_judge)[0]
    theirs = create_metric("faithfulness", {"verifier": False}).score_batch([Sample(user_input="", retrieved_contexts=[reference], response=response)], small_judge)[0]
    keys = ("statement", "attributed", "probability", "judge_log_odds", "features")
    assert [{k: v[k] for k in keys} for v in ours.details["response_statements"]] == [{k: v[k] for k in keys} for v in theirs.details["statements"]]
    assert ours.value == round(theirs.value, 2)
