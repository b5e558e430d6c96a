import hashlib
import json
import subprocess
import sys
import tracemalloc
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from conftest import invoke, result_rows

from localeval.cli import cli
from localeval.data.jsonl import read_records
from localeval.data.results import dumps_line
from localeval.errors import EXIT_USAGE, InputError
from localeval.run.progress import count_lines

ROOT = Path(__file__).resolve().parents[1]
RECALLED = {"id": "q2", "retrieved_contexts": ["The tower was completed on 31 March 1889."], "reference_contexts": ["The tower was completed on 31 March 1889."]}


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
    from localeval.data import jsonl as io

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


def test_one_bad_line_of_any_kind_never_stops_the_run(write_jsonl, tmp_path):
    lines = [
        '{"id": "\\ud800", "retrieved_context_ids": [1], "reference_context_ids": [1]}',
        '{"id": "big", "n": ' + "9" * 5000 + ', "retrieved_context_ids": [1], "reference_context_ids": [1]}',
        '{"id": "deep", "extra": ' + "[" * 900 + "]" * 900 + ', "retrieved_context_ids": [1], "reference_context_ids": [1]}',
        json.dumps({"id": "fine", "retrieved_context_ids": [1], "reference_context_ids": [1]}),
    ]
    out = tmp_path / "r.jsonl"
    result = invoke(["score", str(write_jsonl(lines)), "-m", "id_context_recall", "-o", str(out)])
    assert result.exit_code == EXIT_USAGE and "Traceback" not in result.output
    rows = result_rows(out)
    assert [r["line"] for r in rows] == [1, 2, 3, 4]
    assert all("invalid JSON" in r["errors"]["input"] for r in rows[:3])
    assert rows[3]["scores"] == {"id_context_recall": 1.0}


def test_a_fifo_and_process_substitution_are_read(write_jsonl, tmp_path):
    data = write_jsonl([RECALLED])
    completed = subprocess.run(
        ["bash", "-c", f'{sys.executable} -m localeval score <(cat "$0") -m nonllm_context_recall -o - -q', str(data)],
        capture_output=True,
        text=True,
    )
    assert completed.returncode == 0, completed.stderr
    assert json.loads(completed.stdout)["scores"] == {"nonllm_context_recall": 1.0}


def test_counting_lines_of_a_file_without_newlines_holds_one_block(tmp_path):
    big = tmp_path / "big.jsonl"
    with open(big, "wb") as out:
        for _ in range(40):
            out.write(b"x" * (1 << 20))
    tracemalloc.start()
    try:
        assert count_lines(str(big)) == 1
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 8 << 20


def test_a_utf16_file_is_named_as_such_on_every_line(tmp_path):
    data = tmp_path / "u16.jsonl"
    data.write_bytes((ROOT / "examples" / "rag_samples.jsonl").read_text(encoding="utf-8").encode("utf-16"))
    result = CliRunner().invoke(cli, ["score", str(data), "-m", "id_context_recall", "-q"])
    assert result.exit_code == 2
    assert result.output.count("the file is UTF-16, not UTF-8") == 4


def test_an_input_that_grows_during_a_run_is_hashed_and_scored_as_read(tmp_path):
    from localeval.run.pipeline import score_file
    from localeval.run.settings import build_settings

    data = tmp_path / "samples.jsonl"
    original = "".join(json.dumps({"id": i, "retrieved_context_ids": [1], "reference_context_ids": [1]}) + "\n" for i in range(3))
    data.write_text(original, encoding="utf-8")
    out = tmp_path / "out.jsonl"
    messages: list[str] = []

    def grow(_: Any) -> None:
        with open(data, "a", encoding="utf-8") as handle:
            handle.write(json.dumps({"id": "late", "retrieved_context_ids": [1], "reference_context_ids": [2]}) + "\n")

    outcome = score_file(build_settings({"input": str(data), "output": str(out), "metrics": ["id_context_recall"]}), on_row=grow, on_message=messages.append)
    assert outcome.written == 3 and [r["id"] for r in result_rows(out)] == [0, 1, 2]
    header = json.loads(out.read_text().splitlines()[0])
    assert header["run"]["input"]["sha256"] == hashlib.sha256(original.encode()).hexdigest()
    assert any("grew by" in m and "were scored and hashed" in m for m in messages), messages


def test_map_onto_an_unknown_field_is_refused_and_onto_a_present_field_is_said(tmp_path):
    from click.testing import CliRunner

    from localeval.cli import cli

    data = tmp_path / "samples.jsonl"
    data.write_text("".join(json.dumps({"ids": [1], "retrieved_context_ids": [2], "reference_context_ids": [1]}) + "\n" for _ in range(3)), encoding="utf-8")
    misspelt = CliRunner().invoke(cli, ["score", str(data), "-m", "id_context_recall", "--map", "ids=retrieved_contxt_ids", "-q"])
    assert misspelt.exit_code == 2 and "'retrieved_contxt_ids' is not a field localeval reads" in misspelt.output
    replaced = CliRunner().invoke(cli, ["score", str(data), "-m", "id_context_recall", "--map", "ids=retrieved_context_ids", "-o", str(tmp_path / "o.jsonl"), "-q"])
    assert replaced.exit_code == 0, replaced.output
    assert replaced.output.count("the line's own value is replaced") == 1 and "'retrieved_context_ids' by 'ids'" in replaced.output
    assert [r["scores"]["id_context_recall"] for r in result_rows(tmp_path / "o.jsonl")] == [1.0, 1.0, 1.0]
