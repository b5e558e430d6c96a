"""The statement table's decision across kinds of text (training/statement_table_kinds.py) and the
rows it is decided on (benchmarks/statement_kinds.py): what ships as the default judge's table
follows from this arithmetic, so the sampling, the per-kind figures and both steps of the rule
are checked by hand here."""

from __future__ import annotations

import random
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "training"))
sys.path.insert(0, str(ROOT / "benchmarks"))

import statement_kinds  # noqa: E402
import statement_table_kinds as table  # noqa: E402


def test_a_balanced_sample_takes_half_of_each_label_and_fills_from_the_other_when_one_runs_short():
    items = [{"label": 1, "n": i} for i in range(10)] + [{"label": 0, "n": i} for i in range(3)]
    picked = statement_kinds.balanced_sample(items, "label", 6, random.Random(1))
    assert sorted(i["label"] for i in picked) == [0, 0, 0, 1, 1, 1]
    picked = statement_kinds.balanced_sample(items, "label", 10, random.Random(1))
    assert sorted(i["label"] for i in picked) == [0, 0, 0] + [1] * 7
    assert sorted(i["n"] for i in statement_kinds.balanced_sample(items[:2], "label", 6, random.Random(1))) == [0, 1]


def test_the_text_measures_count_words_sentences_and_numbers():
    measures = {**statement_kinds.statement_measures("Revenue rose 12% in 2023."), **statement_kinds.context_measures(["Revenue rose. It rose by 12% in 2023.", "Costs fell."])}
    assert measures["statement_words"] == 5
    assert measures["context_words"] == 10
    assert measures["context_sentences"] == 3
    assert measures["numeric_share"] == pytest.approx(2 / 5)


def row(kind: str, label: int | None, logit: float, case: str, summary_label: int | None = None) -> dict:
    return {"kind": kind, "label": label, "summary_label": summary_label, "case": case, "shipped_logit": logit}


def test_a_news_summary_is_called_factual_only_when_every_statement_is_attributed():
    rows = [row("news", 1, 2.0, "a", 1), row("news", 1, -2.0, "a", 1), row("news", None, 2.0, "b", 0), row("news", None, 2.0, "b", 0)]
    figures = table.figures(rows, table.shipped_probabilities(rows))
    # Summary a (factual) is missed for one statement; b (not factual) is called factual: 0.0 balanced accuracy.
    assert figures["news"] == {"n": 2, "balanced_accuracy": 0.0, "share_gap": 0.0}
    claims = [row("claims", 1, 1.0, "c"), row("claims", 0, 1.0, "d"), row("claims", 0, -1.0, "e")]
    figures = table.figures(claims, table.shipped_probabilities(claims))
    assert figures["claims"]["balanced_accuracy"] == pytest.approx(0.75)
    assert figures["claims"]["share_gap"] == pytest.approx(2 / 3 - 1 / 3)
    assert figures["mean over kinds"]["balanced_accuracy"] == pytest.approx(0.75)


def test_no_candidate_is_chosen_where_the_shipped_table_is_already_right_on_every_kind():
    rng = random.Random(3)
    rows = []
    for kind in ("claims", "transcripts"):
        for n in range(40):
            label = n % 2
            features = {name: rng.random() for name in (*table.EVIDENCE, "log_context_words", "log_context_sentences", "log_statement_words", "numeric_share")}
            rows.append({**row(kind, label, 3.0 if label else -3.0, f"{kind}{n}"), **features})
    chosen, results = table.choose(rows)
    assert chosen is None
    assert results["shipped table"]["mean over kinds"]["balanced_accuracy"] == 1.0


def test_the_sealed_step_refuses_a_table_that_costs_one_kind_more_than_the_tolerance(monkeypatch):
    # The candidate table is whatever `fitted` returns; here one that gains on claims and loses a transcript.
    def fitted(rows, features):
        return lambda test: [0.9 if (r["kind"] == "claims" and r["label"] == 1) or (r["kind"] == "transcripts" and r["case"] == "t0") else 0.1 for r in test]

    monkeypatch.setattr(table, "fitted", fitted)
    sealed = [row("claims", 1, -1.0, "c0"), row("claims", 0, -1.0, "c1"), row("transcripts", 1, 1.0, "t0"), row("transcripts", 0, -1.0, "t1"),
              row("transcripts", 1, 1.0, "t2")]
    ships, results = table.sealed_decision([], sealed, "judge, best_coverage refitted")
    assert results["judge, best_coverage refitted"]["claims"]["balanced_accuracy"] > results["shipped table"]["claims"]["balanced_accuracy"]
    assert results["judge, best_coverage refitted"]["transcripts"]["balanced_accuracy"] < results["shipped table"]["transcripts"]["balanced_accuracy"] - table.SEALED_TOLERANCE
    assert not ships


def test_a_refit_that_gains_on_every_kind_is_chosen():
    """Where the shipped table calls everything attributed (0.5 on each kind) and the judge's
    log-odds separate the labels, a refit over the judge keeps every kind and is chosen."""
    rows = []
    for kind in ("claims", "transcripts"):
        for n in range(40):
            label = n % 2
            features = {name: 0.0 for name in (*table.EVIDENCE, *table.TEXT)}
            rows.append({**row(kind, label, 3.0, f"{kind}{n}"), **features, "judge": 2.0 if label else -2.0})
    chosen, results = table.choose(rows)
    assert chosen is not None
    assert all(results[chosen][kind]["balanced_accuracy"] == 1.0 for kind in ("claims", "transcripts"))
    assert results["shipped table"]["mean over kinds"]["balanced_accuracy"] == 0.5
