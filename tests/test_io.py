import json

import pytest

from localeval.errors import InputError
from localeval.io import ResultWriter, completed_lines, dumps_line, read_records


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


def test_torn_last_line_is_cut_and_never_parsed(tmp_path):
    out = tmp_path / "out.jsonl"
    with ResultWriter(str(out)) as writer:
        writer.write({"line": 1, "scores": {}})
        writer.write({"line": 2, "scores": {}})
    with open(out, "a") as handle:
        handle.write('{"line": 3, "sco')  # killed in the middle of a write
    assert sorted(completed_lines(out)) == [1, 2]
    assert out.read_text().endswith("}\n")
    assert len(out.read_text().splitlines()) == 2


def test_a_file_that_is_not_results_cannot_be_resumed(tmp_path):
    out = tmp_path / "out.jsonl"
    out.write_text('{"line": 1}\nhello\n{"line": 3}\n')
    with pytest.raises(InputError, match="out.jsonl:2"):
        completed_lines(out)


def test_results_are_flushed_as_written(tmp_path):
    out = tmp_path / "out.jsonl"
    writer = ResultWriter(str(out))
    writer.write({"line": 1})
    assert out.read_text() == '{"line": 1}\n'  # visible before close
    writer.close()


def test_unicode_line_separators_stay_inside_one_line():
    line = dumps_line({"text": "a\x85b\u2028c\u2029d é"})
    assert len(line.splitlines()) == 1
    assert json.loads(line) == {"text": "a\x85b\u2028c\u2029d é"}
