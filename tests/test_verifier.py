"""The shipped verifier: its numpy runtime against the training framework, its file checks, its
tokenizer, and the judge metrics deciding with it (no judge loaded)."""

from __future__ import annotations

import hashlib
import json
import math
import struct
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from localeval import evaluate
from localeval.cli import cli
from localeval.data.samples import Sample
from localeval.errors import ConfigError
from localeval.metrics import create_metric
from localeval.run.runner import score
from localeval.verifier import SHIPPED_SHA256, Verifier, load_verifier, shipped_path
from localeval.verifier.tensors import TensorFileError, read_tensors, write_tensors
from localeval.verifier.wordpiece import WordPiece

ROOT = Path(__file__).resolve().parents[1]
REFERENCE = Path(__file__).resolve().parent / "data" / "verifier_reference.jsonl"


def test_the_runtime_gives_the_training_frameworks_logits():
    """training/train_verifier.py wrote torch's logits for these pairs from the shipped weights."""
    rows = [json.loads(line) for line in REFERENCE.read_text(encoding="utf-8").splitlines()]
    assert len(rows) >= 150 and {r["task"] for r in rows} == {"relevance", "attribution"}
    verifier = load_verifier()
    for task in ("relevance", "attribution"):
        part = [r for r in rows if r["task"] == task]
        got = verifier.logits(task, [(r["a"], r["b"], r["c"]) for r in part])
        worst = max(abs(g - r["logit"]) for g, r in zip(got, part))
        assert worst < 1e-3, f"{task}: numpy and torch differ by {worst}"


def test_the_shipped_file_is_the_one_the_package_names():
    assert hashlib.sha256(shipped_path().read_bytes()).hexdigest() == SHIPPED_SHA256
    assert load_verifier().describe() == {"file": "verifier.safetensors", "sha256": SHIPPED_SHA256}


def test_a_changed_verifier_file_is_refused(tmp_path, monkeypatch):
    data = bytearray(shipped_path().read_bytes())
    data[-1] ^= 1
    changed = tmp_path / "verifier.safetensors"
    changed.write_bytes(bytes(data))
    monkeypatch.setattr("localeval.verifier.shipped_path", lambda: changed)
    load_verifier.cache_clear()
    try:
        with pytest.raises(ConfigError, match="SHA-256 .* is not the shipped verifier's"):
            load_verifier()
        changed.unlink()
        with pytest.raises(ConfigError, match="missing from this installation"):
            load_verifier()
    finally:
        load_verifier.cache_clear()


@pytest.mark.parametrize(
    "data",
    [b"", b"\x00" * 7, struct.pack("<Q", 1 << 40) + b"{}", struct.pack("<Q", 2) + b"[]", struct.pack("<Q", 4) + b"{\xff}",
     struct.pack("<Q", 60) + json.dumps({"w": {"dtype": "F32", "shape": [4], "data_offsets": [0, 64]}}).encode().ljust(60)],
)
def test_malformed_tensor_files_are_refused_with_a_reason(data):
    with pytest.raises(TensorFileError):
        read_tensors(data)
    with pytest.raises(ConfigError, match="not a localeval verifier"):
        Verifier("bad.safetensors", data)


def test_tensor_files_round_trip():
    tensors = {"b": np.arange(6, dtype=np.float16).reshape(2, 3), "a": np.ones(2, dtype=np.float32)}
    read, metadata = read_tensors(write_tensors(tensors, {"format": "x"}))
    assert metadata == {"format": "x"} and set(read) == {"a", "b"}
    assert np.array_equal(read["b"], tensors["b"]) and read["a"].dtype == np.float32


@pytest.mark.parametrize(
    "text, ids",
    [
        # Expected ids from the `tokenizers` package with the base model's tokenizer.json.
        ("The Eiffel Tower was completed on 31 March 1889.", [1996, 1041, 13355, 2884, 3578, 2001, 2949, 2006, 2861, 2233, 6478, 1012]),
        ('Naïve café: "Ｆullwidth" — 東京, e.g. U.S.A. in 1,234.5m²', [15743, 7668, 1024, 1000, 100, 1000, 1517, 1879, 1755, 1010, 1041, 1012, 1043, 1012, 1057, 1012, 1055, 1012, 1037, 1012, 1999, 1015, 1010, 22018, 1012, 1019, 2213, 10701]),
        ("unaffable hyperparameterization", [14477, 20961, 3468, 23760, 28689, 22828, 3989]),
        ("tab\there\x00nul\u200bzw", [21628, 2182, 11231, 23858, 2860]),
    ],
)
def test_the_tokenizer_matches_berts(text, ids):
    assert load_verifier().tokenizer.encode(text) == ids


def test_the_tokenizer_never_fails_on_odd_text():
    tokenizer: WordPiece = load_verifier().tokenizer
    for text in ["", " ", "\ud800", "x" * 500, "\u0000\u0001", "🙂" * 3, "a\u0301"]:
        assert all(isinstance(i, int) for i in tokenizer.encode(text))


def test_the_verifier_tokenizes_each_context_once(monkeypatch):
    from localeval.metrics import create_metric
    from localeval.verifier import load_verifier

    verifier = load_verifier()
    encoded: list[str] = []
    real = verifier.tokenizer.encode
    monkeypatch.setattr(verifier.tokenizer, "encode", lambda text: encoded.append(text) or real(text))
    context = "\n".join(f"Line {i} says that the river number {i} is long." for i in range(40))
    sample = {"user_input": "Which river is long?", "retrieved_contexts": [context, "A second context."]}
    (row,) = score([sample], [create_metric("context_relevance", {"verifier": "true", "unit": "line"})])
    assert row.scores["context_relevance"] is not None, row.errors
    assert encoded.count(context) == 1 and encoded.count("Which river is long?") == 1
    assert len(encoded) == len(set(encoded)) == 40 + 1 + 2  # each line, the question, each context (the second is its own one unit): each text once


VERIFIED = {"verifier": True}  # the judge decides by default; these tests are about the verifier

EIFFEL = Sample(
    user_input="When was the Eiffel Tower completed?",
    retrieved_contexts=["The Eiffel Tower is a wrought-iron lattice tower in Paris. It was completed on 31 March 1889. Paris has many museums."],
    reference="The Eiffel Tower was completed in 1889. It is made of chocolate.",
)


def test_relevance_selects_with_the_verifier_and_needs_no_judge():
    metric = create_metric("context_relevance", VERIFIED)
    assert not metric.uses_judge() and create_metric("context_relevance").uses_judge()
    score = metric.score_batch([EIFFEL], None)[0]
    assert score.details["n_sentences"] == 3 and len(score.details["probabilities"]) == 3
    assert all(set(f) == {"verifier", "best_in_context"} for f in score.details["features"])
    assert score.value == len(score.details["selected"]) / 3  # how well it selects is a benchmark figure, not a test


def test_recall_decides_each_statement_with_a_reason_and_needs_no_judge():
    metric = create_metric("context_recall", VERIFIED)
    assert not metric.uses_judge() and create_metric("context_recall", {**VERIFIED, "statements": "claims"}).uses_judge()
    verdicts = metric.score_batch([EIFFEL], None)[0].details["statements"]
    assert [v["attributed"] for v in verdicts] == [1, 0]
    assert all(v["reason"] and math.isfinite(v["features"]["verifier"]) for v in verdicts)


def test_an_attribution_verdict_does_not_depend_on_the_question():
    metric = create_metric("context_recall", VERIFIED)
    probabilities = set()
    for question in ["", "When was the Eiffel Tower completed?", "Is it true that the Eiffel Tower was completed in 1889?"]:
        sample = EIFFEL.model_copy(update={"user_input": question})
        probabilities.add(tuple(v["probability"] for v in metric.score_batch([sample], None)[0].details["statements"]))
    assert len(probabilities) == 1


def test_the_same_input_gives_the_same_scores():
    metrics = [create_metric("context_relevance", VERIFIED), create_metric("context_recall", VERIFIED)]
    first = evaluate([EIFFEL, EIFFEL], metrics).results
    again = evaluate([EIFFEL], metrics).results
    assert first[0]["details"] == first[1]["details"] == again[0]["details"]


def test_the_cli_records_the_verifier_and_refuses_a_resume_with_another(tmp_path):
    data = tmp_path / "samples.jsonl"
    data.write_text((ROOT / "examples" / "rag_samples.jsonl").read_text(encoding="utf-8"), encoding="utf-8")
    out = tmp_path / "out.jsonl"
    runner = CliRunner()
    result = runner.invoke(cli, ["score", str(data), "-m", "context_relevance", "-m", "context_recall", "--verifier", "-o", str(out), "-q", "--no-timing"])
    assert result.exit_code == 0, result.output
    header, *rows = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    assert header["run"]["judge"] is None
    assert header["run"]["metrics"]["context_recall"]["verifier_file"] == {"file": "verifier.safetensors", "sha256": SHIPPED_SHA256}
    assert len(rows) == 4 and all(r["scores"]["context_recall"] is not None for r in rows)
    # The same file, as if another verifier had written its first rows.
    header["run"]["metrics"]["context_recall"]["verifier_file"]["sha256"] = "0" * 64
    out.write_text("\n".join(json.dumps(r) for r in [header, rows[0]]) + "\n", encoding="utf-8")
    resumed = runner.invoke(cli, ["score", str(data), "-m", "context_relevance", "-m", "context_recall", "--verifier", "-o", str(out), "-q", "--resume"])
    assert resumed.exit_code == 2 and "verifier" in resumed.output


def test_a_rubric_is_for_the_judge(tmp_path):
    rubric = tmp_path / "rubric.txt"
    rubric.write_text("{document} / {statement}: Yes or No?")
    assert create_metric("context_recall", {"rubric": str(rubric)}).uses_judge()
    assert create_metric("context_recall", {"rubric": str(rubric), "verifier": "false"}).uses_judge()
    with pytest.raises(ConfigError, match="rubric replaces the judge's task"):
        create_metric("context_recall", {"rubric": str(rubric), "verifier": "true"})


def test_a_calibration_file_without_a_judge_metric_is_refused(tmp_path):
    data = tmp_path / "samples.jsonl"
    data.write_text((ROOT / "examples" / "rag_samples.jsonl").read_text(encoding="utf-8"), encoding="utf-8")
    result = CliRunner().invoke(cli, ["score", str(data), "-m", "context_recall", "--verifier", "--calibration", str(tmp_path / "absent.json")])
    assert result.exit_code == 2 and "drop --verifier" in result.output
