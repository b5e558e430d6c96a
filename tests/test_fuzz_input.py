"""Property test: whatever lines a file holds, `localeval score` reports the bad ones by
line number, scores the good ones exactly as it scores them alone, and never dies."""

from __future__ import annotations

import json

from click.testing import CliRunner
from conftest import result_rows
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from localeval.cli import cli

METRICS = ["-m", "nonllm_context_recall", "-m", "id_context_recall"]
FIELDS = ["user_input", "retrieved_contexts", "reference", "reference_contexts", "retrieved_context_ids", "reference_context_ids", "id", "question", "contexts", "ground_truths"]

texts = st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=40) | st.sampled_from(
    ["", " ", "مرحبا بالعالم", "שלום \u202e עולם", "\u0000", "😀" * 5, "a\nb", "x" * 2000]
)
ids = st.one_of(st.integers(-5, 5), texts)
anything = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | texts,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(texts, inner, max_size=3),
    max_leaves=6,
)
good_sample = st.fixed_dictionaries(
    {},
    optional={
        "retrieved_contexts": st.lists(texts, max_size=4),
        "reference_contexts": st.lists(texts, max_size=3),
        "retrieved_context_ids": st.lists(ids, max_size=4),
        "reference_context_ids": st.lists(ids, max_size=3),
        "user_input": texts,
        "id": ids,
        "notes": anything,
    },
)
maybe_bad_sample = st.dictionaries(st.sampled_from(FIELDS), anything, max_size=4)
raw_lines = st.one_of(
    good_sample.map(lambda d: json.dumps(d).encode()),
    maybe_bad_sample.map(lambda d: json.dumps(d).encode()),
    st.binary(max_size=30).filter(lambda b: b"\n" not in b and b"\r" not in b),
    st.sampled_from([b"", b"   ", b"{", b"[]", b"null", b"42", b'"text"', b"\xff\xfe\xfd", b'{"retrieved_contexts": NaN}', b"[" * 5000]),
)


def score_file(path, out):
    result = CliRunner().invoke(cli, ["score", str(path), *METRICS, "-o", str(out), "-q", "--no-timing"])
    return result


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(lines=st.lists(raw_lines, max_size=8))
def test_any_file_is_scored_line_by_line(tmp_path_factory, lines):
    directory = tmp_path_factory.mktemp("fuzz")
    path = directory / "in.jsonl"
    path.write_bytes(b"\n".join(lines) + (b"\n" if lines else b""))
    out = directory / "out.jsonl"
    result = score_file(path, out)
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    assert result.exit_code in (0, 2)
    assert "Traceback" not in result.output
    rows = result_rows(out)
    # A UTF-8 byte order mark opening line 1 is not content (Windows editors write one).
    non_blank = [number for number, raw in enumerate(lines, start=1) if (raw.removeprefix(b"\xef\xbb\xbf") if number == 1 else raw).strip()]
    assert [row["line"] for row in rows] == non_blank
    for row in rows:
        raw = lines[row["line"] - 1]
        if "input" in row["errors"]:
            assert f"{path}:{row['line']}:" in row["errors"]["input"]
            assert f"{path}:{row['line']}:" in result.stderr
            continue
        alone_in = directory / "alone.jsonl"
        alone_in.write_bytes(raw + b"\n")
        alone_out = directory / "alone_out.jsonl"
        score_file(alone_in, alone_out)
        alone = result_rows(alone_out)[0]
        assert {k: v for k, v in alone.items() if k not in ("line", "id")} == {k: v for k, v in row.items() if k not in ("line", "id")}
    assert (result.exit_code == 2) == any("input" in row["errors"] for row in rows)


def test_edge_files(write_jsonl, tmp_path):
    out = tmp_path / "out.jsonl"
    empty = tmp_path / "empty.jsonl"
    empty.write_bytes(b"")
    assert score_file(empty, out).exit_code == 0 and result_rows(out) == []
    blank = tmp_path / "blank.jsonl"
    blank.write_bytes(b"\n  \n\t\n")
    assert score_file(blank, out).exit_code == 0 and result_rows(out) == []
    huge = {"retrieved_context_ids": ["a"], "reference_context_ids": ["a"], "retrieved_contexts": ["x" * (10 * 1024 * 1024)], "reference_contexts": ["x" * 100]}
    path = write_jsonl([huge, {"retrieved_contexts": "no"}], name="huge.jsonl")
    result = score_file(path, out)
    rows = result_rows(out)
    assert result.exit_code == 2
    assert rows[0]["scores"] == {"nonllm_context_recall": 0.0, "id_context_recall": 1.0}
    assert rows[1]["errors"]["input"].startswith(f"{path}:2: field 'retrieved_contexts'")
    assert len(result.stderr) < 1000  # a 10 MB value is never echoed back whole
