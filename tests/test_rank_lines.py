"""A run of rank metrics alone reads its common lines without the per-sample pipeline
(localeval.run.rank_lines); every row, summary and error must be the pipeline's, byte for byte.

The pipeline is reached by turning the choice off (monkeypatching `ranks_only` in the pipeline: a
test of our own control flow), and the two results files are compared whole, on lines of every
shape: common ones (which take the fast reading) and every kind that must not (legacy names,
unknown fields, ids that are floats or beyond 64 bits, bad grades, invalid JSON, lone surrogates, blank lines, a
byte order mark), in a fixed and in a seeded random mix."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest
from conftest import invoke

import localeval.run.pipeline as pipeline
from localeval.data.samples import Sample
from localeval.metrics import create_metric
from localeval.metrics.rank_metrics import RANK_METRICS, NdcgAtK
from localeval.run.rank_lines import FIELD_SHAPES, common_sample, ranks_only

SEVEN = [f"--metric={cls.name}" for cls in RANK_METRICS]
OPTIONS = ["--option", "ndcg_at_k.k=3", "--option", "average_precision.k=5", "--option", "precision_at_k.k=2"]

# Lines the fast reading takes: each must come out as the pipeline writes it.
COMMON = [
    {"id": "q1", "retrieved_context_ids": ["a", "b", "c"], "reference_context_ids": ["c", "z"]},
    {"id": 7, "retrieved_context_ids": ["a", "b"], "reference_context_ids": ["b", "a"], "reference_context_grades": [2, 0.5]},
    {"id": None, "retrieved_context_ids": [], "reference_context_ids": ["a"]},
    {"retrieved_context_ids": ["a", "b", "a", "c", "b"], "reference_context_ids": ["b", "c"], "reference_context_grades": [1, 3]},
    {"id": "none relevant", "retrieved_context_ids": ["a"], "reference_context_ids": []},
    {"id": "all graded 0", "retrieved_context_ids": ["a"], "reference_context_ids": ["a", "b"], "reference_context_grades": [0, 0.0]},
    {"id": "repeated reference", "retrieved_context_ids": ["b", "a"], "reference_context_ids": ["a", "b", "a"], "reference_context_grades": [1, 2, 3]},
    {"id": "ünï \u2028 line\u0085break", "retrieved_context_ids": ["é\u2029", "q\"uote\\", "tab\t"], "reference_context_ids": ["tab\t", "é\u2029"]},
    {"id": "texts", "user_input": "why?", "retrieved_contexts": ["one", "two"], "reference": "r", "response": None, "retrieved_context_ids": ["x"], "reference_context_ids": ["x"]},
    {"id": "int ids", "retrieved_context_ids": [1, 2, "3", 2, -4], "reference_context_ids": ["2", 3, -4], "reference_context_grades": [1, 2, 0]},
    {"id": "emoji", "retrieved_context_ids": ["\u00e9\U0001f600"], "reference_context_ids": ["\u00e9\U0001f600"]},
]
# Lines the pipeline must read (each returns None from common_sample).
ODD = [
    {"id": "huge id", "retrieved_context_ids": [2**64, 2], "reference_context_ids": ["2"]},
    {"id": 3.0, "retrieved_context_ids": ["a"], "reference_context_ids": ["a"]},
    {"id": True, "retrieved_context_ids": ["a"], "reference_context_ids": ["a"]},
    {"id": 2**70, "retrieved_context_ids": ["a"], "reference_context_ids": ["a"]},
    {"id": "legacy", "question": "q", "retrieved_context_ids": ["a"], "reference_context_ids": ["a"]},
    {"id": "passed through", "team": {"n": 1}, "retrieved_context_ids": ["a"], "reference_context_ids": ["a"]},
    {"id": "no ranking", "reference_context_ids": ["a"]},
    {"id": "null ranking", "retrieved_context_ids": None, "reference_context_ids": ["a"]},
    {"id": "unaligned", "retrieved_context_ids": ["a"], "reference_context_ids": ["a"], "reference_context_grades": [1, 2]},
    {"id": "negative", "retrieved_context_ids": ["a"], "reference_context_ids": ["a"], "reference_context_grades": [-1]},
    {"id": "true grade", "retrieved_context_ids": ["a"], "reference_context_ids": ["a"], "reference_context_grades": [True]},
    {"id": "grades alone", "retrieved_context_ids": ["a"], "reference_context_grades": [1]},
    {"id": "text id", "user_input": 5, "retrieved_context_ids": ["a"], "reference_context_ids": ["a"]},
    {"id": "float ids", "retrieved_context_ids": [1.0], "reference_context_ids": [1]},
]
RAW = [
    b'{"id": "nan grade", "retrieved_context_ids": ["a"], "reference_context_ids": ["a"], "reference_context_grades": [NaN]}',
    b'{"id": "lone surrogate", "retrieved_context_ids": ["\\ud800"], "reference_context_ids": ["a"]}',
    b'{"id": "escaped pair", "retrieved_context_ids": ["\\ud83d\\ude00"], "reference_context_ids": ["\\ud83d\\ude00"]}',
    b'{"id": "twice", "id": "twice again", "retrieved_context_ids": ["a"], "reference_context_ids": ["a"]}',
    b'{"id": "huge", "retrieved_context_ids": ["a"], "reference_context_ids": ["a"], "reference_context_grades": [1e999]}',
    b'{"id": "cut',
    b"[1, 2]",
    b"\xff\xfe not utf-8",
    b"   ",
    b'{"id": "crlf", "retrieved_context_ids": ["a"], "reference_context_ids": ["a"]}\r',
]


def _line(item: dict | bytes) -> bytes:
    return item if isinstance(item, bytes) else json.dumps(item, ensure_ascii=False).encode("utf-8")


def _write(path: Path, items: list[dict | bytes], bom: bool = False) -> Path:
    path.write_bytes((b"\xef\xbb\xbf" if bom else b"") + b"\n".join(_line(item) for item in items) + b"\n")
    return path


def _both(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, data: Path, *extra: str) -> tuple[tuple[int, bytes, str], tuple[int, bytes, str]]:
    """The exit code, results file and summary JSON of the fast reading and of the pipeline."""
    outcomes = []
    for name, fast in (("fast", True), ("pipeline", False)):
        if not fast:
            monkeypatch.setattr(pipeline, "ranks_only", lambda metrics: False)
        out, summary = tmp_path / f"{name}.jsonl", tmp_path / f"{name}.json"
        done = invoke(["score", str(data), *SEVEN, *OPTIONS, "-o", str(out), "--summary-json", str(summary), "--no-timing", "-q", *extra])
        outcomes.append((done.exit_code, out.read_bytes(), summary.read_text(encoding="utf-8").replace(name, "NAME") if summary.exists() else done.output))
    monkeypatch.undo()
    return outcomes[0], outcomes[1]


def test_common_lines_are_read_fast_and_the_others_are_not():
    assert set(FIELD_SHAPES) == set(Sample.model_fields)  # a field added to Sample must be given its shape
    assert all(common_sample(_line(item)) is not None for item in COMMON)
    assert all(common_sample(_line(item)) is None for item in ODD)
    assert all(common_sample(raw) is None for raw in RAW if raw.strip() and b"twice" not in raw and b"crlf" not in raw)


def test_every_shape_of_line_gives_the_pipelines_rows_and_summary(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    data = _write(tmp_path / "mixed.jsonl", [*COMMON, *ODD, *RAW], bom=True)
    fast, slow = _both(tmp_path, monkeypatch, data)
    assert fast == slow
    rows = [json.loads(line) for line in fast[1].splitlines()[1:]]
    assert len(rows) == len(COMMON) + len(ODD) + len(RAW) - 1  # the blank line has no row
    assert rows[0]["scores"]["ndcg_at_k"] > 0 and "input" in rows[-2]["errors"]  # scored, and an error named


def test_a_seeded_random_mix_gives_the_pipelines_rows(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    rng = random.Random(77)
    ids = ["a", "b", "c", "d", "é", "f\u2028", 'g"', "h\\", 2, "2", 3]
    items: list[dict | bytes] = []
    for number in range(400):
        ranking = [rng.choice(ids) for _ in range(rng.randint(0, 9))]
        reference = rng.sample(ids, rng.randint(0, 4))
        item: dict = {"id": rng.choice([f"q{number}", number, None]), "retrieved_context_ids": ranking, "reference_context_ids": reference}
        if rng.random() < 0.6:
            item["reference_context_grades"] = [rng.choice([0, 1, 2, 3, 0.5, 2.25]) for _ in reference]
        if rng.random() < 0.1:
            items.append(rng.choice(ODD))
        items.append(item)
    fast, slow = _both(tmp_path, monkeypatch, _write(tmp_path / "random.jsonl", items))
    assert fast == slow and fast[1].count(b"\n") == len(items) + 1  # the header and a row a line


def test_strict_input_stops_at_the_same_line_with_the_rows_before_it(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    data = _write(tmp_path / "strict.jsonl", [COMMON[0], COMMON[1], b'{"id": "cut', COMMON[2]])
    fast, slow = _both(tmp_path, monkeypatch, data, "--strict")
    assert fast[:2] == slow[:2] and fast[0] == 2
    assert len(fast[1].splitlines()) == 3  # the header and the two rows before the bad line


def test_a_resumed_run_continues_as_the_pipeline_does(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    data = _write(tmp_path / "resume.jsonl", [*COMMON, *ODD])
    whole = tmp_path / "whole.jsonl"
    code = invoke(["score", str(data), *SEVEN, "-o", str(whole), "--no-timing", "-q"]).exit_code
    assert code == 2  # unreadable lines
    lines = whole.read_bytes().splitlines(keepends=True)
    for name in ("fast", "pipeline"):
        if name == "pipeline":
            monkeypatch.setattr(pipeline, "ranks_only", lambda metrics: False)
        part = tmp_path / f"{name}.jsonl"
        part.write_bytes(b"".join(lines[:6]))  # the header and five rows, as a killed run leaves them
        assert invoke(["score", str(data), *SEVEN, "-o", str(part), "--no-timing", "-q", "--resume"]).exit_code == code
        assert part.read_bytes() == whole.read_bytes()


def test_a_run_with_another_metric_or_a_plugins_subclass_takes_the_pipeline():
    class Renamed(NdcgAtK):
        name = "my_ndcg"

    assert ranks_only([create_metric(cls.name) for cls in RANK_METRICS])
    assert not ranks_only([create_metric("ndcg_at_k"), create_metric("id_context_recall")])
    assert not ranks_only([Renamed()]) and not ranks_only([])


def test_a_row_too_long_to_write_counts_the_same_with_or_without_a_results_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    """Found by review: with nowhere to write, a row too long for a results line was counted as
    scored, where writing it makes it an input error (exit 2). The limits are made small here so
    that a short line shows it (a real one needs a line of tens of MiB)."""
    import localeval.data.results as results
    import localeval.run.rank_lines as rank_lines

    monkeypatch.setattr(results, "MAX_LINE_BYTES", 4096)
    monkeypatch.setattr(rank_lines, "ROOMY_LINE_BYTES", 4096 // 256)
    data = _write(tmp_path / "long.jsonl", [COMMON[0], {"id": "\u0085" * 1500, "retrieved_context_ids": ["a"], "reference_context_ids": ["a"]}])
    outcomes = []
    for fast in (True, False):
        if not fast:
            monkeypatch.setattr(pipeline, "ranks_only", lambda metrics: False)
        for output in ([], ["-o", str(tmp_path / f"out{fast}.jsonl")]):
            summary = tmp_path / "summary.json"
            done = invoke(["score", str(data), *SEVEN, "--summary-json", str(summary), "--no-timing", "-q", *output])
            figures = json.loads(summary.read_text(encoding="utf-8"))
            outcomes.append((done.exit_code, figures["input_errors"], figures["metrics"]["ndcg_at_k"]["count"]))
    assert outcomes == [(2, 1, 1)] * 4


def test_a_row_is_at_most_160_times_its_line_so_a_roomy_line_needs_no_check():
    from localeval.run.rank_lines import ROOMY_LINE_BYTES, rank_row

    metrics = [create_metric(cls.name) for cls in RANK_METRICS]
    rng = random.Random(5)
    for _ in range(300):
        unit = rng.choice(["\u0085", "\u2028", "\x01", "a", "é", '"'])
        ids = [unit * rng.randint(1, 40) + str(i) for i in range(rng.randint(1, 30))]
        ranking = ids + rng.sample(ids, len(ids) // 2)  # repeats: the duplicates listed in every metric
        raw = _line({"id": unit * rng.randint(1, 200), "retrieved_context_ids": ranking, "reference_context_ids": ids + [unit * 50]})
        row = rank_row(1, common_sample(raw), [(metric.name, metric.figure_of) for metric in metrics])
        assert len(row.to_line().encode("utf-8")) <= 160 * len(raw) + 4096
    assert 160 * ROOMY_LINE_BYTES + 4096 < 64 << 20
