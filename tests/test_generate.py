"""`localeval generate` with a real judge (SmolLM2-135M, the small test model): every row well
formed, the same rows for the same seed, a resume that gives what an uninterrupted run gives,
and the summary counting every candidate. The checks themselves are tested without a model in
tests/test_generate_checks.py."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conftest import SMALL_MODEL, invoke

DOCS = {
    "curie.md": "# Marie Curie\n\nMarie Curie was born in Warsaw in 1867. She moved to Paris in 1891 to study physics at the Sorbonne. "
    "In 1903 Marie Curie shared the Nobel Prize in Physics with Pierre Curie and Henri Becquerel.\n\n"
    "Marie Curie won a second Nobel Prize, in Chemistry, in 1911 for the discovery of polonium and radium.",
    "sorbonne.txt": "The Sorbonne is a historic university building in Paris. The Sorbonne was founded in 1257 by Robert de Sorbon as a college for theology students.",
    "tower.html": "<html><body><h1>Eiffel Tower</h1><p>The Eiffel Tower in Paris was completed on 31 March 1889. The Eiffel Tower is 330 metres tall.</p></body></html>",
}
ARGS = ["-n", "4", "--chunk-size", "40", "--model", SMALL_MODEL, "--n-ctx", "2048", "--threads", "2", "--no-cache", "-q"]


@pytest.fixture
def docs(tmp_path: Path) -> Path:
    folder = tmp_path / "docs"
    folder.mkdir()
    for name, text in DOCS.items():
        (folder / name).write_text(text, encoding="utf-8")
    return folder


def _generate(docs: Path, output: Path, *extra: str):
    return invoke(["generate", str(docs), "-o", str(output), *ARGS, *extra])


def test_generated_rows_are_well_formed_deterministic_and_resumable(small_model_path: Path, docs: Path, tmp_path: Path):
    first, second = tmp_path / "first.jsonl", tmp_path / "second.jsonl"
    result = _generate(docs, first)
    assert result.exit_code == 0, result.output
    assert "localeval: generate: kept" in result.output and "rejected:" in result.output
    summary = json.loads((tmp_path / "first.summary.json").read_text(encoding="utf-8"))
    rows = [json.loads(line) for line in first.read_text(encoding="utf-8").splitlines()]
    assert summary["kept"] == len(rows) and summary["candidates"] == summary["kept"] + sum(summary["rejected"].values())
    assert summary["generator"]["model"] == SMALL_MODEL and len(summary["generator"]["sha256"]) == 64
    if len(rows) < 4:
        assert summary["shortfall"] and "rejected" in summary["shortfall"]
    for row in rows:
        assert set(row) == {"id", "user_input", "reference", "reference_contexts", "reference_context_ids", "metadata"}
        assert row["user_input"].strip() and row["reference"].strip()
        assert len(row["reference_contexts"]) == len(row["reference_context_ids"]) >= 1
        assert all("#" in i for i in row["reference_context_ids"])
        meta = row["metadata"]
        assert meta["question_kind"] in ("single_context", "two_context") and meta["seed"] == 0
        assert meta["generator"] == summary["generator"] and set(meta["source"]) <= set(DOCS)
    assert _generate(docs, second).exit_code == 0
    assert second.read_bytes() == first.read_bytes()  # deterministic for a seed
    assert (tmp_path / "second.summary.json").read_text() == (tmp_path / "first.summary.json").read_text()

    # an interrupted run: its first row and half of its second line; --resume ends where an uninterrupted run does
    lines = first.read_text(encoding="utf-8").splitlines(keepends=True)
    resumed = tmp_path / "resumed.jsonl"
    resumed.write_text("".join(lines[:1]) + (lines[1][: len(lines[1]) // 2] if len(lines) > 1 else ""), encoding="utf-8")
    result = _generate(docs, resumed, "--resume")
    assert result.exit_code == 0, result.output
    assert resumed.read_bytes() == first.read_bytes()
    assert (tmp_path / "resumed.summary.json").read_text() == (tmp_path / "first.summary.json").read_text()

    # without --resume the rows already there are never overwritten; another seed's file is refused on resume
    result = _generate(docs, first)
    assert result.exit_code == 2 and "--resume" in result.output
    result = _generate(docs, first, "--resume", "--seed", "7")
    assert result.exit_code == 2 and "first.jsonl:1: field 'metadata.seed'" in result.output
