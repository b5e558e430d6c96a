import math

from localeval.metrics.id_recall import id_recall


def test_ragas_documented_example():
    assert id_recall(["doc_1", "doc_2", "doc_3"], ["doc_1", "doc_4", "doc_5", "doc_6"]).value == 0.25


def test_ints_and_strings_compare_as_strings():
    score = id_recall([1, "2"], ["1", 2, 3, 4])
    assert score.value == 0.5
    assert score.details == {"found": ["1", "2"], "missing": ["3", "4"]}


def test_duplicate_reference_ids_count_once():
    assert id_recall(["a"], ["a", "a", "b"]).value == 0.5


def test_no_reference_ids_is_nan():
    assert math.isnan(id_recall(["a"], []).value)


def test_nothing_retrieved_is_zero():
    assert id_recall([], ["a", "b"]).value == 0.0
