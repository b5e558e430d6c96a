"""semantic_similarity: the cosine of the response's and the reference's all-MiniLM-L6-v2 embeddings.
ragas parity on ragas' own cases (its formula computed independently, each text embedded alone as
ragas embeds it, an empty text as " "), the threshold, the arithmetic pinned on vectors of known
cosines, a batch embedded in one call, the hand-written cases' file (benchmarks/rag_scorecard.py
ranks them), and no judge anywhere."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from ragas_stand_ins import embed_as, ragas_cosine

from localeval import evaluate
from localeval.data.samples import Sample
from localeval.errors import ConfigError
from localeval.metrics import DEFAULT_METRICS, create_metric
from localeval.metrics.semantic_similarity import SemanticSimilarity

CASES = Path(__file__).parent / "data" / "scorecard_cases.jsonl"

# ragas' cases (tests/e2e/metrics_migration/test_semantic_similarity_migration.py: sample_data and
# the threshold cases; the example of docs/concepts/metrics/available_metrics/semantic_similarity.md).
RAGAS_CASES: list[tuple[str, str, float | None]] = [
    ("Paris is the capital of France.", "The capital of France is Paris.", None),
    ("Python is a high-level programming language known for its simplicity and readability.", "Python is a programming language that emphasizes code readability.", None),
    ("Machine learning is a subset of artificial intelligence.", "Deep learning uses neural networks with multiple layers.", None),
    ("The quick brown fox jumps over the lazy dog.", "A slow red cat walks under the active mouse.", None),
    ("", "Some response text", None),
    ("Paris is the capital of France.", "The capital of France is Paris.", 0.9),
    ("Machine learning is a subset of artificial intelligence.", "Deep learning uses neural networks.", 0.5),
    ("The Eiffel Tower is located in Paris. It has a height of 1000ft.", "The Eiffel Tower is located in Paris.", None),
]


def ragas_score(reference: str, response: str, threshold: float | None) -> float:
    """ragas 0.4.3's SemanticSimilarity._ascore: each text embedded alone (an empty one as " "),
    normalised, their dot product, then `score >= threshold` when a threshold is set."""
    score = ragas_cosine(reference, response)
    return float(score >= threshold) if threshold else score


@pytest.mark.parametrize(("reference", "response", "threshold"), RAGAS_CASES, ids=[f"{c[1][:24]}-{c[2]}" for c in RAGAS_CASES])
def test_ragas_cases_score_as_ragas_computes_them(reference, response, threshold, embedding_model):
    options = {"threshold": threshold} if threshold else {}
    result = evaluate([{"response": response, "reference": reference}], [create_metric("semantic_similarity", options)]).results[0]
    expected = ragas_score(reference, response, threshold)
    assert expected >= 0  # MiniLM gives these pairs no negative cosine: ragas' value is localeval's
    assert result["scores"]["semantic_similarity"] == pytest.approx(expected, abs=1e-6)
    assert result["details"]["semantic_similarity"]["cosine"] == pytest.approx(ragas_score(reference, response, None), abs=1e-4)


def test_a_paraphrase_is_closer_than_another_topic(embedding_model):
    rows = evaluate([{"response": r, "reference": ref} for ref, r, _ in RAGAS_CASES[:4]], ["semantic_similarity"]).results
    scores = [row["scores"]["semantic_similarity"] for row in rows]
    assert scores[0] > 0.9 and scores[0] > scores[2] and scores[0] > scores[3]


def test_the_arithmetic_on_vectors_whose_cosines_are_known(monkeypatch):
    """Embeddings replaced by vectors of known cosines: (3, 4, 0) with (4, 3, 0) -> 24/25, with
    (0, 0, 2) -> 0, with (-3, -4, 0) -> -1, which scores 0 (ragas would report -1); " " is what an
    empty text is embedded as. One embedding call for the whole batch, each pair a group in it."""
    vectors = {"a": [3.0, 4.0, 0.0], "near": [4.0, 3.0, 0.0], "orthogonal": [0.0, 0.0, 2.0], "opposite": [-3.0, -4.0, 0.0], " ": [3.0, 4.0, 0.0]}
    calls = embed_as(monkeypatch, vectors)
    metric = create_metric("semantic_similarity")
    samples = [Sample(response=r, reference="a") for r in ("near", "orthogonal", "opposite", "")]
    scores = metric.score_batch(samples, None)
    assert [s.value for s in scores] == pytest.approx([0.96, 0.0, 0.0, 1.0], abs=1e-7)
    assert [s.details["cosine"] for s in scores] == [0.96, 0.0, -1.0, 1.0]
    assert calls == [["near", "a", "orthogonal", "a", "opposite", "a", " ", "a"]]  # each sample's pair a group
    binary = create_metric("semantic_similarity", {"threshold": "0.96"}).score_batch(samples, None)
    assert [s.value for s in binary] == [1.0, 0.0, 0.0, 1.0] and binary[0].details["threshold"] == 0.96
    assert "at least the threshold 0.96" in SemanticSimilarity.explain_raw(binary[0].details)
    assert "below the threshold" in SemanticSimilarity.explain_raw(binary[1].details)


def test_options_no_judge_and_named_to_run():
    for bad in (0, 0.0, -0.1, 1.5, True, "high"):
        with pytest.raises(ConfigError, match="threshold"):
            create_metric("semantic_similarity", {"threshold": bad})
    metric = create_metric("semantic_similarity")
    assert not metric.uses_judge() and not SemanticSimilarity.needs_judge and "semantic_similarity" not in DEFAULT_METRICS


def test_the_hand_written_cases_file_holds_every_kind_of_each_metric():
    rows = [json.loads(line) for line in CASES.read_text().splitlines() if line.strip()]
    kinds: dict[str, dict[str, list[str]]] = {}
    for row in rows:
        Sample.model_validate({k: v for k, v in row.items() if k not in ("metric", "group", "kind")})
        kinds.setdefault(row["metric"], {}).setdefault(row["group"], []).append(row["kind"])
    expected = {
        "semantic_similarity": ["paraphrase", "related", "unrelated"],
        "answer_correctness": ["exact", "half", "wrong"],
        "context_entity_recall": ["all", "half", "none"],
        "noise_sensitivity": ["copied_noise", "faithful"],
    }
    assert set(kinds) == set(expected)
    for metric, groups in kinds.items():
        assert groups and all(sorted(found) == expected[metric] for found in groups.values()), metric


def test_a_samples_cosine_does_not_depend_on_the_batch_it_came_in(embedding_model):
    """The runner sizes batches by time, so the same file is batched differently from run to run:
    a sample's cosine must be the same bits alone, beside six others or beside all (a matrix
    product's sums for one row depend on the rows beside it)."""
    from localeval.metrics.semantic_similarity import pair_cosines

    left = [f"Museum {i} opened in {1900 + i}." + " It has many rooms." * (i % 4) for i in range(30)]
    right = [f"The museum number {i} is old." * (1 + i % 3) for i in range(30)]
    together = pair_cosines(left, right)
    in_sevens = [cosine for start in range(0, 30, 7) for cosine in pair_cosines(left[start : start + 7], right[start : start + 7])]
    alone = [pair_cosines([a], [b])[0] for a, b in zip(left, right)]
    assert together == in_sevens == alone
