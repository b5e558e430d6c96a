"""The evidence's similarity (rapidfuzz's partial_ratio, statement against each context sentence)
is bounded: a pair too long to align is not measured, the evidence and the verdict's details say
which sentences, and ordinary text gets exactly the similarity it always got.

Not timed tests: they count what reaches partial_ratio."""

from types import SimpleNamespace

from rapidfuzz import fuzz

from localeval.data.samples import Sample
from localeval.data.text import split_sentences
from localeval.graders import evidence
from localeval.graders.evidence import SIMILARITY_MAX_WORK, statement_evidence
from localeval.metrics import create_metric
from localeval.testing import ScriptedJudge

LONG_SENTENCE = "the river rose in spring and the town was flooded again " * 360  # 20,160 characters, one sentence (no full stop)
LONG_STATEMENT = "the river rose in spring and the town was floded agin " * 40  # 2,160 characters, not in the sentence verbatim


def counting_partial_ratio(monkeypatch):
    """The real partial_ratio, recording the lengths of every pair it is given."""
    seen: list[tuple[int, int]] = []

    def partial_ratio(a, b, **kwargs):
        seen.append((len(a), len(b)))
        return fuzz.partial_ratio(a, b, **kwargs)

    monkeypatch.setattr(evidence, "fuzz", SimpleNamespace(partial_ratio=partial_ratio))
    return seen


def test_a_pair_too_long_to_align_is_not_measured_and_the_evidence_says_so(monkeypatch):
    seen = counting_partial_ratio(monkeypatch)
    short = "The town was flooded in spring."
    found = statement_evidence(LONG_STATEMENT, [short, LONG_SENTENCE])
    assert found.unmeasured == (1,)
    assert all(min(a, b) ** 2 * max(a, b) <= SIMILARITY_MAX_WORK for a, b in seen)
    assert seen == [(len(LONG_STATEMENT), len(short))]  # the short sentence is measured as before
    assert {m.index: m.similarity for m in found.matches}[1] == 0.0
    # Its words are still read: the long sentence holds every content word but the two misspelt
    # ones, and so still ranks first.
    assert (found.matches[0].index, found.matches[0].coverage) == (1, 4 / 6)
    assert set(found.missing) == {"floded", "agin"}


def test_a_statement_inside_a_long_sentence_verbatim_is_1_without_the_kernel(monkeypatch):
    seen = counting_partial_ratio(monkeypatch)
    inside = LONG_SENTENCE[56 * 40 : 56 * 80]  # 2,240 characters of the sentence itself
    found = statement_evidence(inside, [LONG_SENTENCE])
    assert seen == [] and found.unmeasured == ()
    assert found.best_similarity == 1.0 == fuzz.partial_ratio(inside, LONG_SENTENCE) / 100


def test_ordinary_text_gets_exactly_partial_ratio():
    statement = "The Eiffel Tower was completed in 1889 for the World's Fair."
    sentences = [
        "Construction of the tower began in 1887.",
        "It was finished in March 1889, in time for the Exposition Universelle, the world's fair of that year. " * 8,  # 800+ characters
        "",
    ]
    found = statement_evidence(statement, sentences)
    assert found.unmeasured == ()
    assert {m.index: m.similarity for m in found.matches} == {i: fuzz.partial_ratio(statement.lower(), s.lower()) / 100 for i, s in enumerate(sentences)}


def test_the_verdict_names_the_unmeasured_sentences(monkeypatch):
    seen = counting_partial_ratio(monkeypatch)
    metric = create_metric("faithfulness", {"reasons": False})
    sample = Sample(user_input="What happened to the town?", retrieved_contexts=[LONG_SENTENCE], response=LONG_STATEMENT)
    (score,) = metric.score_batch([sample], ScriptedJudge(context_size=32768))
    (verdict,) = score.details["statements"]
    pieces = split_sentences(LONG_SENTENCE)  # pysbd's windows cut it at 6,000 characters: 4 pieces, each too long to align
    assert len(pieces) == 4 and verdict["similarity_unmeasured"] == [0, 1, 2, 3]
    assert seen == []
    assert "similarity_unmeasured" not in metric.score_batch([Sample(user_input="q", retrieved_contexts=["The town flooded."], response="The town flooded.")], ScriptedJudge())[0].details["statements"][0]
