"""nonllm_context_precision and id_context_precision: ragas' definitions and edge cases, bad
input, and the two metrics through the CLI, the config file, the API, resume and the reports."""

import json
import math
import random

import pytest
from click.testing import CliRunner
from conftest import result_rows
from hypothesis import given, settings
from hypothesis import strategies as st

from localeval import evaluate
from localeval.cli import cli
from localeval.data.samples import Sample
from localeval.errors import ConfigError
from localeval.metrics import REGISTRY, create_metric
from localeval.metrics.ranking import average_precision
from localeval.metrics.string_recall import MEASURES
from localeval.testing import assert_metric

PRECISION = ["-m", "nonllm_context_precision", "-m", "id_context_precision"]
GOOD = {
    "id": "s1",
    "retrieved_contexts": ["Rome is in Italy.", "Paris is the capital of France."],
    "reference_contexts": ["Paris is the capital of France.", "The Eiffel Tower is one of the most famous landmarks in Paris."],
    "retrieved_context_ids": ["doc_2", "doc_1", "doc_1", 7],
    "reference_context_ids": ["doc_1", "7"],
}


def precision(retrieved, references, **options):
    metric = create_metric("nonllm_context_precision", options)
    return metric.score_batch([Sample(retrieved_contexts=retrieved, reference_contexts=references)], None)[0]


def ids(retrieved, references):
    return create_metric("id_context_precision").score_batch([Sample(retrieved_context_ids=retrieved, reference_context_ids=references)], None)[0]


def ragas_average_precision(verdicts):
    """ragas 0.4.3's _calculate_average_precision, as its source computes it (epsilon included)."""
    numerator = sum((sum(verdicts[: i + 1]) / (i + 1)) * verdicts[i] for i in range(len(verdicts)))
    return numerator / (sum(verdicts) + 1e-10)


@pytest.mark.parametrize("verdicts", [[1], [0], [], [1, 0, 1], [0, 1, 1], [0, 0, 0, 1], [1, 1, 1, 1], [1, 0, 0, 0, 0, 1]])
def test_average_precision_is_ragas_formula_without_its_epsilon(verdicts):
    ours = average_precision(bool(v) for v in verdicts)
    assert ours == pytest.approx(ragas_average_precision(verdicts), abs=1e-9)
    assert ours == (1.0 if verdicts and all(verdicts) else ours)  # a perfect ranking is exactly 1, so a threshold of 1.0 passes
    assert average_precision([False, True, True]) == (1 / 2 + 2 / 3) / 2


def test_ragas_documented_example_and_best_reference():
    score = precision(
        ["The Eiffel Tower is located in Paris."],
        ["Paris is the capital of France.", "The Eiffel Tower is one of the most famous landmarks in Paris."],
    )
    assert score.value == 1.0  # ragas' docs: 0.9999999999 (its epsilon)
    (match,) = score.details["retrieved"]
    assert match["best_reference"] == 1 and match["relevant"] is True and 0.5 <= match["similarity"] < 1


def test_ranks_matter_and_the_threshold_is_inclusive():
    assert precision(["zzzz", "abcd"], ["abcd"]).value == 0.5  # relevant at rank 2 only: precision@2 = 1/2
    # "abcd" vs "abxy": Levenshtein similarity exactly 0.5: relevant (ragas: >=), where recall needs > 0.5
    assert precision(["abcd"], ["abxy"]).value == 1.0
    assert precision(["abcd"], ["abxy"], threshold=0.51).value == 0.0
    # lengths 2 and 4: the length bound alone is exactly 0.5, and so is the similarity: relevant, not skipped
    assert precision(["ab"], ["abcd"]).details["retrieved"] == [{"best_reference": 0, "similarity": 0.5, "relevant": True}]
    assert create_metric("nonllm_context_recall").score_batch([Sample(retrieved_contexts=["abcd"], reference_contexts=["abxy"])], None)[0].value == 0.0


def test_edge_cases_as_ragas_scores_them():
    nothing = precision([], ["a reference"])
    assert nothing.value == 0.0 and nothing.details == {"retrieved": []}  # ragas: 0 (empty sum over its epsilon)
    both_empty = precision([], [])
    assert both_empty.value == 0.0
    # ragas raises here (max() of an empty list); localeval: nothing can be relevant, 0, as its formula gives for none relevant
    no_references = precision(["a", "b"], [])
    assert no_references.value == 0.0 and no_references.error is None
    assert no_references.details["retrieved"] == [{"best_reference": None, "similarity": None, "relevant": False}] * 2
    assert precision(["x" * 30, "y" * 30], ["abc"]).value == 0.0  # none relevant: 0, not NaN


def test_explanation_is_one_line_with_matches_and_misses():
    explain = REGISTRY["nonllm_context_precision"].explain_raw
    line = explain(precision(["zzzz", "abcd", "abce"], ["abcd"]).details)
    assert line == "2 of 3 retrieved contexts relevant: #1 (reference #0, 1.00), #2 (reference #0, 0.75); not relevant: #0 (no close match)"
    assert explain(precision([], ["a"]).details) == "nothing retrieved"
    assert explain(precision(["zzzz", "abcd"], ["x" * 9]).details) == "none of the 2 retrieved contexts relevant: #0 (no close match), #1 (no close match)"
    many = explain(precision([f"text {i}" for i in range(6)], ["text 1"], threshold=0.9).details)
    assert many.startswith("1 of 6 retrieved contexts relevant: #1 (reference #0, 1.00); not relevant: #0 (") and many.endswith(" and 2 more")
    assert "\n" not in explain(precision([f"text {i}" for i in range(9)], ["text 1", "text 2"], exact_similarity=True).details)


def brute_force(retrieved, references, measure, threshold):
    """Every pair in full, as ragas computes it: per retrieved context its best reference, relevant when >= threshold.
    Every pair is rapidfuzz's, identical ones too (token_set_ratio gives two blank texts 0)."""
    scorer, is_distance = MEASURES[measure]

    def similarity(a, b):
        return (1.0 - scorer(a, b, processor=None)) if is_distance else scorer(a, b, processor=None) / 100

    out = []
    for context in retrieved:
        values = [similarity(context, r) for r in references]
        best = max(range(len(values)), key=lambda i: (values[i], -i)) if values else None
        out.append((best, values[best] if values else None, bool(values) and values[best] >= threshold))
    return out


texts = st.sampled_from(["", "a", "abc", "abd", "abxy", "abcd", "the tower", "the tower was built", "x" * 40, "tower the"]) | st.text(alphabet="abc ", max_size=30)


@settings(max_examples=300, deadline=None)
@given(
    retrieved=st.lists(texts, max_size=5),
    references=st.lists(texts, max_size=4),
    measure=st.sampled_from(sorted(MEASURES)),
    threshold=st.sampled_from([0.0, 0.3, 0.5, 0.7, 0.75, 0.9, 1.0]),
)
def test_every_measure_equals_the_brute_force(retrieved, references, measure, threshold):
    """Skipped pairs (identical ones, length bounds, the kernel's early stop) never change a verdict,
    a score or a reported similarity, at thresholds a pair can sit exactly on (0.5, 0.75)."""
    sample = Sample(retrieved_contexts=retrieved, reference_contexts=references)
    expected = brute_force(retrieved, references, measure, threshold)
    for exact in (True, False):
        got = create_metric("nonllm_context_precision", {"measure": measure, "threshold": threshold, "exact_similarity": exact}).score_batch([sample], None)[0]
        assert got.value == average_precision(relevant for _, _, relevant in expected)
        for found, (best, value, relevant) in zip(got.details["retrieved"], expected, strict=True):
            assert found["relevant"] == relevant
            if found["similarity"] is not None:
                assert found["similarity"] == value and found["best_reference"] == best
            else:
                assert not exact or not references
                assert value is None or value < threshold


@pytest.mark.parametrize("measure", sorted(MEASURES))
def test_identical_blank_texts_score_as_rapidfuzz_scores_them(measure):
    """The shortcut for identical texts holds only where rapidfuzz agrees: token_set_ratio gives two
    texts without a word 0 (and NBSP, which Python strips, is a word to rapidfuzz)."""
    retrieved = ["", " ", "\t\n", "\u3000", "\xa0", "b"]
    references = ["", " ", "\t\n", "\u3000", "\xa0"]
    for threshold in (0.0, 0.5, 1.0):
        expected = brute_force(retrieved, references, measure, threshold)
        for exact in (True, False):
            got = precision(retrieved, references, measure=measure, threshold=threshold, exact_similarity=exact)
            assert [r["relevant"] for r in got.details["retrieved"]] == [relevant for _, _, relevant in expected]
            assert got.value == average_precision(relevant for _, _, relevant in expected)
            if exact:
                assert [r["similarity"] for r in got.details["retrieved"]] == [value for _, value, _ in expected]


def test_a_batch_scores_like_its_samples_one_by_one():
    rng = random.Random(3)
    words = ["alpha", "beta", "gamma", "delta"]
    texts_ = [" ".join(rng.choices(words, k=rng.randint(1, 6))) for _ in range(20)]
    samples = [Sample(retrieved_contexts=rng.sample(texts_, rng.randint(0, 4)), reference_contexts=rng.sample(texts_, rng.randint(0, 3))) for _ in range(40)]
    for measure in ("levenshtein", "partial_ratio", "token_set_ratio"):
        metric = create_metric("nonllm_context_precision", {"measure": measure})
        together = metric.score_batch(samples, None)
        alone = [metric.score_batch([s], None)[0] for s in samples]
        assert [(s.value, s.details) for s in together] == [(s.value, s.details) for s in alone]


def test_partial_ratio_refusal_names_this_metrics_option():
    long_reference = "the river rose in spring " * 100
    chunk = "a court said the year was dry " * 100
    refused = precision([chunk], [long_reference], measure="partial_ratio")
    assert refused.value is None and "raise nonllm_context_precision.partial_ratio_max_chars" in refused.error


def test_bad_options_are_config_errors():
    with pytest.raises(ConfigError, match="nonllm_context_precision' option 'measure'"):
        create_metric("nonllm_context_precision", {"measure": "cosine"})
    with pytest.raises(ConfigError, match="option 'threshold'"):
        create_metric("nonllm_context_precision", {"threshold": "1.5"})
    with pytest.raises(ConfigError, match="option 'threshold'"):
        create_metric("nonllm_context_precision", {"threshold": True})
    with pytest.raises(ConfigError, match="id_context_precision' option 'threshold'"):
        create_metric("id_context_precision", {"threshold": 0.5})


@pytest.mark.parametrize(
    "retrieved, reference, expected",
    [
        ([1, 2, 3], [2, 3, 4], 2 / 3),
        (["a", "a", "b"], ["a"], 1 / 2),  # ragas takes the set: a duplicate counts once
        ([7, "8"], ["7", 8], 1.0),  # compared as strings
        (["a"], [], 0.0),  # no reference ids: nothing retrieved is relevant (ragas: 0)
        (["a", "b"], ["c"], 0.0),
    ],
)
def test_id_precision_as_ragas(retrieved, reference, expected):
    assert ids(retrieved, reference).value == expected


def test_id_precision_nothing_retrieved_is_nan_and_details_explain():
    assert math.isnan(ids([], ["a"]).value)  # ragas: NaN, "cannot calculate precision"
    score = ids(["doc_2", "doc_1", "doc_1", 7], ["doc_1", "7"])
    assert score.value == 2 / 3 and score.details == {"relevant": ["doc_1", "7"], "not_relevant": ["doc_2"]}
    explain = REGISTRY["id_context_precision"].explain_raw
    assert explain(score.details) == "1 of 3 retrieved ids not among the reference ids: doc_2"
    assert explain(ids([1], [1]).details) == "every retrieved id is a reference id"
    assert explain(ids([], [1]).details) == "no retrieved ids"


def test_missing_fields_are_per_sample_errors_naming_the_field():
    run = evaluate([{"retrieved_contexts": ["a"], "retrieved_context_ids": [1]}, GOOD], ["nonllm_context_precision", "id_context_precision"])
    first, second = run.results
    assert first["scores"] == {"nonllm_context_precision": None, "id_context_precision": None}
    assert first["errors"] == {
        "nonllm_context_precision": "missing required field 'reference_contexts'",
        "id_context_precision": "missing required field 'reference_context_ids'",
    }
    assert second["scores"] == {"nonllm_context_precision": 0.5, "id_context_precision": 2 / 3}
    assert run.summary["metrics"]["id_context_precision"]["errors"] == 1


def test_the_pytest_helper():
    assert_metric([GOOD], "nonllm_context_precision", threshold=0.5)
    with pytest.raises(AssertionError, match="id_context_precision = 0.667: 1 of 3 retrieved ids not among the reference ids: doc_2"):
        assert_metric([GOOD], "id_context_precision", threshold=0.9)


def invoke(args):
    return CliRunner().invoke(cli, args)


def test_cli_run_with_gates_reports_and_config(write_jsonl, tmp_path):
    data = write_jsonl([GOOD, {**GOOD, "id": "s2", "retrieved_contexts": GOOD["retrieved_contexts"][::-1]}, {"id": "s3", "retrieved_contexts": ["x"]}])
    out, junit, summary = tmp_path / "out.jsonl", tmp_path / "junit.xml", tmp_path / "summary.json"
    result = invoke(["score", str(data), *PRECISION, "-o", str(out), "--junit-xml", str(junit), "--summary-json", str(summary)])
    assert result.exit_code == 0, result.output
    rows = result_rows(out)
    assert [r["scores"]["nonllm_context_precision"] for r in rows] == [0.5, 1.0, None]
    assert rows[2]["errors"]["nonllm_context_precision"] == "missing required field 'reference_contexts'"
    assert rows[0]["details"]["nonllm_context_precision"]["retrieved"][1] == {"best_reference": 0, "similarity": 1.0, "relevant": True}
    figures = json.loads(summary.read_text())["metrics"]["nonllm_context_precision"]
    assert (figures["scored"], figures["mean"], figures["errors"]) == (2, 0.75, 1)
    assert "nonllm_context_precision" in junit.read_text() and "id_context_precision" in junit.read_text()
    # gates: a sample threshold and a minimum mean, from the command line and from the config file
    assert invoke(["score", str(data), *PRECISION, "-t", "nonllm_context_precision=0.5"]).exit_code == 1  # s3 is unscored
    two = write_jsonl([GOOD, {**GOOD, "id": "s2", "retrieved_contexts": GOOD["retrieved_contexts"][::-1]}])
    assert invoke(["score", str(two), *PRECISION, "-t", "nonllm_context_precision=0.5", "--min-mean", "id_context_precision=0.6"]).exit_code == 0
    assert invoke(["score", str(two), *PRECISION, "--min-mean", "nonllm_context_precision=0.8"]).exit_code == 1
    config = tmp_path / "localeval.toml"
    config.write_text(
        'metrics = ["nonllm_context_precision"]\nmin_mean = { nonllm_context_precision = 0.9 }\n'
        '[options.nonllm_context_precision]\nmeasure = "token_set_ratio"\nthreshold = 0.3\n'
    )
    configured = invoke(["score", str(two), "--config", str(config), "-o", str(tmp_path / "c.jsonl")])
    assert configured.exit_code == 0, configured.output  # both contexts share enough words at 0.3: every rank relevant
    header = json.loads((tmp_path / "c.jsonl").read_text().splitlines()[0])
    assert header["run"]["metrics"]["nonllm_context_precision"]["measure"] == "token_set_ratio"


def test_resume_refuses_other_precision_options(write_jsonl, tmp_path):
    data = write_jsonl([GOOD, {**GOOD, "id": "s2"}])
    out = tmp_path / "r.jsonl"
    assert invoke(["score", str(data), *PRECISION, "-o", str(out)]).exit_code == 0
    lines = out.read_text().splitlines(keepends=True)
    out.write_text("".join(lines[:2]))
    refused = invoke(["score", str(data), *PRECISION, "--option", "nonllm_context_precision.threshold=0.9", "-o", str(out), "--resume"])
    assert refused.exit_code == 2 and "cannot resume" in refused.stderr and "(metrics." in refused.stderr
    resumed = invoke(["score", str(data), *PRECISION, "-o", str(out), "--resume"])
    assert resumed.exit_code == 0, resumed.output
    assert out.read_text() == "".join(lines)
