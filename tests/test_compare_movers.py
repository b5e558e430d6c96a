"""What changed in a sample's details between two runs: the statements whose verdict flipped with
each run's evidence, units selected in one run only; untrusted details are passed over."""

from __future__ import annotations

from typing import Any

from localeval.comparison.inputs import ScoredSample
from localeval.comparison.movers import MAX_CHANGES, what_changed


def texts(details: tuple[dict[str, Any] | None, dict[str, Any] | None], samples: tuple[ScoredSample | None, ScoredSample | None]) -> tuple[str, ...]:
    return tuple(change.text for change in what_changed(details, samples))


def verdict(text: str, attributed: int, reason: str | None = None, evidence: list[int] | None = None) -> dict[str, object]:
    return {"statement": text, "attributed": attributed, "probability": 0.5, "reason": reason, "evidence": evidence or []}


def test_a_flipped_statement_is_named_with_the_evidence_of_each_run():
    base = {"statements": [verdict("Paris is the capital.", 1, reason="'capital of France' in context 1"), verdict("It has 2M people.", 0)]}
    candidate = {"statements": [verdict("Paris is the capital.", 0, evidence=[3, 4]), verdict("It has 2M people.", 0)]}
    assert texts((base, candidate), (None, None)) == (
        "statement 'Paris is the capital.': attributed in the base (\"'capital of France' in context 1\"), not attributed in the candidate (context sentences 3, 4)",
    )


def test_statements_and_units_in_one_run_only_and_reordered_contexts():
    base = {"statements": [verdict("Old.", 1)], "selected_sentences": ["A.", "B."]}
    candidate = {"statements": [verdict("New.", 0)], "selected_sentences": ["B.", "C."]}
    samples = (ScoredSample("q", ("x", "y")), ScoredSample("q", ("y", "x")))
    assert texts((base, candidate), samples) == (
        "the same contexts in another order",
        "statement judged only in the candidate (not attributed): 'New.'",
        "statement judged only in the base (attributed): 'Old.'",
        "unit selected in the candidate only: 'C.'",
        "unit selected in the base only: 'A.'",
    )


def test_details_of_another_shape_are_passed_over_and_long_lists_are_cut():
    crafted = {"statements": "not a list", "selected_sentences": [{"x": 1}], "found": None}
    assert what_changed((crafted, {"statements": [{"statement": 3, "attributed": 1}, {"statement": "s", "attributed": "yes"}]}), (None, None)) == ()
    many = {"selected_sentences": [f"S{i}." for i in range(20)]}
    found = texts(({}, many), (None, None))
    assert len(found) == MAX_CHANGES + 1 and found[-1] == f"... and {20 - MAX_CHANGES} more changes"
