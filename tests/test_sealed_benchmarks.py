"""benchmarks/verifier_accuracy.py's sealed tasks, on made-up files: the per-shape arithmetic and
what `--limit` takes. The scorer is a stand-in (the test is about the benchmark's own counting;
the metrics' decisions have their own tests)."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))

import verifier_accuracy  # noqa: E402
import verifier_sealed  # noqa: E402


class FixedScorer:
    """Selects the units named for each question; attributes every statement but the ones named."""

    def __init__(self, selections: dict[str, list[int]], unsupported: set[str]) -> None:
        self.selections, self.unsupported = selections, unsupported
        self.seen: list[str] = []

    def select(self, question: str, contexts: list[str], cost: str | None = None) -> dict[str, Any]:
        return {"selected": self.selections[question]}

    def verdicts(self, sample: Any, statements: list[str], cost: str | None = None) -> list[dict[str, Any]]:
        self.seen.extend(statements)
        return [{"attributed": s not in self.unsupported, "probability": float(s not in self.unsupported)} for s in statements]


def write_lines(path: Path, rows: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def test_sealed_relevance_is_f1_per_shape_and_insufficient_where_nothing_answers(tmp_path: Path) -> None:
    rows = [
        {"source": "selqa", "shape": "plain", "question": "q1", "contexts": ["a"], "required": [0]},
        {"source": "selqa", "shape": "plain", "question": "q2", "contexts": ["a"], "required": [0, 1]},
        {"source": "selqa", "shape": "plain", "question": "q3", "contexts": ["a"], "required": [2]},
        {"source": "selqa", "shape": "plain without answer", "question": "q4", "contexts": ["a"], "required": []},
        {"source": "selqa", "shape": "plain without answer", "question": "q5", "contexts": ["a"], "required": []},
    ]
    scorer = FixedScorer({"q1": [0], "q2": [0], "q3": [1], "q4": [], "q5": [3]}, set())
    figures = verifier_accuracy.sealed(scorer, None, write_lines(tmp_path / "sealed.jsonl", rows))
    assert figures["selqa plain"]["n"] == 3
    assert figures["selqa plain"]["f1"] == pytest.approx((1.0 + 2 / 3 + 0.0) / 3)
    assert figures["selqa plain without answer"] == {"n": 2, "insufficient": 0.5}
    limited = verifier_accuracy.sealed(scorer, 1, tmp_path / "sealed.jsonl")
    assert limited["selqa plain"]["f1"] == 1.0 and limited["selqa plain without answer"]["n"] == 1  # the first sample of each shape


def test_a_sealed_summary_is_called_factual_only_when_every_statement_is_attributed(tmp_path: Path) -> None:
    summaries = [
        {"user_input": "", "retrieved_contexts": ["doc"], "statements": ["s1", "s2"], "summary_label": 1},
        {"user_input": "", "retrieved_contexts": ["doc"], "statements": ["s3", "bad"], "summary_label": 0},
        {"user_input": "", "retrieved_contexts": ["doc"], "statements": ["s4"], "summary_label": 0},
    ]
    path = write_lines(tmp_path / "news.jsonl", summaries)
    figures = verifier_accuracy.sealed_news(FixedScorer({}, {"bad"}), None, path)["summaries"]
    assert figures == {"n": 3, "factual": 1, "called factual": 2, "balanced_accuracy": pytest.approx((1.0 + 0.5) / 2)}


def test_sealed_claims_are_scored_per_source_and_averaged_over_sources(tmp_path: Path) -> None:
    claims = [
        {"source": "checkcovid", "group": "g1", "statement": "true one", "contexts": ["doc"], "label": 1},
        {"source": "checkcovid", "group": "g2", "statement": "bad", "contexts": ["doc"], "label": 0},
        {"source": "citint", "group": "g3", "statement": "true two", "contexts": ["doc"], "label": 1},
        {"source": "citint", "group": "g4", "statement": "false but attributed", "contexts": ["doc"], "label": 0},
    ]
    path = write_lines(tmp_path / "claims.jsonl", claims)
    figures = verifier_accuracy.document_claims(FixedScorer({}, {"bad"}), None, path)
    assert figures["checkcovid"]["balanced_accuracy"] == 1.0 and figures["citint"]["balanced_accuracy"] == 0.5
    assert figures["citint"]["attributed"] == 1.0 and figures["citint"]["supported"] == 0.5
    assert figures["mean balanced accuracy over sources"] == pytest.approx(0.75)
    assert figures["checkcovid"]["n"] == 2
    scorer = FixedScorer({}, {"bad"})
    limited = verifier_accuracy.document_claims(scorer, 1, path)
    assert [limited[source]["n"] for source in ("checkcovid", "citint")] == [1, 1]
    # the same claims verifier_sealed.py --claims 1 scores for the verifier alone
    assert scorer.seen == [c["statement"] for c in verifier_sealed.seeded_per_source(claims, 1)]
