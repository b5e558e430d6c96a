"""With the verifier, every token of a statement and of the context is read: a statement longer
than the verifier reads at once is read in pieces (supported only if every piece is), a context
sentence longer than a window is read across overlapping windows, a long context_relevance unit
in overlapping parts, and a question too long to read is the sample's error. The shipped
verifier weights decide, as in tests/test_verifier.py."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from localeval.data.samples import Sample
from localeval.metrics import create_metric
from localeval.verifier import load_verifier
from localeval.verifier.pairs import FIRST_TOKENS, SENTENCE_TOKENS
from localeval.verifier.pieces import split_text

VERIFIED = {"verifier": True}
EIFFEL = (
    "The Eiffel Tower is a wrought-iron lattice tower on the Champ de Mars in Paris, France. "
    "It is named after the engineer Gustave Eiffel, whose company designed and built the tower. "
    "It was constructed from 1887 to 1889 as the centrepiece of the 1889 World's Fair. "
    "The tower is 330 metres tall, about the same height as an 81-storey building, and is the tallest structure in Paris."
)
# 75 tokens, every word of it in EIFFEL: more than the verifier reads of a statement at once (64).
SUPPORTED = (
    "The Eiffel Tower, a wrought-iron lattice tower that stands on the Champ de Mars in Paris, France, is named after the engineer "
    "Gustave Eiffel, whose company designed and built the tower from 1887 to 1889 as the centrepiece of the 1889 World's Fair, "
    "and the tower is 330 metres tall, about the same height as an 81-storey building"
)
INVENTED_TAIL = ", and in 1925 the tower was taken apart and shipped to Melbourne, Australia, where it was painted bright green for the Olympic Games."
# One sentence of 139 tokens whose last 23 state a fact no earlier word does.
LATE_FACT = (
    "The Eiffel Tower, which stands on the Champ de Mars in Paris and was designed by the engineering company of Gustave Eiffel, "
    "was at first criticised by some of France's leading artists and intellectuals for its design, who called it useless and monstrous in a petition, "
    "yet it has since become a global cultural icon of France and one of the most recognisable structures in the world, visited by millions of people every year "
    "who climb its stairs or ride its lifts to the platforms on its three levels, from where they can see the whole city on a clear day"
    ", and its restaurant on the second level, Le Jules Verne, was awarded a Michelin star in 2019."
)


def faithfulness(context: str, response: str):
    metric = create_metric("faithfulness", VERIFIED)
    return metric.score_batch([Sample(user_input="Tell me about the Eiffel Tower.", retrieved_contexts=[context], response=response)], None)[0]


def test_a_long_statement_with_an_invented_tail_is_read_whole_and_not_attributed():
    encode = load_verifier().tokenizer.encode
    assert len(encode(SUPPORTED)) > FIRST_TOKENS
    (whole,) = faithfulness(EIFFEL, SUPPORTED + ".").details["statements"]
    assert whole["attributed"] == 1 and whole["pieces"] == 2  # a long true statement stays attributed
    score = faithfulness(EIFFEL, SUPPORTED + INVENTED_TAIL)
    (verdict,) = score.details["statements"]
    assert verdict["pieces"] == 3  # pieces of at most STATEMENT_PIECE_TOKENS: the invented clause is most of the last
    assert score.value == 0.0 and verdict["attributed"] == 0
    assert verdict["probability"] < 0.5 < whole["probability"]  # not the probability of its supported part


def test_a_fact_late_in_one_long_context_sentence_is_read():
    encode = load_verifier().tokenizer.encode
    assert len(encode(LATE_FACT)) > 128 and LATE_FACT.count(". ") == 0  # one sentence, longer than the verifier's whole input
    statement = "Le Jules Verne, the restaurant on the Eiffel Tower's second level, was awarded a Michelin star in 2019."
    score = faithfulness(LATE_FACT, statement)
    (verdict,) = score.details["statements"]
    assert score.value == 1.0 and verdict["probability"] > 0.8 and "pieces" not in verdict


def test_context_relevance_reads_a_long_unit_in_overlapping_parts():
    verifier = load_verifier()
    question = "Which restaurant on the Eiffel Tower's second level was awarded a Michelin star in 2019?"
    metric = create_metric("context_relevance", VERIFIED)
    score = metric.score_batch([Sample(user_input=question, retrieved_contexts=[LATE_FACT, "Paris is the capital of France. The Louvre is a museum."])], None)[0]
    assert score.details["unit_parts"] == [2, 1, 1]
    calibration = verifier.calibration["relevance"]
    parts = split_text(LATE_FACT, verifier.tokenizer.encode, SENTENCE_TOKENS, overlap=SENTENCE_TOKENS // 4)
    read = max(verifier.logits("relevance", [(question, part, LATE_FACT) for part in parts]))
    first_part_only = verifier.logits("relevance", [(question, LATE_FACT, LATE_FACT)])[0]  # what the cut at 96 tokens read
    assert score.details["probabilities"][0] == round(calibration.probability(read), 4)
    assert score.details["probabilities"][0] > 5 * calibration.probability(first_part_only)
    assert score.details["selected"] == [0]


def test_a_question_longer_than_the_verifier_reads_is_the_samples_error():
    question = "Considering everything the retrieved passages say about the tower, its builders, its height, " * 4 + "when was it finished?"
    metric = create_metric("context_relevance", VERIFIED)
    score = metric.score_batch([Sample(user_input=question, retrieved_contexts=[EIFFEL])], None)[0]
    assert score.value is None and f"more than the {FIRST_TOKENS} the verifier reads" in score.error and "without --verifier" in score.error


@settings(max_examples=60, deadline=None)
@given(
    words=st.lists(st.sampled_from(["tower", "Eiffel", "1889", "wrought-iron", "a", "Champ-de-Mars,", "x" * 120, "!!!!!!!!!!", "naïve", "東京"]), max_size=120),
    limit=st.sampled_from([8, 24, 64]),
    overlap=st.sampled_from([0, 4]),
)
def test_pieces_fit_and_leave_no_token_out(words, limit, overlap):
    encode = load_verifier().tokenizer.encode
    text = " ".join(words)
    pieces = split_text(text, encode, limit, overlap=overlap)
    if len(encode(text)) <= limit:
        assert pieces == [text]
        return
    assert all(len(encode(piece)) <= limit for piece in pieces)
    if not overlap:  # consecutive pieces: together exactly the text's tokens
        assert [t for piece in pieces for t in encode(piece)] == encode(text)
    else:  # windows: each starts inside the one before, the first at the text's start, the last at its end
        tokens = encode(text)
        assert encode(pieces[0]) == tokens[: len(encode(pieces[0]))] and encode(pieces[-1]) == tokens[len(tokens) - len(encode(pieces[-1])) :]
