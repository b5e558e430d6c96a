"""The hand-written plain cases (benchmarks/data/plain_cases.jsonl, and the sealed
plain_cases_sealed.jsonl written blind on 2026-11-27) go through the benchmark's own runner with the real small model: the plumbing CI can afford. Whether the default judge
gets them right is a benchmark figure (`python benchmarks/accuracy.py --task plain`, README),
not a unit test: a 135M model is no judge."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from localeval.data.text import split_sentences

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))

import verifier_accuracy  # noqa: E402


def read_cases(name: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (ROOT / "benchmarks" / "data" / name).read_text().splitlines() if line.strip()]


@pytest.mark.parametrize(("name", "least"), [("plain_cases.jsonl", 40), ("plain_cases_sealed.jsonl", 30)])
def test_the_plain_cases_are_well_formed(name: str, least: int) -> None:
    rows = read_cases(name)
    assert len(rows) >= least and len({r["id"] for r in rows}) == len(rows)
    for row in rows:
        if row["kind"] == "relevance":
            units = [u for c in row["retrieved_contexts"] for u in split_sentences(c)]
            assert all(s in units for s in row["required"]), row["id"]  # each required sentence is a unit the metric decides
        else:
            assert row["label"] in (0, 1) and row["statement"], row["id"]


class RequiredFirst:
    """Selects each relevance case's first unit and attributes every statement: enough to count."""

    def select(self, question: str, contexts: list[str]) -> dict[str, Any]:
        first = split_sentences(contexts[0])[:1]
        return {"selected_sentences": first, "probabilities": [1.0]}

    def verdicts(self, sample: Any, statements: list[str]) -> list[dict[str, Any]]:
        return [{"attributed": 1, "probability": 1.0} for _ in statements]


def test_the_benchmark_scores_the_plain_file_it_is_given(tmp_path: Path) -> None:
    cases = tmp_path / "cases.jsonl"
    rows = [
        {"id": "x1", "kind": "relevance", "user_input": "q", "retrieved_contexts": ["Paris is in France. Rome is in Italy."], "required": ["Paris is in France."]},
        {"id": "x2", "kind": "relevance", "user_input": "q", "retrieved_contexts": ["Paris is in France. Rome is in Italy."], "required": []},
        {"id": "x3", "kind": "attribution", "user_input": "q", "retrieved_contexts": ["Paris is in France."], "statement": "Paris is in France.", "label": 0},
    ]
    cases.write_text("".join(json.dumps(r) + "\n" for r in rows))
    report = verifier_accuracy.plain(RequiredFirst(), cases)
    assert report["right"] == {"relevance": 1, "attribution": 0}
    assert [w.split(":")[0] for w in report["wrong"]] == ["x2", "x3"]


def test_the_plain_cases_run_through_the_benchmark(small_model_path, tmp_path):
    report = tmp_path / "report.json"
    finished = subprocess.run(
        [sys.executable, str(ROOT / "benchmarks" / "accuracy.py"), "--task", "plain", "--model", str(small_model_path), "--threads", "1", "--json", str(report)],
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert finished.returncode == 0, finished.stderr[-2000:]
    plain = json.loads(report.read_text())["plain"]
    assert plain["relevance"]["n"] == 24 and plain["attribution"]["n"] == 20
