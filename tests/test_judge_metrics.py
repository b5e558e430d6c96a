"""Score arithmetic and control flow of the judge metrics, with a scripted judge.

The judge itself is tested for real in test_judge.py; here the answers are fixed
so that each rule (cap at 1, empty selection = 0, windows, NaN) is pinned down.
"""

import math
import re

import pytest

from localeval import evaluate
from localeval.metrics import create_metric
from localeval.samples import Sample

from conftest import ScriptedJudge

SAMPLE = Sample(
    user_input="Who founded the company and when?",
    retrieved_contexts=["Acme was founded by Ada Smith. It was founded in 1901.", "Acme sells anvils. Its logo is red."],
    reference="Ada Smith founded Acme. This happened in 1901. Acme is based in Ohio.",
)


def numbers_in(messages):
    return [int(n) for n in re.findall(r"^\[(\d+)\]", messages[-1]["content"], re.M)]


def test_relevance_is_selected_over_all_sentences():
    judge = ScriptedJudge(lambda m, s: {"sentences": [1, 2, 2]})
    score = create_metric("context_relevance").score_batch([SAMPLE], judge)[0]
    assert score.value == 2 / 4
    assert score.details == {
        "selected": [0, 1],
        "selected_sentences": ["Acme was founded by Ada Smith.", "It was founded in 1901."],
        "n_selected": 2,
        "n_sentences": 4,
    }
    assert numbers_in(judge.calls[0]) == [1, 2, 3, 4]


def test_insufficient_information_scores_zero():
    judge = ScriptedJudge(lambda m, s: {"sentences": []})
    assert create_metric("context_relevance").score_batch([SAMPLE], judge)[0].value == 0.0


def test_no_context_sentences_scores_zero_without_asking():
    judge = ScriptedJudge(lambda m, s: {"sentences": []})
    empty = Sample(user_input="q", retrieved_contexts=["", "   "])
    score = create_metric("context_relevance").score_batch([empty], judge)[0]
    assert score.value == 0.0 and score.details["n_sentences"] == 0
    assert judge.calls == []


def test_classify_mode_counts_relevant_verdicts():
    judge = ScriptedJudge(lambda m, s: {"relevant": [1, 0, 1, 0]})
    score = create_metric("context_relevance", {"mode": "classify"}).score_batch([SAMPLE], judge)[0]
    assert score.value == 0.5
    assert score.details["selected"] == [0, 2]


def test_relevance_windows_are_unioned_when_the_context_does_not_fit():
    long = Sample(user_input="q?", retrieved_contexts=[" ".join(f"Sentence number {i} says something long enough." for i in range(40))])

    def pick_first_of_window(messages, schema):
        return {"sentences": [numbers_in(messages)[0]]}

    judge = ScriptedJudge(pick_first_of_window, context_size=400)
    score = create_metric("context_relevance").score_batch([long], judge)[0]
    windows = score.details["windows"]
    assert windows == len(judge.calls) > 1
    seen = [n for call in judge.calls for n in numbers_in(call)]
    assert seen == list(range(1, 41))  # every sentence judged once, none dropped
    assert score.details["n_selected"] == windows
    assert score.value == windows / 40


def test_recall_counts_attributed_statements_with_reasons():
    def verdict(messages, schema):
        statement = re.search(r"Statement: (.*)", messages[-1]["content"]).group(1)
        return {"attributed": 0 if "Ohio" in statement else 1, "reason": f"checked {statement[:10]}"}

    judge = ScriptedJudge(verdict)
    score = create_metric("context_recall").score_batch([SAMPLE], judge)[0]
    assert score.value == 2 / 3
    assert [s["attributed"] for s in score.details["statements"]] == [1, 1, 0]
    assert score.details["statements"][2] == {"statement": "Acme is based in Ohio.", "attributed": 0, "probability": 0.0, "reason": "checked Acme is ba"}
    assert score.usage["calls"] == 6  # a verdict and a reason per statement


def test_recall_prompts_differ_only_in_the_final_statement():
    judge = ScriptedJudge(lambda m, s: {"attributed": 1, "reason": "ok"})
    create_metric("context_recall").score_batch([SAMPLE], judge)
    prompts = [call[-1]["content"] for call in judge.calls]
    statements = ["Ada Smith founded Acme.", "This happened in 1901.", "Acme is based in Ohio."]
    prefixes = {prompt[: -len(statement)] for prompt, statement in zip(prompts, statements)}
    assert all(prompt.endswith("Statement: " + s) for prompt, s in zip(prompts, statements))
    assert len(prefixes) == 1  # everything before the statement is shared, so llama.cpp reuses it


def test_relevance_and_recall_share_the_context_prefix():
    judge = ScriptedJudge(lambda m, s: {"sentences": [1]} if "sentences" in s.model_fields else {"attributed": 1, "reason": "ok"})
    evaluate([SAMPLE], ["context_relevance", "context_recall"], judge=judge)
    relevance, recall = judge.calls[0], judge.calls[1]
    assert relevance[0] == recall[0]
    context = relevance[1]["content"].split("Question:")[0]
    assert recall[1]["content"].startswith(context)


def test_recall_without_statements_is_nan():
    judge = ScriptedJudge(lambda m, s: {"attributed": 1, "reason": "x"})
    score = create_metric("context_recall").score_batch([Sample(user_input="q", retrieved_contexts=["c"], reference="  ")], judge)[0]
    assert math.isnan(score.value)


def test_recall_claims_mode_uses_the_judges_claims():
    def answer(messages, schema):
        if "claims" in schema.model_fields:
            return {"claims": ["Ada Smith founded Acme.", "Acme is in Ohio."]}
        return {"attributed": 1 if "Ada" in messages[-1]["content"].split("Statement:")[1] else 0, "reason": "r"}

    judge = ScriptedJudge(answer)
    score = create_metric("context_recall", {"statements": "claims"}).score_batch([SAMPLE], judge)[0]
    assert [s["statement"] for s in score.details["statements"]] == ["Ada Smith founded Acme.", "Acme is in Ohio."]
    assert score.value == 0.5


def test_recall_without_reasons_asks_for_verdicts_only():
    judge = ScriptedJudge(lambda m, s: {"attributed": 1})
    score = create_metric("context_recall", {"reasons": "false"}).score_batch([SAMPLE], judge)[0]
    assert score.value == 1.0
    assert all(set(s) == {"statement", "attributed", "probability"} for s in score.details["statements"])


def test_recall_statement_is_attributed_when_any_window_supports_it():
    long = Sample(
        user_input="q",
        retrieved_contexts=[" ".join(f"Filler sentence {i} with several words in it." for i in range(40)) + " The key fact is here."],
        reference="The key fact.",
    )

    def supported_in_last_window(messages, schema):
        return {"attributed": int("key fact is here" in messages[-1]["content"]), "reason": "r"}

    judge = ScriptedJudge(supported_in_last_window, context_size=400)
    score = create_metric("context_recall").score_batch([long], judge)[0]
    assert score.value == 1.0
    assert score.details["windows"] == len(judge.calls) > 1


def test_a_sentence_longer_than_the_window_is_a_per_sample_error():
    giant = Sample(user_input="q", retrieved_contexts=["word " * 3000], reference="r")
    ok = Sample(user_input="q", retrieved_contexts=["short."], reference="r")
    judge = ScriptedJudge(lambda m, s: {"sentences": [1]} if "sentences" in s.model_fields else {"attributed": 1, "reason": "ok"}, context_size=600)
    run = evaluate([giant, ok], ["context_relevance", "context_recall"], judge=judge)
    first, second = run.results
    assert "more than the" in first["errors"]["context_relevance"] and "raise --n-ctx" in first["errors"]["context_recall"]
    assert second["scores"] == {"context_relevance": 1.0, "context_recall": 1.0}


def test_a_raw_control_character_in_a_judge_string_still_parses():
    from localeval.errors import JudgeError
    from localeval.judge.llama import parse_answer
    from localeval.metrics.recall import Claims

    answer = parse_answer('{"claims": ["line one\nline two\ttab"]}', Claims)
    assert answer.claims == ["line one\nline two\ttab"]
    import pytest

    with pytest.raises(JudgeError, match="does not fit Claims"):
        parse_answer('{"claims": []}', Claims)


class _ProbabilityJudge(ScriptedJudge):
    """Answers every verdict with the same probability of "1", and a calibrated threshold."""

    def __init__(self, probability: float, thresholds: dict[str, float]) -> None:
        super().__init__(lambda m, s: {"attributed": 1, "reason": "r"})
        self._probability = probability
        self._thresholds = thresholds

    def choose(self, messages, prefix, options):
        return [1 - self._probability, self._probability], self._usage

    @property
    def thresholds(self):
        return self._thresholds


@pytest.mark.parametrize(
    ("probability", "calibrated", "option", "expected"),
    [
        (0.7, {}, None, 1.0),  # uncalibrated judge: 0.5
        (0.7, {"attributed": 0.8}, None, 0.0),  # the judge's calibrated threshold
        (0.7, {"attributed": 0.8}, "0.6", 1.0),  # the user's option wins
        (0.8, {"attributed": 0.8}, None, 1.0),  # reaching the threshold is enough
    ],
)
def test_recall_verdict_is_the_probability_against_the_threshold(probability, calibrated, option, expected):
    judge = _ProbabilityJudge(probability, calibrated)
    options = {"threshold": option} if option else {}
    score = create_metric("context_recall", options).score_batch([SAMPLE], judge)[0]
    assert score.value == expected
    assert {s["probability"] for s in score.details["statements"]} == {probability}
