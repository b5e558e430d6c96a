"""Issue 72, the eighth hardening pass, on ragas' scorecard metrics (semantic_similarity,
answer_correctness, context_entity_recall, noise_sensitivity): `localeval compare` reads
noise_sensitivity the way it points (lower is better), the movers say what changed in these
metrics' details, and option values at the float's limits never make a score NaN."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import pytest
from conftest import CAPITALS, invoke

from localeval import compare, create_metric
from localeval.data.samples import Sample
from localeval.stats.paired import Verdict

METRICS = ("noise_sensitivity", "semantic_similarity", "answer_correctness")


def _scored(tmp_path: Path, name: str, noisy: bool) -> Path:
    """The capitals scored with the verifier: the response is the reference (noisy=False), or the
    context's other fact, which the reference does not state (noise_sensitivity 1)."""
    rows: list[dict[str, Any]] = []
    for n, (reference, other) in enumerate(CAPITALS):
        rows.append({"id": f"q{n}", "user_input": "What is the capital?", "reference": reference, "retrieved_contexts": [f"{reference} {other}"],
                     "response": other if noisy else reference})
    data = tmp_path / f"{name}.jsonl"
    data.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    out = tmp_path / f"{name}.results.jsonl"
    metrics = [arg for name in METRICS for arg in ("-m", name)]
    result = invoke(["score", str(data), *metrics, "--verifier", "-o", str(out), "-q", "--no-timing"])
    assert result.exit_code == 0, result.output
    return out


@pytest.fixture(scope="module")
def capitals(tmp_path_factory: pytest.TempPathFactory, embedding_model: Path) -> tuple[Path, Path]:
    folder = tmp_path_factory.mktemp("capitals")
    return _scored(folder, "base", noisy=False), _scored(folder, "candidate", noisy=True)


def test_compare_calls_a_rise_of_noise_sensitivity_worse_and_gates_the_rise(capitals, tmp_path):
    """noise_sensitivity is lower-is-better: a rise from 0 to 1 was "better", listed among the
    samples that "improved most", and --max-drop gated its falls (the improvements) while the rise
    passed. Now the verdict, the movers, the gate and every report read it the way it points."""
    base, candidate = capitals
    found = compare(base, candidate, max_drop={"noise_sensitivity": 0.1})
    noise = found.metrics["noise_sensitivity"]
    assert noise.difference.mean == pytest.approx(1.0) and noise.lower_is_better
    assert noise.verdict is Verdict.WORSE and noise.sentence().startswith("worse: +1.000") and "lower is better" in noise.sentence()
    assert len(noise.worsened) == 5 and noise.improved == () and noise.gate is not None and not noise.gate.ok
    similarity = found.metrics["semantic_similarity"]  # higher is better, as before: its fall is what worsened
    assert not similarity.lower_is_better and similarity.difference.mean < 0 and similarity.worsened and similarity.improved == ()
    back = compare(candidate, base, max_drop={"noise_sensitivity": 0.1}).metrics["noise_sensitivity"]
    assert back.verdict is Verdict.BETTER and back.worsened == () and len(back.improved) == 5 and back.gate is not None and back.gate.ok
    md, js, xml = tmp_path / "c.md", tmp_path / "c.json", tmp_path / "c.xml"
    result = invoke(["compare", str(base), str(candidate), "-m", "noise_sensitivity", "--max-drop", "noise_sensitivity=0.1", "--markdown", str(md), "--json", str(js), "--junit-xml", str(xml)])
    assert result.exit_code == 1, result.output
    assert "noise_sensitivity, worsened most:" in result.output and "improved most" not in result.output
    assert "lower is better, so a rise is the drop" in result.output
    figures = json.loads(js.read_text(encoding="utf-8"))["metrics"]["noise_sensitivity"]
    assert figures["verdict"] == "worse" and figures["lower_is_better"] is True and len(figures["worsened"]) == 5
    assert "| **worse**; gate **NOT met** |" in md.read_text(encoding="utf-8") and 'failures="1"' in xml.read_text(encoding="utf-8")
    page = tmp_path / "c.html"
    assert invoke(["report", str(candidate), "--compare-to", str(base), "-o", str(page)]).exit_code == 0
    assert '<td class="fail">worse</td>' in page.read_text(encoding="utf-8")


def test_the_movers_say_what_changed_in_the_scorecard_metrics(capitals):
    """A mover of these metrics listed nothing but its two scores; it now names the response that
    changed, the cosine and factuality of each run, the response's and the reference's statements
    that flipped, and the statements noise_sensitivity counted, with the context it took them from."""
    base, candidate = capitals
    found = compare(base, candidate)
    noise = [change.text for change in found.metrics["noise_sensitivity"].worsened[0].changes]
    assert noise[0].startswith("response changed: '") and noise[0].endswith("' in the candidate")  # the two answers differ from their first word
    assert any(c.startswith("response statement only in the candidate (counted: the reference does not support it, retrieved context 1 does)") for c in noise), noise
    similarity = [change.text for change in found.metrics["semantic_similarity"].worsened[0].changes]
    assert any(c.startswith("cosine similarity 1.00 in the base, ") for c in similarity), similarity
    correctness = [change.text for change in found.metrics["answer_correctness"].worsened[0].changes]
    assert any(c.startswith("factuality 1.00 in the base, 0.00 in the candidate") for c in correctness), correctness
    assert any(c.startswith("response statement judged only in the candidate (not attributed)") for c in correctness), correctness


def test_answer_correctness_weights_at_the_floats_limits_score_as_their_ratio(embedding_model):
    """Weights of 1e308 each summed to inf, and inf / inf made the score NaN (a sample with no
    statement anywhere scored NaN; one with a finite sum scored 0). Only the ratio counts."""
    samples = [Sample(response="The Eiffel Tower was completed in 1889.", reference="The Eiffel Tower was completed in 1889 in Paris."), Sample(response="", reference="")]
    for huge, plain in (([1e308, 1e308], [1.0, 1.0]), ([5e-324, 0.0], [1.0, 0.0]), ([1e308, 5e-324], [1.0, 0.0])):
        scores = [create_metric("answer_correctness", {"grader": "verifier", "weights": w}).score_batch(samples, None) for w in (huge, plain)]
        for weighted, reference in zip(*scores):
            assert math.isfinite(weighted.value) and weighted.value == pytest.approx(reference.value, abs=1e-12), (huge, weighted.value, reference.value)


def test_a_text_longer_than_the_embedding_reads_is_named_in_the_details(embedding_model):
    """all-MiniLM-L6-v2 reads 254 word pieces of a text (as sentence-transformers cuts it for
    ragas): two long texts that differ only after that scored cosine 1.0 with nothing said. The
    details and the explanation now name the texts read only in part; a short one is not named."""
    from localeval.metrics.answer_correctness import AnswerCorrectness
    from localeval.metrics.semantic_similarity import SemanticSimilarity

    opening = "The Amazon River flows through Brazil into the Atlantic Ocean. " * 30
    long_pair = Sample(response=opening + "The capital of France is Paris.", reference=opening + "Bananas grow on the Moon.")
    short_pair = Sample(response="The Amazon flows into the Atlantic.", reference=opening)
    similarity = create_metric("semantic_similarity").score_batch([long_pair, short_pair], None)
    assert similarity[0].value == pytest.approx(1.0, abs=1e-6) and similarity[0].details["cut"] == ["response", "reference"]
    assert "only the first 254 word pieces of the response and the reference were read" in SemanticSimilarity.explain_raw(similarity[0].details)
    assert similarity[1].details["cut"] == ["reference"]
    assert "cut" not in create_metric("semantic_similarity").score_batch([Sample(response="Ann wrote it.", reference="Ann wrote it.")], None)[0].details
    correctness = create_metric("answer_correctness", {"grader": "verifier"}).score_batch([short_pair], None)[0]
    assert correctness.details["cut"] == ["reference"] and "word pieces of the reference were read" in AnswerCorrectness.explain_raw(correctness.details)


def test_labels_say_which_scored_metrics_take_none(write_jsonl, tmp_path, embedding_model):
    """With --labels, a run of metrics no row kind labels (semantic_similarity, context_entity_recall)
    said only that the context_recall labels were unused; it now names the metrics that take no
    labels, and a row whose "metric" names one says it takes none (exit 2, file, line and field)."""
    rows = [{"id": f"s{n}", "response": "The Amazon flows into the Atlantic.", "reference": "The Amazon flows into the Atlantic Ocean.",
             "retrieved_contexts": ["The Amazon flows into the Atlantic Ocean."]} for n in range(3)]
    data = write_jsonl(rows)
    label = {"id": "s0", "statement": "The Amazon flows into the Atlantic Ocean.", "label": 1, "retrieved_contexts": ["The Amazon flows into the Atlantic Ocean."]}
    labels = write_jsonl([label], name="labels.jsonl")
    metrics = ["-m", "semantic_similarity", "-m", "context_entity_recall", "--option", "context_entity_recall.extractor=capitalised_spans"]
    result = invoke(["score", str(data), *metrics, "--labels", str(labels), "-o", str(tmp_path / "out.jsonl")])
    assert result.exit_code == 0, result.output
    assert "semantic_similarity, context_entity_recall take no labels: no row kind of the labels file holds their human score" in result.output
    wrong = write_jsonl([{**label, "metric": "noise_sensitivity"}], name="wrong.jsonl")
    refused = invoke(["score", str(data), *metrics, "--labels", str(wrong), "-o", str(tmp_path / "again.jsonl")])
    assert refused.exit_code == 2 and f"{wrong}:1: field 'metric'" in refused.output and "noise_sensitivity takes no labels" in refused.output


def test_a_minimum_on_noise_sensitivity_is_refused_before_any_sample(write_jsonl, tmp_path):
    """A gate is a minimum a score must reach, and noise_sensitivity's good scores are its low
    ones: `-t noise_sensitivity=0.2` failed every clean sample (0.0) and passed every noisy one
    (1.0). --threshold, --min-mean (command line or config), evaluate's thresholds and
    assert_metric now refuse it (exit 2, naming the metric and what to do instead)."""
    from localeval import evaluate
    from localeval.errors import ConfigError
    from localeval.testing import assert_metric

    data = write_jsonl([{"id": "a", "user_input": "q?", "response": "Lyon is famous for its food.", "reference": "Paris is the capital of France.",
                         "retrieved_contexts": ["Paris is the capital of France. Lyon is famous for its food."]}])
    config = tmp_path / "gates.toml"
    config.write_text("min_mean = { noise_sensitivity = 0.1 }\n", encoding="utf-8")
    for gate in (["-t", "noise_sensitivity=0.2"], ["--min-mean", "noise_sensitivity=0.2"], ["--config", str(config)]):
        result = invoke(["score", str(data), "-m", "noise_sensitivity", "--verifier", *gate, "-o", str(tmp_path / "out.jsonl"), "-q"])
        assert result.exit_code == 2 and "noise_sensitivity is lower-is-better" in result.output and "localeval compare --max-drop" in result.output, result.output
        assert not (tmp_path / "out.jsonl").exists()
    with pytest.raises(ConfigError, match="lower-is-better"):
        evaluate([], ["noise_sensitivity"], thresholds={"noise_sensitivity": 0.2})
    with pytest.raises(ConfigError, match="lower-is-better"):
        assert_metric([{"response": "a"}], "noise_sensitivity", 0.2, options={"grader": "verifier"})
    assert evaluate([], ["semantic_similarity"], thresholds={"semantic_similarity": 0.2}).results == []  # a higher-is-better metric's gate stands


def test_identical_texts_reach_a_similarity_threshold_of_1(embedding_model):
    """The float32 embeddings give identical texts a cosine of 0.99999999999997: a threshold of 1
    (allowed, (0, 1]) scored them 0 and explained "cosine similarity 1.00 (below the threshold 1)".
    The threshold now reads the cosine the details show, so the score and its explanation agree."""
    from localeval.metrics.semantic_similarity import SemanticSimilarity

    text = "The Amazon River flows through Brazil into the Atlantic Ocean."
    same, other = create_metric("semantic_similarity", {"threshold": 1.0}).score_batch([Sample(response=text, reference=text), Sample(response="Ann wrote it.", reference=text)], None)
    assert same.value == 1.0 and "at least the threshold 1" in SemanticSimilarity.explain_raw(same.details)
    assert other.value == 0.0 and "below the threshold 1" in SemanticSimilarity.explain_raw(other.details)


def test_a_factuality_weight_of_0_judges_nothing(write_jsonl, tmp_path, embedding_model):
    """`weights=0,1` weighs the statements' F-beta 0, yet every statement was judged (the default
    judge loaded for a figure that counts nothing). Now nothing is judged and no judge is needed:
    the score is semantic_similarity's, and the details say factuality was not counted."""
    from localeval.metrics.answer_correctness import AnswerCorrectness

    samples = [Sample(response="Ann wrote the book in 1990.", reference="Ann wrote the book in 1991."), Sample(response="", reference="Bob sang.")]
    metric = create_metric("answer_correctness", {"weights": "0,1"})
    assert metric.params.grader == "judge" and not metric.uses_judge()
    scores = metric.score_batch(samples, None)
    similarity = create_metric("semantic_similarity").score_batch(samples, None)
    assert [s.value for s in scores] == [s.value for s in similarity] and scores[0].usage is None
    assert "tp" not in scores[0].details and AnswerCorrectness.explain_raw(scores[0].details).startswith("factuality not counted (weight 0), similarity 0.")
    assert create_metric("answer_correctness", {"weights": "0.5,0.5"}).uses_judge()  # a weight above 0 judges, as before


def test_the_report_page_keeps_the_noisiest_rows_where_it_keeps_the_worst():
    """A page shows the 2,000 worst rows of a larger file, the worst by the lowest score: for
    noise_sensitivity those are the cleanest samples, so the noisiest were the ones left out."""
    from localeval.data.results import ResultRow
    from localeval.reports.html import worst_rows

    rows = [ResultRow(line=n + 1, id=f"s{n}", scores={"noise_sensitivity": value}) for n, value in enumerate((0.0, 1.0, 0.5, 0.0))]
    kept, total = worst_rows(iter(rows), ["noise_sensitivity"], 2)
    assert total == 4 and [row.id for row in kept] == ["s1", "s2"]
    mixed = [ResultRow(line=1, id="a", scores={"noise_sensitivity": 0.9, "semantic_similarity": 0.8}),
             ResultRow(line=2, id="b", scores={"noise_sensitivity": 0.0, "semantic_similarity": 0.3})]
    assert [row.id for row in worst_rows(iter(mixed), ["noise_sensitivity", "semantic_similarity"], 1)[0]] == ["a"]  # 1 - 0.9 is below 0.3


@pytest.mark.parametrize(("option", "value"), [("answer_correctness.beta", "nan"), ("answer_correctness.threshold", "inf"), ("context_entity_recall.match_threshold", "-inf"), ("noise_sensitivity.threshold", "nan")])
def test_nan_and_infinite_options_are_refused_naming_the_value(option, value, write_jsonl, tmp_path):
    """`beta=nan` was refused as "Input should be greater than 0" (pydantic's range check on NaN):
    now exit 2 names the option and the value, from the command line as from a config file."""
    data = write_jsonl([{"id": "a", "user_input": "q?", "response": "Ann wrote it.", "reference": "Ann wrote it.", "retrieved_contexts": ["Ann wrote it."]}])
    metric, key = option.split(".")
    result = invoke(["score", str(data), "-m", metric, "--verifier", "--option", f"{option}={value}", "-o", str(tmp_path / "out.jsonl"), "-q"])
    assert result.exit_code == 2 and f"option '{key}': expected a number" in result.output and f"not '{value}'" in result.output, result.output
    config = tmp_path / "localeval.toml"
    config.write_text(f"[options.{metric}]\n{key} = {value}\n", encoding="utf-8")
    result = invoke(["score", str(data), "-m", metric, "--verifier", "--config", str(config), "-o", str(tmp_path / "out.jsonl"), "-q"])
    assert result.exit_code == 2 and f"option '{key}': expected a number" in result.output, result.output


def test_an_entity_sentence_too_long_for_the_window_names_the_text_it_is_in():
    """A reference sentence longer than the judge's window leaves was the sample's error saying
    "sentence 1 of the context": it now says the reference (or the retrieved contexts); the
    other samples of the batch are scored."""
    from localeval.testing import ScriptedJudge

    judge = ScriptedJudge(answer=lambda messages, schema: {"entities": ["Amazon"]}, context_size=1024)
    endless = "Amazon Brazil Peru Colombia Atlantic " * 200  # one sentence, no full stop: about 1,800 tokens here
    short = "The Amazon flows into the Atlantic."
    samples = [Sample(reference=endless, retrieved_contexts=[short]), Sample(reference=short, retrieved_contexts=[endless]), Sample(reference=short, retrieved_contexts=[short])]
    from localeval import evaluate

    run = evaluate(samples, [create_metric("context_entity_recall")], judge=judge)
    errors = [row["errors"].get("context_entity_recall", "") for row in run.results]
    assert errors[0].startswith("sentence 1 of the reference has about") and errors[1].startswith("sentence 1 of the retrieved contexts has about")
    assert run.results[2]["scores"]["context_entity_recall"] == pytest.approx(1.0, abs=1e-6) and not errors[2]


def test_an_entity_mover_says_which_reference_entities_the_contexts_name_now(write_jsonl, tmp_path):
    """context_entity_recall's movers said "found in the base only: 'Peru'", as an id metric's
    do; they now say it is a reference entity the contexts name, next to the context that left."""
    reference = "The Amazon River flows through Peru and Brazil."
    base_rows = [{"id": f"q{n}", "reference": reference, "retrieved_contexts": ["Amazon River crosses Peru.", "Brazil holds most of it."]} for n in range(3)]
    candidate_rows = [{**row, "retrieved_contexts": ["Brazil holds most of it."]} if row["id"] == "q0" else row for row in base_rows]
    runs = []
    for name, rows in (("base", base_rows), ("candidate", candidate_rows)):
        data = write_jsonl(rows, name=f"{name}.jsonl")
        out = tmp_path / f"{name}.results.jsonl"
        result = invoke(["score", str(data), "-m", "context_entity_recall", "--option", "context_entity_recall.extractor=capitalised_spans", "-o", str(out), "-q"])
        assert result.exit_code == 0, result.output
        runs.append(out)
    (mover,) = compare(*runs).metrics["context_entity_recall"].worsened
    assert tuple(change.text for change in mover.changes) == (
        "context left (rank 1 in the base): 'Amazon River crosses Peru.'",
        "reference entity the contexts name in the base only: 'Amazon River'",
        "reference entity the contexts name in the base only: 'Peru'",
    )
