import pytest

from localeval.data.samples import Sample, parse_sample
from localeval.errors import InputError


def test_ragas_names_are_read():
    sample = parse_sample(
        {
            "id": "a",
            "user_input": "q",
            "retrieved_contexts": ["c1"],
            "reference": "r",
            "reference_contexts": ["rc"],
            "retrieved_context_ids": [1, "x"],
            "reference_context_ids": ["1"],
            "response": "resp",
        }
    )
    assert sample == Sample(
        id="a",
        user_input="q",
        retrieved_contexts=["c1"],
        reference="r",
        reference_contexts=["rc"],
        retrieved_context_ids=[1, "x"],
        reference_context_ids=["1"],
        response="resp",
    )


def test_legacy_names_map_to_ragas_names():
    sample = parse_sample({"question": "q", "contexts": ["c"], "ground_truth": "g", "answer": "a"})
    assert (sample.user_input, sample.retrieved_contexts, sample.reference, sample.response) == ("q", ["c"], "g", "a")


def test_ground_truths_first_element_is_the_reference():
    assert parse_sample({"ground_truths": ["first", "second"]}).reference == "first"
    assert parse_sample({"ground_truths": []}).reference is None


def test_ragas_name_and_differing_legacy_name_is_an_error():
    with pytest.raises(InputError, match="'question' and 'user_input'"):
        parse_sample({"question": "a", "user_input": "b"}, "f.jsonl", 3)
    assert parse_sample({"question": "a", "user_input": "a"}).user_input == "a"


def test_unknown_fields_are_kept():
    assert parse_sample({"user_input": "q", "team": "search", "nested": {"k": 1}}).extra == {"team": "search", "nested": {"k": 1}}


@pytest.mark.parametrize(
    "obj, field",
    [
        ({"user_input": 5}, "user_input"),
        ({"retrieved_contexts": "not a list"}, "retrieved_contexts"),
        ({"retrieved_contexts": ["ok", 3]}, "retrieved_contexts[1]"),
        ({"contexts": ["ok", None]}, "contexts[1]"),
        ({"reference_context_ids": [1.5]}, "reference_context_ids[0]"),
        ({"ground_truths": "x"}, "ground_truths"),
        ({"id": [1]}, "id"),
    ],
)
def test_wrong_types_name_the_field_as_written(obj, field):
    with pytest.raises(InputError) as info:
        parse_sample(obj, "data.jsonl", 7)
    assert info.value.field == field
    assert str(info.value).startswith(f"data.jsonl:7: field '{field}'")


def test_non_object_is_an_error():
    with pytest.raises(InputError, match="expected a JSON object, got list"):
        parse_sample([1, 2], "d.jsonl", 1)


def test_bool_is_not_an_id():
    with pytest.raises(InputError):
        parse_sample({"retrieved_context_ids": [True]})


@pytest.mark.parametrize(
    ("target", "line", "own"),
    [
        ("answer", {"gen": "X", "response": "Y"}, "response"),  # a map onto a legacy name, on a line with the ragas name
        ("response", {"gen": "X", "answer": "Y"}, "answer"),  # a map onto the ragas name, on a line with the legacy name
        ("answer", {"gen": "X", "answer": "Y"}, "answer"),
    ],
)
def test_a_map_onto_a_legacy_name_reads_its_field_and_names_only_keys_the_line_has(tmp_path, target, line, own):
    """`--map gen=answer` reads `gen` as `response`, as `--map gen=response` does: it replaces the
    line's own value and says so, naming the keys the user wrote (it used to refuse the line
    naming 'answer' and 'response', which the line did not both have)."""
    import json

    from click.testing import CliRunner

    from localeval.cli import cli
    from localeval.data.jsonl import read_records

    data = tmp_path / "samples.jsonl"
    data.write_text(json.dumps({"user_input": "Where is Paris?", "retrieved_contexts": ["Paris is in France."], **line}) + "\n")
    record = next(read_records(str(data), field_map={"gen": target}))
    assert record.error is None and record.sample is not None and record.sample.response == "X"
    assert record.notice is not None and f"'{own}' by 'gen'" in record.notice
    said = CliRunner().invoke(cli, ["score", str(data), "-m", "faithfulness", "--verifier", "--map", f"gen={target}", "-q"])
    assert said.exit_code == 0, said.output
    assert f"'{own}' by 'gen'" in said.output and ("'answer' and 'response'" not in said.output)


def test_two_maps_onto_one_field_are_refused_naming_both(tmp_path):
    from click.testing import CliRunner

    from localeval.cli import cli

    data = tmp_path / "samples.jsonl"
    data.write_text('{"a": "X", "b": "Y"}\n')
    result = CliRunner().invoke(cli, ["score", str(data), "-m", "faithfulness", "--verifier", "--map", "a=answer", "--map", "b=response"])
    assert result.exit_code == 2 and "--map a=... and --map b=response both read the field 'response'" in result.output
