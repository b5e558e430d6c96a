import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from rapidfuzz import distance, fuzz

from localeval.data.samples import Sample
from localeval.metrics import create_metric
from localeval.metrics.string_recall import MEASURES


def nonllm(retrieved, references, **options):
    metric = create_metric("nonllm_context_recall", options)
    return metric.score_batch([Sample(retrieved_contexts=retrieved, reference_contexts=references)], None)[0]


def test_ragas_documented_example():
    score = nonllm(
        ["Paris is the capital of France."],
        ["Paris is the capital of France.", "The Eiffel Tower is one of the most famous landmarks in Paris."],
    )
    assert score.value == 0.5
    first, second = score.details["references"]
    assert first == {"best_index": 0, "similarity": 1.0, "recalled": True}
    assert second["recalled"] is False


def test_threshold_is_strictly_greater():
    # "abcd" vs "abxy": Levenshtein distance 2 of 4 -> similarity exactly 0.5, not recalled.
    assert nonllm(["abcd"], ["abxy"]).value == 0.0
    assert nonllm(["abcd"], ["abxy"], threshold=0.49).value == 1.0


def test_no_reference_contexts_is_nan():
    assert math.isnan(nonllm(["a"], []).value)


def test_nothing_retrieved_is_zero_not_a_crash():
    score = nonllm([], ["a", "b"])
    assert score.value == 0.0
    assert score.details["references"][0] == {"best_index": None, "similarity": None, "recalled": False}


def test_best_retrieved_index_is_reported():
    score = nonllm(["unrelated text here", "the cat sat on the mat"], ["the cat sat on a mat"])
    assert score.details["references"][0]["best_index"] == 1


def test_long_chunk_containing_the_reference_verbatim():
    reference = "The Eiffel Tower was completed on 31 March 1889."
    chunk = "Paris has many landmarks and museums. " * 5 + reference + " It is 330 metres tall and made of iron."
    assert nonllm([chunk], [reference]).value == 0.0  # Levenshtein calls it a miss, as ragas does
    assert nonllm([chunk], [reference], measure="partial_ratio").value == 1.0
    assert nonllm([chunk], [reference], measure="partial_ratio").details["references"][0]["similarity"] == 1.0
    assert nonllm([chunk], [reference], measure="token_set_ratio").value == 1.0


def test_partial_ratio_refuses_a_pair_too_long_to_compare_and_scores_the_other_samples():
    long_reference = "the river rose in spring " * 100  # 2,500 characters, like the chunk below but not inside it
    chunk = "a court said the year was dry " * 100
    metric = create_metric("nonllm_context_recall", {"measure": "partial_ratio"})
    too_long, short, contained = metric.score_batch(
        [
            Sample(retrieved_contexts=[chunk], reference_contexts=[long_reference]),
            Sample(retrieved_contexts=["the cat sat"], reference_contexts=["the cat"]),
            Sample(retrieved_contexts=[chunk + long_reference], reference_contexts=[long_reference]),  # verbatim: decided without the kernel
        ],
        None,
    )
    assert too_long.value is None
    assert "at most 2,000 characters" in too_long.error and "reference context #0 (2,500)" in too_long.error
    assert short.value == 1.0 and contained.value == 1.0
    raised = nonllm([chunk[:2100]], [long_reference[:2100]], measure="partial_ratio", partial_ratio_max_chars=3000)
    assert raised.error is None and raised.value == 0.0


@pytest.mark.parametrize("measure", sorted(MEASURES))
def test_each_measure_equals_rapidfuzz_directly(measure):
    retrieved = ["the quick brown fox", "jumps over the lazy dog", ""]
    reference = "a quick brown dog"
    direct = {
        "levenshtein": lambda a, b: 1 - distance.Levenshtein.normalized_distance(a, b),
        "hamming": lambda a, b: 1 - distance.Hamming.normalized_distance(a, b),
        "jaro": lambda a, b: 1 - distance.Jaro.normalized_distance(a, b),
        "jaro_winkler": lambda a, b: 1 - distance.JaroWinkler.normalized_distance(a, b),
        "indel": lambda a, b: 1 - distance.Indel.normalized_distance(a, b),
        "partial_ratio": lambda a, b: fuzz.partial_ratio(a, b) / 100,
        "token_set_ratio": lambda a, b: fuzz.token_set_ratio(a, b) / 100,
    }[measure]
    expected = max(direct(r, reference) for r in retrieved)
    assert nonllm(retrieved, [reference], measure=measure, exact_similarity=True).details["references"][0]["similarity"] == expected


@pytest.mark.parametrize("measure", sorted(MEASURES))
def test_identical_blank_texts_score_as_rapidfuzz_scores_them(measure):
    """Two identical texts are 1.0 without the kernel only where rapidfuzz says so: token_set_ratio
    gives two blank texts 0 (no word in common), so a blank reference is not recalled by a blank context."""
    scorer, is_distance = MEASURES[measure]
    texts = ["", " ", "\t\n", "\u2003", "\xa0", "a"]
    for reference in texts:
        expected = max((1 - scorer(r, reference, processor=None)) if is_distance else scorer(r, reference, processor=None) / 100 for r in texts)
        for threshold in (0.0, 0.5):
            got = nonllm(texts, [reference], measure=measure, threshold=threshold, exact_similarity=True)
            assert got.details["references"][0]["similarity"] == expected, (reference, measure)
            assert got.value == float(expected > threshold)
            fast = nonllm(texts, [reference], measure=measure, threshold=threshold)
            assert fast.value == got.value


@pytest.mark.parametrize("measure", sorted(MEASURES))
@pytest.mark.parametrize("threshold", [0.3, 0.5, 0.8])
def test_early_stopping_kernel_gives_the_same_scores_as_the_exact_one(measure, threshold):
    import random

    rng = random.Random(7)
    words = ["alpha", "beta", "gamma", "delta", "epsilon", "zeta", "eta"]
    texts = [" ".join(rng.choices(words, k=rng.randint(1, 12))) for _ in range(40)]
    samples = [Sample(retrieved_contexts=rng.sample(texts, 4), reference_contexts=rng.sample(texts, 3)) for _ in range(60)]
    fast = create_metric("nonllm_context_recall", {"measure": measure, "threshold": threshold}).score_batch(samples, None)
    exact = create_metric("nonllm_context_recall", {"measure": measure, "threshold": threshold, "exact_similarity": True}).score_batch(samples, None)
    assert [f.value for f in fast] == [e.value for e in exact]
    for f, e in zip(fast, exact):
        for quick, full in zip(f.details["references"], e.details["references"]):
            assert quick["recalled"] == full["recalled"]
            if quick["similarity"] is None:
                assert full["similarity"] <= threshold  # stopped early: at most the threshold
            else:
                assert quick["similarity"] == full["similarity"]


def test_a_batch_scores_like_its_samples_one_by_one():
    metric = create_metric("nonllm_context_recall")
    samples = [
        Sample(retrieved_contexts=["alpha beta", "gamma"], reference_contexts=["alpha beta!", "delta", "gamma"]),
        Sample(retrieved_contexts=[], reference_contexts=["x"]),
        Sample(retrieved_contexts=["x"], reference_contexts=[]),
        Sample(retrieved_contexts=["one", "two", "three"], reference_contexts=["two"]),
    ]
    together = metric.score_batch(samples, None)
    alone = [metric.score_batch([s], None)[0] for s in samples]
    assert [s.details for s in together] == [s.details for s in alone]
    assert [repr(s.value) for s in together] == [repr(s.value) for s in alone]


def test_bad_options_are_config_errors():
    from localeval.errors import ConfigError

    with pytest.raises(ConfigError, match="measure"):
        create_metric("nonllm_context_recall", {"measure": "cosine"})
    with pytest.raises(ConfigError, match="threshold"):
        create_metric("nonllm_context_recall", {"threshold": "2"})
    with pytest.raises(ConfigError, match="unknown metric 'nope'"):
        create_metric("nope")


def brute_force(retrieved, references, measure, threshold):
    """Every pair in full, as ragas computes it: the best similarity, its first index, recalled when > threshold."""
    from localeval.metrics.string_recall import MEASURES

    scorer, is_distance = MEASURES[measure]
    out = []
    for reference in references:
        values = [(1.0 - scorer(r, reference, processor=None)) if is_distance else scorer(r, reference, processor=None) / 100 for r in retrieved]
        best = max(range(len(values)), key=lambda i: (values[i], -i)) if values else None
        out.append((best, values[best] if values else None, bool(values) and values[best] > threshold))
    return out


texts = st.sampled_from(["", "a", "abc", "abd", "the tower", "the tower was built", "x" * 40, "the tower was built in 1889 by eiffel", "tower the"]) | st.text(alphabet="abc ", max_size=30)


@settings(max_examples=300, deadline=None)
@given(
    retrieved=st.lists(texts, max_size=5),
    references=st.lists(texts, max_size=4),
    measure=st.sampled_from(["levenshtein", "indel", "jaro", "jaro_winkler", "hamming"]),
    threshold=st.sampled_from([0.0, 0.3, 0.5, 0.7, 0.9]),
)
def test_skipped_pairs_never_change_a_score_or_a_recalled_reference(retrieved, references, measure, threshold):
    """Identical pairs decide their reference and length-bounded pairs are not computed: the
    scores, the recalled references and every similarity reported equal the brute force."""
    sample = Sample(retrieved_contexts=retrieved, reference_contexts=references)
    expected = brute_force(retrieved, references, measure, threshold)
    for exact in (True, False):
        metric = create_metric("nonllm_context_recall", {"measure": measure, "threshold": threshold, "exact_similarity": exact})
        got = metric.score_batch([sample], None)[0]
        if not references:
            assert math.isnan(got.value)
            continue
        assert got.value == sum(r for _, _, r in expected) / len(references)
        for found, (best, value, recalled) in zip(got.details["references"], expected):
            assert found["recalled"] == recalled
            if found["similarity"] is not None:
                assert found["similarity"] == value and found["best_index"] == best
            else:
                assert not exact or not retrieved  # only the early-stopping path may leave it unknown
                assert value is None or value <= threshold
