"""context_entity_recall: the reference's entities the retrieved contexts name too. ragas' formula on
ragas' own cases (a scripted judge listing the entities ragas' extraction prompt gives), the empty
cases ragas scores 0, normalised and fuzzy matching, the model-free capitalised spans, one request
per text or chunk, the real small judge's grammar, and `--grader verifier` stopped before the first
sample."""

from __future__ import annotations

import json
import subprocess
import sys
from typing import Any

import pytest

from localeval import evaluate
from localeval.data.samples import Sample
from localeval.errors import ConfigError
from localeval.metrics import DEFAULT_METRICS, create_metric
from localeval.metrics.entity_recall import ContextEntityRecall, capitalised_spans, entity_recall, found_entities, normalised
from localeval.testing import ScriptedJudge, prompt_fields

# ragas' cases (tests/e2e/metrics_migration/test_context_entity_recall_migration.py: sample_data and
# the extraction cases with their expected entities): the reference, the contexts, and the entities
# ragas' ExtractEntitiesPrompt gives for the reference and for the contexts joined.
RAGAS_CASES: list[tuple[str, list[str], list[str], list[str]]] = [
    ("The Eiffel Tower in Paris, France was built in 1889 for the World's Fair.", ["The Eiffel Tower is located in Paris, France.", "It was constructed in 1889 for the 1889 World's Fair."],
     ["Eiffel Tower", "Paris", "France", "1889", "World's Fair"], ["Eiffel Tower", "Paris", "France", "1889", "World's Fair"]),
    ("Albert Einstein was born in Germany in 1879 and developed the theory of relativity.", ["Einstein was a physicist born in Germany.", "He created important theories in physics."],
     ["Albert Einstein", "Germany", "1879", "theory of relativity"], ["Einstein", "Germany"]),
    ("The Apollo 11 mission launched on July 16, 1969 with Neil Armstrong, Buzz Aldrin, and Michael Collins.", ["Apollo 11 was a space mission.", "Neil Armstrong was the first person to walk on the Moon."],
     ["Apollo 11 mission", "July 16, 1969", "Neil Armstrong", "Buzz Aldrin", "Michael Collins"], ["Apollo 11", "Neil Armstrong", "Moon"]),
    ("Microsoft was founded by Bill Gates and Paul Allen in 1975 in Seattle, Washington.", ["Bill Gates founded Microsoft.", "Paul Allen co-founded the company.", "It was established in 1975 in Seattle, Washington."],
     ["Microsoft", "Bill Gates", "Paul Allen", "1975", "Seattle", "Washington"], ["Bill Gates", "Microsoft", "Paul Allen", "1975", "Seattle", "Washington"]),
    ("The Great Wall of China stretches over 21,196 kilometers and was built starting in the 7th century BC.", ["The Great Wall is in China.", "It's a very long wall built long ago."],
     ["Great Wall of China", "21,196 kilometers", "7th century BC"], ["Great Wall", "China"]),
    ("Barack Obama was the 44th President of the United States from 2009 to 2017.", ["Barack Obama served as U.S. President."],
     ["Barack Obama", "44th President", "United States", "2009", "2017"], ["Barack Obama", "U.S.", "President"]),
    ("The iPhone was released by Apple Inc. on June 29, 2007 in the United States.", ["Apple released the iPhone in 2007 in the US."],
     ["iPhone", "Apple Inc.", "June 29, 2007", "United States"], ["Apple", "iPhone", "2007", "US"]),
    ("The answer is yes.", ["Nothing here."], [], []),  # no entity in the reference: ragas' 0 / (0 + 1e-8) = 0
]


def ragas_compute_score(ground_truth_entities: list[str], context_entities: list[str]) -> float:
    """ragas 0.4.3's ContextEntityRecall._compute_score, as it is written."""
    return len(set(context_entities).intersection(set(ground_truth_entities))) / (len(ground_truth_entities) + 1e-8)


def entity_judge(reference: str, reference_entities: list[str], context_entities: list[str]) -> ScriptedJudge:
    def answer(messages: list[dict[str, str]], schema: Any) -> dict[str, Any]:
        kind, fields = prompt_fields(messages)
        assert kind == "entities"
        return {"entities": reference_entities if fields["text"] == reference else context_entities}

    return ScriptedJudge(answer=answer)


@pytest.mark.parametrize(("reference", "contexts", "reference_entities", "context_entities"), RAGAS_CASES, ids=[c[0][:30] for c in RAGAS_CASES])
def test_ragas_cases_score_as_ragas_computes_them(reference, contexts, reference_entities, context_entities):
    judge = entity_judge(reference, reference_entities, context_entities)
    score = create_metric("context_entity_recall", {"match_threshold": 1.0}).score_batch([Sample(reference=reference, retrieved_contexts=contexts)], judge)[0]
    assert score.value == ragas_compute_score(reference_entities, context_entities)
    assert len(judge.calls) == 2 and score.usage is not None and score.usage["calls"] == 2  # the reference, then the contexts (one chunk)
    found, missing = score.details["found"], score.details["missing"]
    assert sorted(found + missing) == sorted(set(reference_entities)) and not set(found) & set(missing)


def test_a_judge_s_repeated_or_invented_entity_is_dropped():
    """ragas would count the list as written (1 / 5 here); localeval keeps what the text holds, once."""
    reference = "Marie Curie was born in Warsaw."
    judge = entity_judge(reference, ["Marie Curie", "Warsaw", "189de", "1937", "1937", "marie curie"], ["Marie Curie", "Paris", "1937"])
    score = create_metric("context_entity_recall").score_batch([Sample(reference=reference, retrieved_contexts=["Marie Curie lived in Paris."])], judge)[0]
    assert score.details["reference_entities"] == ["Marie Curie", "Warsaw"] and score.details["context_entities"] == ["Marie Curie", "Paris"]
    assert score.value == pytest.approx(0.5)


def test_formula_and_empty_cases():
    assert entity_recall([], []) == 0.0 and entity_recall(["A"], [False]) == 0.0
    assert entity_recall(["A", "B", "A"], [True, False, True]) == pytest.approx(1 / 3)
    judge = ScriptedJudge(answer=lambda m, s: {"entities": ["Paris"]})
    empty = create_metric("context_entity_recall").score_batch([Sample(reference="", retrieved_contexts=["Paris is big."]), Sample(reference="Paris is big.", retrieved_contexts=[])], judge)
    assert [s.value for s in empty] == [0.0, 0.0] and len(judge.calls) == 2  # an empty text costs no request
    assert ContextEntityRecall.explain_raw(empty[0].details) == "the reference names no entity (ragas scores that 0)"
    assert "missing 'Paris'" in ContextEntityRecall.explain_raw(empty[1].details)


def test_matching_is_normalised_with_a_fuzzy_fallback():
    assert normalised("  The  World's-Fair. ") == "the world s fair"
    context = ["Eiffel tower", "Worlds Fair", "U.S."]
    assert found_entities(["Eiffel Tower", "World's Fair", "US", "Paris"], context, 0.9) == [True, True, False, False]
    assert found_entities(["Eiffel Tower", "World's Fair"], context, 1.0) == [True, False]  # equality only
    assert found_entities(["US"], context, 0.75) == [True]  # "us" and "u s": ratio 0.8


def test_capitalised_spans_need_no_model():
    text = "The Eiffel Tower, located in Paris, France, was completed in 1889. It drew 32,250,297 visitors to the World's Fair."
    assert capitalised_spans(text) == ["Eiffel Tower", "Paris", "France", "1889", "32,250,297", "World's Fair"]
    metric = create_metric("context_entity_recall", {"extractor": "capitalised_spans"})
    assert not metric.uses_judge() and metric.refuses_verifier() is None
    run = evaluate([{"reference": "Marie Curie was born in Warsaw in 1867.", "retrieved_contexts": ["Marie Curie grew up in Warsaw."]}], [metric])
    assert run.results[0]["scores"]["context_entity_recall"] == pytest.approx(2 / 3)
    assert run.results[0]["details"]["context_entity_recall"]["missing"] == ["1867"]


def test_long_contexts_are_read_in_chunks():
    contexts = [f"Context {n} names Person{n} of Town{n}, who was born in {1900 + n} and worked for decades at the Institute{n} laboratory." for n in range(40)]
    judge = ScriptedJudge(answer=lambda m, s: {"entities": ["Person1"]})
    score = create_metric("context_entity_recall").score_batch([Sample(reference="Person1 was born.", retrieved_contexts=contexts)], judge)[0]
    chunks = [prompt_fields(call)[1]["text"] for call in judge.calls[1:]]
    assert len(chunks) > 1 and " ".join(chunks) == " ".join(contexts)  # every sentence read, once, in order
    assert score.value == pytest.approx(1.0) and score.details["requests"] == len(judge.calls)


def test_options_and_named_to_run():
    with pytest.raises(ConfigError, match="extractor"):
        create_metric("context_entity_recall", {"extractor": "spacy"})
    with pytest.raises(ConfigError, match="match_threshold"):
        create_metric("context_entity_recall", {"match_threshold": 1.5})
    assert "context_entity_recall" not in DEFAULT_METRICS and create_metric("context_entity_recall").uses_judge()


def test_the_verifier_flag_stops_the_run_before_the_first_sample(write_jsonl, tmp_path):
    data = write_jsonl([{"reference": "Paris is in France.", "retrieved_contexts": ["Paris is big."], "response": "Paris.", "user_input": "q"}])
    out = tmp_path / "out.jsonl"
    for flag in ("--verifier", "--grader=verifier"):
        run = subprocess.run([sys.executable, "-m", "localeval", "score", str(data), "-m", "faithfulness", "-m", "context_entity_recall", flag, "-o", str(out), "-q"], capture_output=True, text=True)
        assert run.returncode == 2 and "context_entity_recall needs the judge" in run.stderr and "extractor=capitalised_spans" in run.stderr, run.stderr
        assert not out.exists()
    spans = subprocess.run([sys.executable, "-m", "localeval", "score", str(data), "-m", "context_entity_recall", "--verifier", "--option", "context_entity_recall.extractor=capitalised_spans", "-o", str(out), "-q"],
                           capture_output=True, text=True)
    assert spans.returncode == 0, spans.stderr
    assert json.loads(out.read_text().splitlines()[1])["scores"]["context_entity_recall"] == pytest.approx(0.5)


def test_the_real_small_judge_answers_in_the_grammar(small_judge):
    score = create_metric("context_entity_recall").score_batch([Sample(reference="Marie Curie was born in Warsaw.", retrieved_contexts=["Marie Curie lived in Paris."])], small_judge)[0]
    assert score.error is None and 0.0 <= score.value <= 1.0
    assert score.usage is not None and score.usage["calls"] == 2 and all(isinstance(e, str) for e in score.details["reference_entities"])
