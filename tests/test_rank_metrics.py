"""The rank metrics on hand-computed cases, their evidence, and reference_context_grades read as
untrusted input (a bad grade names the file, the line and the field; exit 2)."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
from conftest import invoke

import localeval
from localeval.metrics import REGISTRY, create_metric
from localeval.metrics.rank_metrics import RANK_METRICS

ALL = [cls.name for cls in RANK_METRICS]


def scores(sample: dict, options: dict | None = None) -> dict:
    """Each rank metric's score and details for one sample."""
    metrics = [create_metric(name, (options or {}).get(name)) for name in ALL]
    row = localeval.evaluate([sample], metrics).results[0]
    return {name: (row["scores"][name], row["details"][name]) for name in ALL}


def test_binary_relevance_by_hand():
    # relevant a (rank 1) and c (rank 3); b missing from the ranking: 3 relevant in all
    got = scores({"retrieved_context_ids": ["a", "x", "c", "y"], "reference_context_ids": ["a", "c", "b"]}, {"precision_at_k": {"k": 2}})
    ideal = 1 + 1 / math.log2(3) + 1 / math.log2(4)
    assert got["ndcg_at_k"][0] == pytest.approx((1 + 1 / math.log2(4)) / ideal)
    assert got["reciprocal_rank"][0] == 1.0
    assert got["average_precision"][0] == pytest.approx((1 / 1 + 2 / 3) / 3)
    assert got["precision_at_k"][0] == 0.5  # 1 relevant of the first 2
    assert got["recall_at_k"][0] == pytest.approx(2 / 3)
    assert got["hit_rate_at_k"][0] == 1.0
    assert got["r_precision"][0] == pytest.approx(2 / 3)  # a and c among the first 3
    details = got["ndcg_at_k"][1]
    assert details["ranks"] == {"a": 1, "c": 3}
    assert details["missing"] == ["b"] and details["ideal_dcg"] == pytest.approx(ideal)


def test_precision_divides_by_k_even_when_fewer_were_retrieved():
    got = scores({"retrieved_context_ids": ["a"], "reference_context_ids": ["a"]})
    assert got["precision_at_k"][0] == 0.1  # 1 of k = 10
    assert got["ndcg_at_k"][0] == 1.0 and got["r_precision"][0] == 1.0


def test_graded_gain_and_an_ideal_ranking_of_every_relevant_id():
    # grades 3 (never retrieved), 1 at rank 1, 0 (not relevant) at rank 2
    got = scores({"retrieved_context_ids": [7, 8], "reference_context_ids": ["9", "7", 8], "reference_context_grades": [3, 1, 0]})
    assert got["ndcg_at_k"][0] == pytest.approx(1 / (3 + 1 / math.log2(3)))
    assert got["ndcg_at_k"][1]["ranks"] == {"7": 1} and got["ndcg_at_k"][1]["missing"] == ["9"]
    assert got["precision_at_k"][0] == 0.1  # the id graded 0 is not relevant


def test_cut_offs_of_reciprocal_rank_and_average_precision():
    sample = {"retrieved_context_ids": ["x", "y", "a"], "reference_context_ids": ["a"]}
    assert scores(sample)["reciprocal_rank"][0] == pytest.approx(1 / 3)
    cut = scores(sample, {"reciprocal_rank": {"k": 2}, "average_precision": {"k": 2}})
    assert cut["reciprocal_rank"][0] == 0.0 and cut["average_precision"][0] == 0.0


def test_a_duplicate_counts_once_at_its_first_rank_with_a_warning():
    got = scores({"retrieved_context_ids": ["a", "a", "b"], "reference_context_ids": ["b"]})
    assert got["reciprocal_rank"][0] == 0.5  # b moves up to rank 2
    details = got["reciprocal_rank"][1]
    assert details["duplicates"] == ["a"]
    assert "warning: ids ranked more than once" in REGISTRY["reciprocal_rank"].explain_raw(details)


def test_no_relevant_id_is_undefined_with_the_reason():
    got = scores({"retrieved_context_ids": ["a"], "reference_context_ids": ["a"], "reference_context_grades": [0]})
    for name in ALL:
        value, details = got[name]
        assert value is None  # NaN, written as null
        assert details["reason"].startswith("no relevant id")


def test_nothing_retrieved_scores_0():
    got = scores({"retrieved_context_ids": [], "reference_context_ids": ["a"]})
    assert {name: value for name, (value, _) in got.items()} == dict.fromkeys(ALL, 0.0)


def test_the_summary_names_mrr_and_map(tmp_path: Path):
    data = tmp_path / "ranks.jsonl"
    data.write_text(json.dumps({"retrieved_context_ids": ["a", "b"], "reference_context_ids": ["b"]}) + "\n")
    result = invoke(["score", str(data), "-m", "reciprocal_rank", "-m", "average_precision", "--no-progress"])
    assert result.exit_code == 0, result.output
    assert "reciprocal_rank's mean is MRR" in result.output and "average_precision's mean is MAP" in result.output


def test_options_from_the_command_line(tmp_path: Path):
    data = tmp_path / "ranks.jsonl"
    data.write_text(json.dumps({"retrieved_context_ids": ["x", "a"], "reference_context_ids": ["a"]}) + "\n")
    out = tmp_path / "results.jsonl"
    result = invoke(["score", str(data), "-m", "hit_rate_at_k", "--option", "hit_rate_at_k.k=1", "-o", str(out), "-q"])
    assert result.exit_code == 0, result.output
    row = json.loads(out.read_text().splitlines()[1])
    assert row["scores"]["hit_rate_at_k"] == 0.0 and row["details"]["hit_rate_at_k"]["k"] == 1


@pytest.mark.parametrize(
    ("grades", "field", "reason"),
    [
        ([1], "reference_context_grades", "1 grades for 2 reference_context_ids"),
        ([1, -1], "reference_context_grades[1]", "greater than or equal to 0"),
        ([1, "2"], "reference_context_grades[1]", "valid number"),
        ([1, True], "reference_context_grades[1]", "valid number"),
        ([1, "NaN"], "reference_context_grades[1]", "valid number"),
        ("1, 2", "reference_context_grades", "valid list"),
    ],
)
def test_bad_grades_name_the_file_line_and_field(tmp_path: Path, grades, field, reason):
    data = tmp_path / "ranks.jsonl"
    good = {"retrieved_context_ids": ["a"], "reference_context_ids": ["a", "b"]}
    data.write_text(json.dumps(good) + "\n" + json.dumps({**good, "reference_context_grades": grades}) + "\n")
    result = invoke(["score", str(data), "-m", "ndcg_at_k", "--strict", "-q"])
    assert result.exit_code == 2
    assert f"{data}:2: field '{field}'" in result.output and reason in result.output


def test_a_nan_grade_in_the_json_is_refused(tmp_path: Path):
    data = tmp_path / "ranks.jsonl"
    data.write_text('{"retrieved_context_ids": ["a"], "reference_context_ids": ["a"], "reference_context_grades": [NaN]}\n')
    result = invoke(["score", str(data), "-m", "ndcg_at_k", "--strict", "-q"])
    assert result.exit_code == 2 and "field 'reference_context_grades[0]'" in result.output


def test_grades_without_reference_ids_are_refused():
    with pytest.raises(localeval.InputError, match="needs reference_context_ids"):
        localeval.parse_sample({"retrieved_context_ids": ["a"], "reference_context_grades": [1]}, "x.jsonl", 3)


def test_assert_metric_gates_a_rank_metric_and_says_where_the_relevant_ids_were():
    from localeval.testing import assert_metric

    good = {"id": "good", "retrieved_context_ids": ["a", "b"], "reference_context_ids": ["a"]}
    assert assert_metric([good], "ndcg_at_k", 0.9, options={"k": 5})[0]["scores"]["ndcg_at_k"] == 1.0
    late = {"id": "late", "retrieved_context_ids": ["x", "y", "a"], "reference_context_ids": ["a", "z"]}
    with pytest.raises(AssertionError, match=r"relevant ids found at ranks: a at 3.*1 of 2 relevant ids never retrieved: z"):
        assert_metric([good, late], "reciprocal_rank", 0.5)


def test_the_markdown_report_explains_a_failing_rank_sample(tmp_path: Path):
    data = tmp_path / "ranks.jsonl"
    data.write_text(json.dumps({"id": "late", "retrieved_context_ids": ["x", "a"], "reference_context_ids": ["a"], "reference_context_grades": [2]}) + "\n")
    markdown = tmp_path / "summary.md"
    result = invoke(["score", str(data), "-m", "ndcg_at_k", "-t", "ndcg_at_k=0.9", "--markdown", str(markdown), "-q"])
    assert result.exit_code == 1
    text = markdown.read_text()
    assert "relevant ids found at ranks: a at 2" in text and "DCG@10 1.262 of an ideal 2.000" in text


def test_metrics_and_k_from_a_config_file(tmp_path: Path):
    data = tmp_path / "ranks.jsonl"
    data.write_text(json.dumps({"retrieved_context_ids": ["x", "y", "a"], "reference_context_ids": ["a"]}) + "\n")
    (tmp_path / "localeval.toml").write_text('metrics = ["precision_at_k", "reciprocal_rank"]\n[options.precision_at_k]\nk = 3\n[options.reciprocal_rank]\nk = 2\n')
    out = tmp_path / "results.jsonl"
    result = invoke(["score", str(data), "-o", str(out), "-q"])
    assert result.exit_code == 0, result.output
    row = json.loads(out.read_text().splitlines()[1])
    assert row["scores"] == {"precision_at_k": pytest.approx(1 / 3), "reciprocal_rank": 0.0}
