"""No verdict without evidence (issue 68): a statement read against no text is not supported, a
statement copied word for word from the context is, a sample without a question cannot be scored
for relevance, a text of invisible characters is blank, reasons quote the texts as they stand, and
a sentence longer than the splitter's window is never cut inside a word. Real pysbd, the shipped
verifier, the real small GGUF judge where a grader needs one."""

from __future__ import annotations

import math
from typing import Any

import pytest

from localeval.data.samples import Sample
from localeval.data.text import WINDOW_CHARS, is_blank, split_sentences
from localeval.graders.verifier import EXACT_EVIDENCE, stated_in
from localeval.metrics import create_metric
from localeval.testing import ScriptedJudge

NO_TEXT = [[], [""], ["   ", "\n\t"], ["\u200b\u200d", "\ufeff"]]  # nothing retrieved, or only blank contexts
INVISIBLE = "\u200b\u200c\u200d\u2060\ufeff\u00ad"  # zero-width space and joiners, word joiner, byte order mark, soft hyphen


GRADER_FEATURES = {"verifier", "judge"}  # the features a verdict has when the verifier or the judge read it
GRADERS = ["verifier", pytest.param("judge", marks=pytest.mark.judge), pytest.param("stacked", marks=pytest.mark.judge)]


def _judge_for(grader: str, request: pytest.FixtureRequest) -> Any:
    """The real small judge for the graders that call one; none for the verifier."""
    return None if grader == "verifier" else request.getfixturevalue("small_judge")


@pytest.mark.parametrize("grader", GRADERS)
def test_a_statement_against_no_text_is_not_supported_whatever_the_grader(grader: str, request: pytest.FixtureRequest) -> None:
    """The verifier read "Dogs are animals." against nothing as supported (P 0.88): faithfulness
    and context_recall 1.0 with no context, factual_correctness 1.0 against a blank reference."""
    judge = _judge_for(grader, request)
    counted = ScriptedJudge()  # a judge that records what it is asked: the judge rule asks it nothing here
    for contexts in NO_TEXT:
        sample = Sample(user_input="Are dogs animals?", retrieved_contexts=contexts, response="Dogs are animals.", reference="Dogs are animals. Cats are too.")
        for name in ("faithfulness", "context_recall"):
            (score,) = create_metric(name, {"grader": grader}).score_batch([sample], judge)
            assert score.value == 0.0, (name, contexts)
            assert all(v["attributed"] == 0 and v["probability"] == 0.0 and v["reason"] == "not attributed; the context is empty" for v in score.details["statements"])
            assert not any(GRADER_FEATURES & set(v["features"]) for v in score.details["statements"])  # no grader read it
            create_metric(name, {"grader": "judge"}).score_batch([sample], counted)
    assert counted.calls == []
    factual = create_metric("factual_correctness", {"grader": grader})
    for blank in ("", "  \n", INVISIBLE):
        (score,) = factual.score_batch([Sample(response="Dogs are animals.", reference=blank)], judge)
        assert score.value == 0.0
        assert [(v["attributed"], v["probability"], v["reason"]) for v in score.details["response_statements"]] == [(0, 0.0, "not attributed; the reference is empty")]
        (score,) = factual.score_batch([Sample(response=blank, reference="Dogs are animals.")], judge)  # a blank response: the reference's statements
        assert score.value == 0.0
        assert [(v["attributed"], v["probability"], v["reason"]) for v in score.details["reference_statements"]] == [(0, 0.0, "not attributed; the response is empty")]


def test_a_statement_standing_word_for_word_in_the_context_is_supported() -> None:
    """The issue's two cases: P 0.37 and 0.30 before, while the fragment "Not the kidneys." was
    supported at 0.81; each is now supported, and says it was decided by exact evidence."""
    metric = create_metric("context_recall", {"grader": "verifier"})
    everest = "Mount Everest is the highest mountain on Earth. K2 is the second highest. Both are in Asia."
    cases = [
        ("Mount Everest is the highest mountain on Earth.", everest, [0]),
        ("The liver stores glycogen.", "Muscles burn glucose. The liver stores glycogen. Not the kidneys.", [1]),
        ("Not the kidneys.", "Muscles burn glucose. The liver stores glycogen. Not the kidneys.", [2]),
        ("The liver  stores\nglycogen", "Muscles burn glucose. The liver stores glycogen. Not the kidneys.", [1]),  # other whitespace, no full stop
        ("Mount Everest is the highest mountain on Earth. K2 is the second highest.", everest, [0, 1]),  # a run of two sentences
    ]
    for statement, context, sentences in cases:
        sample = Sample(user_input="", retrieved_contexts=[context])
        (verdict,) = metric.score_statements(sample, [statement], None).details["statements"]
        assert (verdict["attributed"], verdict["probability"], verdict["decided_by"]) == (1, 1.0, EXACT_EVIDENCE), statement
        assert verdict["evidence"] and set(verdict["evidence"]) <= set(sentences) and math.isfinite(verdict["features"]["verifier"]), verdict
        quoted = split_sentences(context)
        assert all(f'sentence {i + 1}: "{quoted[i]}"' in verdict["reason"] for i in verdict["evidence"]), verdict["reason"]  # the reason quotes the sentence
    (invented,) = metric.score_statements(Sample(user_input="", retrieved_contexts=[cases[1][1]]), ["The kidneys store glycogen."], None).details["statements"]
    assert "decided_by" not in invented and invented["probability"] < 1.0


def test_only_whole_sentences_count_as_exact_evidence() -> None:
    sentences = ["Dr. Smith works at MIT.", "She studies whales.", "The drug is effective in no patient."]
    assert stated_in("Dr. Smith works at MIT. She studies whales.", sentences) == range(0, 2)
    assert stated_in("She studies whales", sentences) == range(1, 2)
    assert stated_in("The drug is effective.", sentences) is None  # a prefix of a sentence says something else
    assert stated_in("Effective in no patient.", sentences) is None
    assert stated_in("she studies whales.", sentences) is None  # word for word, letters as written
    assert stated_in("", sentences) is None and stated_in("She studies whales.", []) is None


@pytest.mark.parametrize("grader", GRADERS)
def test_a_blank_question_is_an_error_for_context_relevance_whatever_the_grader(grader: str, request: pytest.FixtureRequest) -> None:
    """The verifier gave a blank question's every sentence 1.0 (a real question: 0.33)."""
    judge = _judge_for(grader, request)
    metric = create_metric("context_relevance", {"grader": grader})
    contexts = ["The Eiffel Tower is in Paris. It was completed in 1889. Bananas are yellow."]
    for question in ("", "   ", INVISIBLE):
        score, other = metric.score_batch([Sample(user_input=question, retrieved_contexts=contexts), Sample(user_input="When was the Eiffel Tower completed?", retrieved_contexts=contexts)], judge)
        assert score.value is None and score.error is not None and "the question (user_input) is blank" in score.error
        assert other.error is None and other.value is not None and 0.0 <= other.value <= 1.0  # the other sample is scored


def test_a_blank_question_is_an_error_for_answer_relevancy(small_judge: Any) -> None:
    """A blank question's embedding gave about 0.02, a score that reads as an off-topic answer."""
    metric = create_metric("answer_relevancy")
    answered = Sample(user_input="When was the Eiffel Tower completed?", response="The Eiffel Tower was completed in 1889.")
    for question in ("", " \t", INVISIBLE):
        score, other = metric.score_batch([Sample(user_input=question, response="The Eiffel Tower was completed in 1889."), answered], small_judge)
        assert score.value is None and score.error is not None and "the question (user_input) is blank" in score.error
        assert other.error is None and other.value is not None  # the other sample is scored


def test_a_text_of_invisible_characters_is_blank() -> None:
    """A response of zero-width characters scored 0 (its "sentence" unsupported) where a blank one is NaN."""
    assert is_blank(INVISIBLE + " \n") and is_blank("") and not is_blank("\u200bDogs")
    assert split_sentences(INVISIBLE) == [] and split_sentences(f"Dogs bark.\n{INVISIBLE}\n") == ["Dogs bark."]
    faithfulness = create_metric("faithfulness", {"grader": "verifier"})
    for response in ("   ", INVISIBLE):
        (score,) = faithfulness.score_batch([Sample(user_input="q", retrieved_contexts=["Dogs are animals."], response=response)], None)
        assert math.isnan(score.value) and score.details["statements"] == []  # type: ignore[arg-type]
    precision = create_metric("context_precision", {"grader": "verifier"})
    (score,) = precision.score_batch([Sample(user_input="q", retrieved_contexts=["Dogs are animals."], reference=INVISIBLE)], None)
    assert math.isnan(score.value) and score.details["blank_answer"]  # type: ignore[arg-type]


def test_factual_correctness_reasons_quote_the_texts_as_they_stand() -> None:
    """The reasons were reworded with replace("the context", "the reference"), which also
    rewrote the quoted sentences ("...the reference window of 4096 tokens")."""
    reference = "The judge reads the context window of 4096 tokens. It answers Yes or No."
    response = "The judge reads the context window of 4096 tokens. It writes poems about the context."
    (score,) = create_metric("factual_correctness", {"grader": "verifier"}).score_batch([Sample(response=response, reference=reference)], None)
    first, second = score.details["response_statements"]
    assert first["reason"] == 'attributed; closest evidence: sentence 1: "The judge reads the context window of 4096 tokens."'
    assert second["reason"].startswith("not attributed; the reference never mentions 'writes', 'poems'")
    assert all("the context window" in v["reason"] for v in score.details["reference_statements"] if v["evidence"] == [0])
    assert any(v["reason"].startswith("not attributed; the response never mentions") for v in score.details["reference_statements"])


def test_noise_sensitivity_reasons_quote_the_reference_as_it_stands() -> None:
    """noise_sensitivity reworded its reasons with the same replace()."""
    reference = "The judge reads the context window of 4096 tokens. It answers Yes or No."
    sample = Sample(user_input="What does the judge read?", retrieved_contexts=["The judge reads the context window of 4096 tokens."], response="The judge reads the context window of 4096 tokens.", reference=reference)
    (score,) = create_metric("noise_sensitivity", {"grader": "verifier"}).score_batch([sample], None)
    (row,) = score.details["statements"]
    assert row["reason"] == 'attributed; closest evidence: sentence 1: "The judge reads the context window of 4096 tokens."'


def test_a_sentence_longer_than_the_splitters_window_is_cut_between_words() -> None:
    """A sentence of over 6,000 characters was cut at the 6,000th, inside a word."""
    text = "abcdef " * 1200  # 8,400 characters, no sentence end: the cut at 6,000 fell inside a word
    assert len(text) > WINDOW_CHARS and text[WINDOW_CHARS - 1] != " " != text[WINDOW_CHARS]
    pieces = split_sentences(text)
    assert len(pieces) == 2 and all(set(piece.split()) == {"abcdef"} for piece in pieces)
    assert len(pieces[0]) == text.rfind(" ", 0, WINDOW_CHARS)  # cut at the last whitespace within the window
    assert " ".join(pieces).split() == text.split()
    unbroken = "x" * (WINDOW_CHARS + 500)  # one "word" longer than the window: cut at the window's end, nothing lost
    assert "".join(split_sentences(unbroken)) == unbroken


def test_an_attributed_statement_names_the_words_its_evidence_never_mentions() -> None:
    """The reason of an attributed verdict quoted its evidence and nothing else, so a verdict resting
    on a paraphrase (or wrong: "Insulin is produced by the liver" against a text on the liver alone,
    which the verifier attributed at P 0.52) read as certain as a copied one. A statement whose every
    word the context holds says nothing more."""
    context = "Guido van Rossum began working on Python in the late 1980s. Python 0.9.0 was first released in 1991."
    sample = Sample(retrieved_contexts=[context], reference="Python was created by Guido van Rossum. Python 0.9.0 was first released in 1991.")
    (score,) = create_metric("context_recall", {"grader": "verifier"}).score_batch([sample], None)
    paraphrase, copied = score.details["statements"]
    assert paraphrase["attributed"] == 1 and paraphrase["missing"] == ["created"]
    assert paraphrase["reason"].startswith('attributed; closest evidence: sentence 1: "Guido van Rossum')
    assert paraphrase["reason"].endswith("; the context never mentions 'created'")
    assert copied["reason"] == 'attributed; closest evidence: sentence 2: "Python 0.9.0 was first released in 1991."'
