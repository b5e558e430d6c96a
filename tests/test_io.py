import json

import pytest

from localeval.errors import InputError
from localeval.io import read_records
from localeval.results import dumps_line


def test_bad_lines_are_reported_and_the_rest_read(write_jsonl):
    path = write_jsonl(
        [
            {"user_input": "ok"},
            "{not json",
            "",
            b"\xff\xfe bad bytes",
            {"user_input": 3},
            "[1, 2]",
            {"user_input": "also ok"},
        ]
    )
    records = list(read_records(str(path)))
    assert [r.line for r in records] == [1, 2, 4, 5, 6, 7]  # the blank line 3 is not a sample
    good = [r for r in records if r.sample is not None]
    assert [r.sample.user_input for r in good] == ["ok", "also ok"]
    errors = {r.line: str(r.error) for r in records if r.error}
    assert errors[2].startswith(f"{path}:2: invalid JSON")
    assert errors[4] == f"{path}:4: not valid UTF-8 (byte 0)"
    assert errors[5].startswith(f"{path}:5: field 'user_input': Input should be a valid string")
    assert errors[6] == f"{path}:6: expected a JSON object, got list"


def test_strict_stops_at_the_first_bad_line(write_jsonl):
    path = write_jsonl([{"user_input": "ok"}, "oops", {"user_input": "never read"}])
    reader = read_records(str(path), strict=True)
    assert next(reader).sample.user_input == "ok"
    with pytest.raises(InputError, match=":2: invalid JSON"):
        next(reader)


def test_nan_is_written_as_null():
    assert json.loads(dumps_line({"scores": {"a": float("nan"), "b": 0.5}})) == {"scores": {"a": None, "b": 0.5}}


def test_unicode_line_separators_stay_inside_one_line():
    line = dumps_line({"text": "a\x85b\u2028c\u2029d é"})
    assert len(line.splitlines()) == 1
    assert json.loads(line) == {"text": "a\x85b\u2028c\u2029d é"}


def test_a_lone_surrogate_is_that_lines_error_and_writing_never_fails(write_jsonl):
    path = write_jsonl(['{"id": "\\ud800", "user_input": "a"}', {"user_input": "ok"}])
    records = list(read_records(str(path)))
    assert "invalid JSON" in str(records[0].error) and "line 1" in str(records[0].error)
    assert records[1].sample.user_input == "ok"
    assert json.loads(dumps_line({"id": "\ud800"})) == {"id": "\ud800"}  # escaped, never invalid UTF-8


def test_huge_numbers_and_deep_nesting_are_that_lines_error(write_jsonl):
    path = write_jsonl(['{"x": ' + "9" * 5000 + ', "user_input": "a"}', '{"x": ' + "[" * 800 + "]" * 800 + "}", {"user_input": "ok"}])
    records = list(read_records(str(path)))
    assert [r.line for r in records] == [1, 2, 3]
    assert all("invalid JSON" in str(r.error) for r in records[:2])
    assert records[2].sample.user_input == "ok"


def test_a_byte_order_mark_on_line_one_is_accepted(tmp_path):
    path = tmp_path / "bom.jsonl"
    path.write_bytes(b'\xef\xbb\xbf{"user_input": "first"}\n{"user_input": "second"}\n')
    assert [r.sample.user_input for r in read_records(str(path))] == ["first", "second"]


def test_an_overlong_line_is_refused_with_its_length_and_the_rest_is_read(tmp_path, monkeypatch):
    from localeval import io

    monkeypatch.setattr(io, "MAX_LINE_BYTES", 1000)
    path = tmp_path / "long.jsonl"
    path.write_bytes(b'{"user_input": "' + b"x" * 5000 + b'"}\n{"user_input": "after"}\n' + b"y" * 3000)
    records = list(read_records(str(path)))
    assert "longer than" in str(records[0].error)
    assert records[1].sample.user_input == "after"
    assert "longer than" in str(records[2].error)  # an endless line without a newline ends as an error, not in memory


def test_integral_float_ids_are_integers_and_others_are_refused(write_jsonl):
    path = write_jsonl([{"id": 7.0, "retrieved_context_ids": [1.0, "a"]}, {"id": 7.5}, {"id": True}])
    first, half, boolean = read_records(str(path))
    assert first.sample.id == 7 and first.sample.retrieved_context_ids == [1, "a"]
    assert "an id must be a string or an integer (got 7.5)" in str(half.error)
    assert "an id must be a string or an integer (got True)" in str(boolean.error)
