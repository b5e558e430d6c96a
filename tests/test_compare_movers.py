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


def test_a_recovered_gold_context_at_rank_3_that_lowers_average_precision_says_why():
    """Average precision counts rank: a third relevant context below an irrelevant one lowers it
    though nothing relevant was lost. The mover says so, as text and as fields."""
    base = {"retrieved": [{"best_reference": 0, "similarity": 1.0, "relevant": True}, {"best_reference": None, "similarity": None, "relevant": False}]}
    candidate = {"retrieved": [*base["retrieved"], {"best_reference": 1, "similarity": 0.9, "relevant": True}]}
    (change,) = what_changed((base, candidate), (None, None), (1.0, 5 / 6))
    assert change.kind == "relevant_ranks" and change.fields == {"base_ranks": [1], "candidate_ranks": [1, 3], "rank_lowered_score": True}
    assert change.text.startswith("relevant contexts at rank 1 in the base, at ranks 1, 3 in the candidate; the score fell though no relevant context was lost: average precision counts rank")
    lost = {"contexts": [{"useful": 0}, {"useful": 0}]}
    (fell,) = what_changed(({"contexts": [{"useful": 1}, {"useful": 0}]}, lost), (None, None), (1.0, 0.0))
    assert fell.fields["rank_lowered_score"] is False and "counts rank" not in fell.text  # a relevant context lost: that is why


def test_a_response_that_changed_at_its_end_is_quoted_where_it_differs():
    start = "The museum was founded in the nineteenth century by a king whose treaty ended the war on the island, " * 3
    samples = (ScoredSample("q", (), start + "in Paris."), ScoredSample("q", (), start + "in Lyon."))
    (change,) = what_changed(({}, {}), samples)
    assert change.kind == "response_changed" and change.fields["first_difference"] == len(start) + 3
    assert change.fields["base"].endswith("island, in Paris.") and change.fields["candidate"].endswith("island, in Lyon.") and change.fields["base"].startswith("...")
    assert change.text.startswith(f"response changed from character {len(start) + 4}: '...") and len(change.text) < 200


def test_quotes_carry_no_backslashes():
    """Python's repr escaped a quote inside a text, and every report showed the backslash."""
    base = {"statements": [verdict("Maria's name is \"Mary\".", 1, reason="it never mentions 'maria' nor \"Maria\"")]}
    candidate = {"statements": [verdict("Maria's name is \"Mary\".", 0, reason="it never mentions 'maria'")]}
    (change,) = what_changed((base, candidate), (None, None))
    assert "\\" not in change.text
    assert change.text == "statement \u201cMaria's name is \"Mary\".\u201d: attributed in the base (\u201cit never mentions 'maria' nor \"Maria\"\u201d), not attributed in the candidate (\"it never mentions 'maria'\")"
    assert change.to_json_dict() == {
        "kind": "verdict_flipped", "list": "statements", "statement": "Maria's name is \"Mary\".", "base": True, "candidate": False,
        "base_evidence": "it never mentions 'maria' nor \"Maria\"", "candidate_evidence": "it never mentions 'maria'", "text": change.text,
    }
