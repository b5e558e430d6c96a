"""Score arithmetic and control flow of the judge metrics, with localeval.testing.ScriptedJudge.

The judge itself is tested for real in test_judge.py; here the verdicts are fixed so
that each rule (the calibrated combination, the chunks the judge reads, reasons that
quote their evidence, units, insufficient information, windows, NaN) is pinned down.
"""

import math
import re
from typing import Any

import pytest

from localeval import evaluate
from localeval.data.samples import Sample
from localeval.data.text import split_sentences
from localeval.graders import judge_units
from localeval.metrics import create_metric, recall, relevance
from localeval.metrics.recall import DEFAULT_CALIBRATION
from localeval.testing import ScriptedJudge

SAMPLE = Sample(
    user_input="Who founded the company and when?",
    retrieved_contexts=["Acme was founded by Ada Smith. It was founded in 1901.", "Acme sells anvils. Its logo is red."],
    reference="Ada Smith founded Acme. This happened in 1901. Acme is based in Ohio.",
)


def _only(features, name):
    """A calibration that follows one feature (the judge's verdict) and weighs the others 0."""
    return {"intercept": 0.0, "weights": {f: 1.0 if f == name else 0.0 for f in features}}


def rule(name: str, options: dict[str, Any] | None = None) -> Any:
    """The metric deciding with the judge-and-features rule (verifier off): what this file tests."""
    return create_metric(name, {"verifier": False, **(options or {})})


CERTAIN = {"attribution": _only(recall.FEATURES, "judge"), "relevance": _only(relevance.FEATURES, "judge_passage")}


def claim_of(messages):
    return re.search(r"Claim: (.*)\n", messages[-1]["content"]).group(1)


def document_of(messages):
    return messages[-1]["content"].split("Document:\n", 1)[1].split("\n\n", 1)[0]


def asked_paragraph(messages):
    """The paragraph a relevance prompt asks about (for a choice among sentences: the sentences)."""
    content = messages[-1]["content"]
    if "\n\nSentences:\n" in content:
        return " ".join(line.split(". ", 1)[1] for line in content.split("\n\nSentences:\n", 1)[1].split("\n\n", 1)[0].splitlines())
    return content.split("Paragraph: ", 1)[1].split("\n\nDoes the paragraph", 1)[0]


# -- context_recall ---------------------------------------------------------------


def test_recall_counts_statements_the_calibrated_combination_attributes():
    judge = ScriptedJudge(lambda m: 0.001 if "Ohio" in claim_of(m) else 0.999, calibration=CERTAIN)
    score = rule("context_recall").score_batch([SAMPLE], judge)[0]
    assert score.value == 2 / 3
    verdicts = score.details["statements"]
    assert [v["attributed"] for v in verdicts] == [1, 1, 0]
    assert verdicts[2]["probability"] == pytest.approx(0.001, abs=1e-4)  # sigmoid(judge log-odds)
    assert verdicts[2]["judge_log_odds"] == pytest.approx(math.log(0.001 / 0.999), abs=1e-3)


def test_recall_threshold_option_moves_the_decision():
    judge = ScriptedJudge(lambda m: 0.7, calibration=CERTAIN)
    assert rule("context_recall").score_batch([SAMPLE], judge)[0].value == 1.0
    assert rule("context_recall", {"threshold": "0.75"}).score_batch([SAMPLE], judge)[0].value == 0.0


def test_a_judge_without_a_calibration_uses_the_documented_default():
    judge = ScriptedJudge(lambda m: 0.5)
    verdicts = rule("context_recall").score_batch([SAMPLE], judge)[0].details["statements"]
    for verdict in verdicts:
        assert verdict["probability"] == pytest.approx(DEFAULT_CALIBRATION.probability(verdict["features"]), abs=1e-4)
    assert verdicts[2]["features"]["coverage"] < verdicts[0]["features"]["coverage"]  # "based", "ohio" are nowhere


def test_reasons_quote_their_evidence_and_name_what_is_missing():
    judge = ScriptedJudge(lambda m: 0.001 if "Ohio" in claim_of(m) else 0.999, calibration=CERTAIN)
    first, _, third = rule("context_recall").score_batch([SAMPLE], judge)[0].details["statements"]
    assert first["evidence"] == [0]
    assert first["reason"] == 'attributed; closest evidence: sentence 1: "Acme was founded by Ada Smith."'
    assert third["missing"] == ["based", "ohio"]  # content words the context never mentions, as written
    assert third["reason"].startswith("not attributed; the context never mentions 'based', 'ohio'")
    sentences = ["Acme was founded by Ada Smith.", "It was founded in 1901.", "Acme sells anvils.", "Its logo is red."]
    for verdict in (first, third):
        for index in verdict["evidence"]:
            assert f'"{sentences[index]}"' in verdict["reason"]  # a reason quotes only what its evidence says


def test_without_reasons_the_verdicts_keep_their_features_only():
    judge = ScriptedJudge(lambda m: 0.9, calibration=CERTAIN)
    verdicts = rule("context_recall", {"reasons": "false"}).score_batch([SAMPLE], judge)[0].details["statements"]
    assert all(set(v) == {"statement", "attributed", "probability", "judge_log_odds", "features"} for v in verdicts)


def _buried(filler: list[str]) -> Sample:
    """One long context with the statements' evidence in its middle."""
    return Sample(user_input="q", retrieved_contexts=[" ".join(filler[:30] + ["Ada Smith founded Acme in 1901."] + filler[30:])], reference="Ada Smith founded Acme. Acme was founded in 1901.")


def test_the_judge_reads_the_best_chunks_by_evidence_the_next_only_after_a_no():
    filler = [f"Filler sentence number {i} talks about weather and rain in detail." for i in range(60)]
    sample = _buried(filler)
    judge = ScriptedJudge(lambda m: 0.5, calibration=CERTAIN)
    score = rule("context_recall", {"chunks": "1"}).score_batch([sample], judge)[0]
    assert len(judge.calls) == 2  # one chunk per statement
    assert all("Ada Smith founded Acme in 1901." in document_of(call) for call in judge.calls)
    assert document_of(judge.calls[0]) == document_of(judge.calls[1])  # the shared chunk is asked about back to back
    assert len(document_of(judge.calls[0])) < len(" ".join(filler)) / 2  # a chunk, not the whole context
    doubting = ScriptedJudge(lambda m: 0.3, calibration=CERTAIN)  # No everywhere...
    rule("context_recall", {"chunks": "3"}).score_batch([sample], doubting)
    assert len(doubting.calls) == 2  # ...but the other chunks mention none of the statements' words: not read
    mentioning = _buried([f"Filler sentence number {i} says Ada Smith liked Acme and rain." for i in range(60)])
    doubting = ScriptedJudge(lambda m: 0.3, calibration=CERTAIN)
    rule("context_recall", {"chunks": "3"}).score_batch([mentioning], doubting)
    assert len(doubting.calls) == 6  # chunks that mention the statement: each statement's next best is read, up to 3
    convinced = ScriptedJudge(lambda m: 0.9, calibration=CERTAIN)  # Yes on the best chunk: nothing more to read
    rule("context_recall", {"chunks": "3"}).score_batch([sample], convinced)
    assert len(convinced.calls) == 2
    assert score.details["statements"][0]["evidence"]


def test_recall_prompt_puts_the_document_first_and_the_statement_last_and_never_the_question():
    judge = ScriptedJudge(calibration=CERTAIN)
    rule("context_recall").score_batch([SAMPLE], judge)
    content = judge.calls[0][-1]["content"]
    assert content.startswith("Document:\n")
    assert SAMPLE.user_input not in content and "The claim comes from an answer to" not in content
    assert content.rstrip().endswith("Answer Yes or No.")


def test_recall_without_statements_is_nan():
    score = rule("context_recall").score_batch([Sample(user_input="q", retrieved_contexts=["c"], reference="  ")], ScriptedJudge())[0]
    assert math.isnan(score.value)


def test_recall_claims_mode_uses_the_judges_claims():
    judge = ScriptedJudge(lambda m: 0.999 if "Ada" in claim_of(m) else 0.001, lambda m, s: {"claims": ["Ada Smith founded Acme.", "Acme is in Ohio."]}, calibration=CERTAIN)
    score = rule("context_recall", {"statements": "claims"}).score_batch([SAMPLE], judge)[0]
    assert [s["statement"] for s in score.details["statements"]] == ["Ada Smith founded Acme.", "Acme is in Ohio."]
    assert score.value == 0.5


def answered_text(messages):
    """The text a claims request asks the judge to break up."""
    return messages[-1]["content"].split("Answer: ", 1)[1].split("\n\n", 1)[0]


def claims_up_to_the_limit(per_sentence=1):
    """A judge's claims as the JSON schema lets it give them: `per_sentence` claims for each
    sentence it is asked about, at most MAX_CLAIMS in one answer (the rest never written)."""

    def answer(messages, schema):
        claims = [f"{sentence} (claim {k + 1})" if per_sentence > 1 else sentence for sentence in split_sentences(answered_text(messages)) for k in range(per_sentence)]
        return {"claims": claims[: recall.MAX_CLAIMS]}

    return answer


SIXTEEN = Sample(
    user_input="What does the report say?",
    retrieved_contexts=[" ".join(f"Fact {i} is true." for i in range(1, 16))],
    response=" ".join(f"Fact {i} is true." for i in range(1, 16)) + " The moon is made of cheese.",
)


def test_claims_past_the_schemas_limit_are_all_judged():
    """A 16-sentence response whose 16th sentence is invented: one answer holds at most 12 claims,
    so the response is decomposed again in halves and the invented sentence is judged (0.9375,
    as with statements=sentences), where the first 12 claims alone scored 1.0."""
    judge = ScriptedJudge(lambda m: 0.001 if "cheese" in claim_of(m) else 0.999, claims_up_to_the_limit(), calibration=CERTAIN)
    score = rule("faithfulness", {"statements": "claims"}).score_batch([SIXTEEN], judge)[0]
    assert [v["statement"] for v in score.details["statements"]] == split_sentences(SIXTEEN.response)
    assert score.value == 15 / 16 == rule("faithfulness").score_batch([SIXTEEN], judge)[0].value
    assert score.details["claims_requests"] == 3  # the whole, then each half of 8 sentences
    asked = [answered_text(m) for m in judge.calls if "Answer: " in m[-1]["content"]]
    assert asked == [SIXTEEN.response, *(" ".join(split_sentences(SIXTEEN.response)[h * 8 : h * 8 + 8]) for h in (0, 1))]


def test_a_sentence_whose_claims_still_reach_the_limit_is_judged_as_it_stands():
    judge = ScriptedJudge(lambda m: 0.001 if "cheese" in claim_of(m) else 0.999, claims_up_to_the_limit(per_sentence=7), calibration=CERTAIN)
    score = rule("faithfulness", {"statements": "claims"}).score_batch([SIXTEEN], judge)[0]
    verdicts = score.details["statements"]
    # Two sentences give 14 claims (past the limit), so every sentence is asked alone: 7 claims each.
    assert len(verdicts) == 16 * 7 and not any(v.get("kept_sentence") for v in verdicts)
    assert score.details["claims_requests"] == 1 + 2 + 4 + 8 + 16
    one_sentence = Sample(user_input="q", retrieved_contexts=["Fact 1 is true."], response="Fact 1 is true, and the moon is made of cheese.")
    crowded = ScriptedJudge(lambda m: 0.001 if "cheese" in claim_of(m) else 0.999, claims_up_to_the_limit(per_sentence=12), calibration=CERTAIN)
    score = rule("faithfulness", {"statements": "claims"}).score_batch([one_sentence], crowded)[0]
    (verdict,) = score.details["statements"]
    assert verdict["statement"] == one_sentence.response and verdict["kept_sentence"] is True and score.value == 0.0
    assert "claims_requests" not in score.details  # asked once: the sentence is the whole response


def test_claims_under_the_limit_are_one_request_as_before():
    judge = ScriptedJudge(lambda m: 0.999, claims_up_to_the_limit(), calibration=CERTAIN)
    short = Sample(user_input="q", retrieved_contexts=["Fact 1 is true."], response="Fact 1 is true. Fact 2 is true.")
    score = rule("context_recall", {"statements": "claims"}).score_batch([short.model_copy(update={"reference": short.response})], judge)[0]
    assert len(judge.calls) == 1 + 2 and "claims_requests" not in score.details  # one claims request, one verdict per claim
    assert not any("kept_sentence" in v for v in score.details["statements"])


def test_a_sentence_longer_than_the_window_is_a_per_sample_error():
    giant = Sample(user_input="q", retrieved_contexts=["word " * 3000], reference="r")
    ok = Sample(user_input="q", retrieved_contexts=["short."], reference="r")
    run = evaluate([giant, ok], [rule("context_relevance"), rule("context_recall")], judge=ScriptedJudge(context_size=1200, calibration=CERTAIN))
    first, second = run.results
    assert "raise --n-ctx" in first["errors"]["context_recall"] and "raise --n-ctx" in first["errors"]["context_relevance"]
    assert second["errors"] == {}


def test_a_raw_control_character_in_a_judge_string_still_parses():
    from localeval.errors import JudgeError
    from localeval.judge.llama import parse_answer
    from localeval.metrics.recall import Claims

    assert parse_answer('{"claims": ["line one\nline two\ttab"]}', Claims).claims == ["line one\nline two\ttab"]
    with pytest.raises(JudgeError, match="does not fit Claims"):
        parse_answer('{"claims": []}', Claims)


def test_a_non_english_sample_is_split_in_its_language():
    german = Sample(user_input="Wann wurde der Turm fertiggestellt?", retrieved_contexts=["Der Turm wurde am 31. März 1889 fertiggestellt. Er ist 330 m hoch."], reference="Der Turm wurde am 31. März 1889 fertiggestellt.")
    judge = ScriptedJudge(lambda m: 0.9, calibration=CERTAIN)
    relevance = rule("context_relevance", {"language": "de"}).score_batch([german], judge)[0]
    assert relevance.details["n_sentences"] == 2  # "31." is not a sentence end in German
    recall = rule("context_recall", {"language": "de"}).score_batch([german], judge)[0]
    assert [s["statement"] for s in recall.details["statements"]] == ["Der Turm wurde am 31. März 1889 fertiggestellt."]
    assert recall.details["statements"][0]["features"]["coverage"] == 1.0


# -- context_relevance --------------------------------------------------------------


def relevance_judge(needed: str, **kwargs):
    """Says a paragraph is needed when it contains `needed`."""
    return ScriptedJudge(lambda m: 0.999 if needed in asked_paragraph(m) else 0.001, calibration=CERTAIN, **kwargs)


def test_relevance_is_the_share_of_units_required():
    judge = relevance_judge("Ada Smith")
    score = rule("context_relevance").score_batch([SAMPLE], judge)[0]
    assert score.value == 2 / 4
    assert score.details["selected"] == [0, 1]
    assert score.details["selected_sentences"] == ["Acme was founded by Ada Smith.", "It was founded in 1901."]
    assert (score.details["n_selected"], score.details["n_sentences"]) == (2, 4)
    assert len(score.details["probabilities"]) == len(score.details["features"]) == 4


def test_the_rule_weighs_the_passage_verdict_up_to_its_cap_and_asks_about_the_surest_passage():
    """Both passages are needed, the second more surely: the features weigh both at the cap,
    and the short answer is still asked of the second (the full verdict decides which)."""
    sample = Sample(user_input="Who founded Acme?", retrieved_contexts=["Acme sells anvils.", "Acme was founded by Ada Smith."])
    judge = ScriptedJudge(lambda m: 0.999 if "Ada" in asked_paragraph(m) else 0.9, lambda m, schema: {"answer": "Ada Smith"}, calibration=CERTAIN)
    score = rule("context_relevance").score_batch([sample], judge)[0]
    assert [f["judge_passage"] for f in score.details["features"]] == [judge_units.VERDICT_CAP, judge_units.VERDICT_CAP]
    assert score.details["answer"] == "Ada Smith" and "Ada Smith" in judge.calls[2][-1]["content"]


def test_insufficient_information_selects_nothing_and_scores_zero():
    score = rule("context_relevance").score_batch([SAMPLE], relevance_judge("nowhere"))[0]
    assert score.value == 0.0 and score.details["selected"] == []


def test_the_unit_the_judge_says_answers_is_kept_when_none_reaches_the_threshold():
    sample = Sample(user_input="How many moons does Mars have?", retrieved_contexts=["Mars is the fourth planet. Mars has two moons, Phobos and Deimos. Its surface is red."])
    doubtful = {"relevance": {"intercept": -10.0, "weights": {f: 1.0 if f == "overlap" else 0.0 for f in relevance.FEATURES}}}  # every P far below 0.5

    def judge(choice_says_one_answers):
        return ScriptedJudge(lambda m: 0.999 if "Sentences:" not in m[-1]["content"] else choice_says_one_answers, calibration=doubtful)

    kept = rule("context_relevance").score_batch([sample], judge(0.95))[0]
    assert kept.details["selected"] == [1] and max(kept.details["probabilities"]) < 0.5  # the unit that mentions most of the question
    unsure = rule("context_relevance").score_batch([sample], judge(0.6))[0]  # "none of them" at odds above e^-1
    assert unsure.details["selected"] == [] and unsure.value == 0.0


def test_the_sentence_holding_the_judges_short_answer_is_marked():
    sample = Sample(user_input="How tall is Mount Everest?", retrieved_contexts=["Mount Everest is in the Himalayas. Its summit is 8,849 metres above sea level. Many climb it."])
    follows_the_answer = {"relevance": _only(relevance.FEATURES, "judge_answer")}
    judge = ScriptedJudge(lambda m: 0.9, lambda m, schema: {"answer": "8,849 metres"}, calibration=follows_the_answer)
    score = rule("context_relevance").score_batch([sample], judge)[0]
    assert [f["judge_answer"] for f in score.details["features"]] == [0.0, 1.0, 0.0]
    assert score.details["answer"] == "8,849 metres"
    verdict, answer = judge.calls[0][-1]["content"], judge.calls[1][-1]["content"]
    # The answer is asked right after the passage's verdict, in a prompt that opens the same way
    # (so a model reuses the cached passage), and before the choice among its sentences.
    opening = verdict.split("\n\nDoes the paragraph", 1)[0]
    assert answer.startswith(opening + "\n\n") and "shortest phrase" in answer
    assert "Sentences:" in judge.calls[2][-1]["content"]
    says_none = ScriptedJudge(lambda m: 0.9, lambda m, schema: {"answer": "None."}, calibration=follows_the_answer)
    unanswered = rule("context_relevance").score_batch([sample], says_none)[0]
    assert [f["judge_answer"] for f in unanswered.details["features"]] == [0.0, 0.0, 0.0]  # "none": no unit holds an answer


def test_the_sentence_holding_the_answer_joins_a_selection_but_never_makes_one():
    sample = Sample(
        user_input="When was the Eiffel Tower completed?",
        retrieved_contexts=["The Eiffel Tower is a tower in Paris. It was completed on 31 March 1889. It is 330 metres tall."],
    )

    def judge(weights, intercept):
        calibration = {"relevance": {"intercept": intercept, "weights": {f: weights.get(f, 0.0) for f in relevance.FEATURES}}}
        return ScriptedJudge(lambda m: 0.9 if "Sentences:" not in m[-1]["content"] else 0.2, lambda m, schema: {"answer": "31 March 1889"}, calibration=calibration)

    joined = rule("context_relevance").score_batch([sample], judge({"opens_passage": 2.0}, -1.0))[0]
    assert joined.details["selected"] == [0, 1] and joined.details["probabilities"][1] < 0.5
    nothing = rule("context_relevance").score_batch([sample], judge({}, -10.0))[0]
    assert nothing.details["selected"] == [] and nothing.value == 0.0  # an answer alone is not evidence enough


def test_no_context_scores_zero_without_asking():
    judge = relevance_judge("x")
    score = rule("context_relevance").score_batch([Sample(user_input="q", retrieved_contexts=["", "   "])], judge)[0]
    assert score.value == 0.0 and score.details["n_sentences"] == 0 and judge.calls == []


@pytest.mark.parametrize("unit, count", [("sentence", 4), ("line", 3), ("chunk", 2)])
def test_the_unit_option_counts_sentences_lines_or_chunks(unit, count):
    sample = Sample(user_input="q", retrieved_contexts=["Acme was founded by Ada Smith.\nIt was founded in 1901.", "Acme sells anvils. Its logo is red."])
    score = rule("context_relevance", {"unit": unit}).score_batch([sample], relevance_judge("Acme sells"))[0]
    needed = {"sentence": 2, "line": 1, "chunk": 1}[unit]
    assert score.details["n_sentences"] == count and score.value == needed / count


def test_each_paragraph_is_judged_once_on_its_own_question_first():
    passages = [f"Passage {i} sentence one. Passage {i} sentence two." for i in range(6)]
    judge = relevance_judge("nothing")
    rule("context_relevance", {"judged_contexts": 0}).score_batch([Sample(user_input="What does passage 3 say?", retrieved_contexts=passages)], judge)
    assert [asked_paragraph(call) for call in judge.calls] == passages
    assert all(call[-1]["content"].startswith("Question: What does passage 3 say?\n\nParagraph: ") for call in judge.calls)


def test_the_judge_reads_only_the_contexts_that_mention_most_of_the_question():
    passages = ["Acme sells anvils.", "Zeta makes rope.", "Acme anvils are red and heavy.", "Rope is cheap.", "The anvils of Acme ship in May."]
    judge = relevance_judge("nothing")
    score = rule("context_relevance").score_batch([Sample(user_input="When do Acme anvils ship?", retrieved_contexts=passages)], judge)[0]
    read = [asked_paragraph(call) for call in judge.calls if "\n\nParagraph: " in call[-1]["content"]]
    assert read == [passages[0], passages[2], passages[4]]  # the default judged_contexts: 3, in their order
    assert score.details["unread_contexts"] == [1, 3]
    unread_features = [f for f, u in zip(score.details["features"], [0, 1, 2, 3, 4]) if u in (1, 3)]
    assert all(f["judge_passage"] == judge_units.UNREAD_VERDICT for f in unread_features)


def test_the_judge_picks_among_the_most_needed_paragraphs_sentences_nine_at_a_time():
    twelve = " ".join(f"Acme fact number {i} is here." for i in range(1, 13))
    sample = Sample(user_input="Which Acme fact?", retrieved_contexts=[twelve, "Other text. More of it."])
    judge = relevance_judge("Acme fact")
    features = rule("context_relevance").score_batch([sample], judge)[0].details["features"]
    choices = [c for c in judge.calls if "\n\nSentences:\n" in c[-1]["content"]]
    assert [asked_paragraph(c).count("Acme fact") for c in choices] == [9, 3]  # windows of at most 9: one token per number
    assert choices[0][-1]["content"].split("Sentences:\n", 1)[1].startswith("1. Acme fact number 1 is here.\n2. ")
    assert all(f["judge_choice"] == pytest.approx(0.0) for f in features)  # the script prefers no sentence: no preference
    assert all(f["judge_none"] == pytest.approx(math.log(0.001 / 0.999), abs=1e-3) for f in features)  # it does say one answers
    assert len(features) == 14 and all(not asked_paragraph(c).startswith("Other") for c in choices)  # only the most needed paragraph


def test_a_paragraph_too_long_for_the_window_is_judged_in_pieces_and_counts_by_its_best():
    texts = [f"Sentence number {i} says something long enough." for i in range(40)]
    long = Sample(user_input="q?", retrieved_contexts=[" ".join(texts)])
    judge = relevance_judge("number 39", context_size=400)
    score = rule("context_relevance").score_batch([long], judge)[0]
    assert score.details["windows"] == len(judge.calls) > 1
    assert " ".join(asked_paragraph(call) for call in judge.calls) == " ".join(texts)  # every sentence judged once, none dropped
    assert score.value == 1.0  # the piece with sentence 39 is needed, so the paragraph is


def test_sentences_split_in_threads_are_each_texts_own():
    """A judge server scores samples in threads; a shared pysbd segmenter mixed their sentences up."""
    from concurrent.futures import ThreadPoolExecutor

    from localeval.data.text import split_sentences

    texts = [f"Sentence {i} is here. Another one for {i}. And a third." * 5 for i in range(200)]
    expected = [split_sentences(t) for t in texts]
    with ThreadPoolExecutor(8) as pool:
        assert list(pool.map(split_sentences, texts)) == expected


def test_a_question_that_names_the_subject_does_not_need_the_sentence_introducing_it():
    from localeval.graders.evidence import content_words
    from localeval.graders.judge_units import _focus_overlap, _subject_asked, _subject_words
    from localeval.metrics.relevance import _units

    def subject_asked(question, opening):
        return _subject_asked(set(content_words(question)), _subject_words(opening, "en"))

    assert subject_asked("How tall is Mount Everest?", "Mount Everest is located in the Himalayas.") == 1.0
    assert subject_asked("How tall is Mount Everest?", "The Eiffel Tower is in Paris.") == 0.0  # a subject the question does not name
    assert subject_asked("Through which countries does the Amazon flow?", "The Amazon River in South America is long.") == 0.5
    assert subject_asked("How tall is Mount Everest?", "in 1953, it was climbed.") == 0.0  # no name: nothing to compare
    sample = Sample(user_input="How tall is Mount Everest?", retrieved_contexts=["Mount Everest is in Nepal. The summit of Everest is 8,849 metres tall."])
    units = _units(sample, "sentence", "en")
    # the question's words beyond the subject ("tall") are in the answer, not in the sentence that names the subject
    assert _focus_overlap(sample.user_input, units, set(_subject_words(units[0].text, "en")), "en") == [0.0, 1.0]


def test_an_answer_that_names_the_subject_itself_does_not_need_the_opening():
    """answer_stands_alone: set on the opening only when the question names the subject and the
    unit the judge points to names it too; an answer that leans on the opening ("It ...", "The
    new season's ...") leaves it 0, as HotpotQA's labels count that opening as required."""
    from localeval.graders.evidence import content_words
    from localeval.graders.judge_units import _answer_stands_alone, _subject_asked, _subject_words
    from localeval.metrics.relevance import _units

    def alone(question: str, context: str, answering: int) -> list[float]:
        units = _units(Sample(user_input=question, retrieved_contexts=[context]), "sentence", "en")
        subjects = {0: _subject_words(units[0].text, "en")}
        named = {0: _subject_asked(set(content_words(question)), subjects[0])}
        judge_answer = [float(i == answering) for i in range(len(units))]
        return _answer_stands_alone(units, judge_answer, [0.0] * len(units), subjects, named, "en")

    everest = "Mount Everest is in the Himalayas. The summit of Everest is 8,849 metres above sea level."
    assert alone("How tall is Mount Everest?", everest, answering=1) == [1.0, 0.0]
    assert alone("How tall is the highest mountain on Earth?", everest, answering=1) == [0.0, 0.0]  # the question describes it
    assert alone("How tall is Mount Everest?", "Mount Everest is in the Himalayas. It is 8,849 metres tall.", answering=1) == [0.0, 0.0]
    assert alone("How tall is Mount Everest?", everest, answering=0) == [0.0, 0.0]  # the opening answers itself
    assert alone("How tall is Mount Everest?", everest, answering=-1) == [0.0, 0.0]  # the judge points nowhere


def test_the_opening_features_follow_the_question_and_the_judges_answer():
    """Through the metric: a short question that names the subject, and a short answer found in a
    later unit that names it too, mark the opening as standing apart; opens_long_question grows
    with the question's content words, on opening units only."""
    sample = Sample(user_input="How tall is Mount Everest?", retrieved_contexts=["Mount Everest is in Nepal. The summit of Everest is 8,849 metres high."])
    judge = ScriptedJudge(lambda m: 0.999, lambda m, schema: {"answer": "8,849 metres"}, calibration=CERTAIN)
    features = rule("context_relevance").score_batch([sample], judge)[0].details["features"]
    assert [f["answer_stands_alone"] for f in features] == [1.0, 0.0]
    short = features[0]["opens_long_question"]
    assert 0 < short < 1 and features[1]["opens_long_question"] == 0.0
    long_question = "How tall is the mountain that the first British expedition of 1921 surveyed on the border of Nepal and Tibet?"
    features = rule("context_relevance").score_batch([sample.model_copy(update={"user_input": long_question})], judge)[0].details["features"]
    assert short < features[0]["opens_long_question"] <= 1.0
    assert features[0]["answer_stands_alone"] == 0.0  # the question does not name the subject


# -- the grader seam ------------------------------------------------------------------


def test_a_new_grader_is_one_class_and_every_judge_metric_takes_it(monkeypatch):
    """The judge metrics receive the grader their options name (localeval.graders) and never ask
    which one it is: a grader that is neither the judge rule nor the verifier, one class added to
    GRADERS, decides context_relevance, context_recall, faithfulness, factual_correctness and
    context_precision with no judge, and its probabilities and evidence reach their details."""
    from localeval.graders import Grader, Needs, Support, Usefulness
    from localeval.graders.evidence import statement_evidence
    from localeval.metrics import judging

    class Alternating(Grader):
        needs_judge = False

        def supported(self, statements, sentences, tally, chunks=2):
            return [Support(0.75 if i % 2 == 0 else 0.25, {"alternating": float(i)}, statement_evidence(s, sentences, self.language), None) for i, s in enumerate(statements)]

        def needed(self, question, units, passages, tally, judged_contexts=0, whole_contexts=False):
            return Needs([0.75 if u.opens_passage else 0.25 for u in units], [{"alternating": 1.0} for _ in units], notes={"unit_parts": [1] * len(units)})

        def useful(self, question, answer, contexts, tally, answer_name="answer"):
            return [Usefulness(0.75 if i == 0 else 0.25, {"verifier": 0.5}) for i, _ in enumerate(contexts)]

    monkeypatch.setitem(judging.GRADERS, "alternating", Alternating)
    monkeypatch.setattr(judging.JudgeParams, "grader_name", lambda self: "alternating")
    sample = SAMPLE.model_copy(update={"response": "Ada Smith founded Acme in 1901. Its logo is blue."})

    def scored(name: str) -> Any:
        metric = create_metric(name)
        assert not metric.uses_judge()
        return metric.score_batch([sample], None)[0]

    recall_score = scored("context_recall")
    assert recall_score.value == pytest.approx(2 / 3) and recall_score.usage is None
    assert [v["features"] for v in recall_score.details["statements"]] == [{"alternating": 0.0}, {"alternating": 1.0}, {"alternating": 2.0}]
    assert "judge_log_odds" not in recall_score.details["statements"][0] and recall_score.details["statements"][0]["reason"].startswith("attributed")
    assert scored("faithfulness").value == 0.5
    relevance_score = scored("context_relevance")
    assert relevance_score.value == 0.5 and relevance_score.details["selected"] == [0, 2] and relevance_score.details["unit_parts"] == [1, 1, 1, 1]
    precision_score = scored("context_precision")
    assert precision_score.value == 1.0 and precision_score.details["contexts"][0] == {"useful": 1, "probability": 0.75, "verifier": 0.5}
    factual = scored("factual_correctness")
    assert (factual.details["tp"], factual.details["fp"], factual.details["fn"], factual.value) == (1, 1, 1, 0.5)
