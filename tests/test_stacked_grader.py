"""The stacked grader (localeval.graders.stacked): the judge rule and the verifier read the same
units, and the stacked model fitted for the judge and verifier file decides; where none is
fitted (another judge, another verifier file, the user's own calibration of the task, a rubric),
the judge rule decides exactly as it does alone. The statements' cascade: the verifier decides
outside its band, the judge rule inside it. Real SmolLM2 answers and the shipped verifier."""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from typing import Any

import pytest
import tomllib
from conftest import result_rows, run_score

from localeval.calibration.combination import LogisticModel
from localeval.data.samples import Sample
from localeval.errors import ConfigError
from localeval.graders import Unit
from localeval.graders.judge_rule import ATTRIBUTION_KEY, JudgeRule
from localeval.graders.judge_units import RELEVANCE_KEY
from localeval.graders.stacked import CASCADE, STACKED, STACKED_FEATURES, CascadeBand, StackedGrader, cascade_band, stacked_model
from localeval.graders.verifier import VerifierGrader, verified_windows
from localeval.judge.reading import UsageTally
from localeval.metrics import create_metric
from localeval.metrics.judging import GRADERS
from localeval.models.store import DEFAULT_MODEL, replace_calibrations
from localeval.verifier import SHIPPED_SHA256, load_verifier, shipped_path

QUESTION = "When was the Eiffel Tower completed?"
CONTEXTS = ["The Eiffel Tower is in Paris. It was completed on 31 March 1889.", "Bananas are yellow."]
UNITS = [Unit("The Eiffel Tower is in Paris.", 0, True), Unit("It was completed on 31 March 1889.", 0, False), Unit("Bananas are yellow.", 1, True)]


class TablesOf:
    """The real judge, with the calibration tables a test gives it (only the tables differ)."""

    def __init__(self, judge: Any, tables: Mapping[str, Mapping[str, Any]]) -> None:
        self._judge = judge
        self.calibration = tables

    def __getattr__(self, name: str) -> Any:
        return getattr(self._judge, name)


def _stacked(task: str, sha256: str = SHIPPED_SHA256, **weights: float) -> dict[str, Any]:
    return {"intercept": -1.0, "weights": {name: weights.get(name, 0.0) for name in STACKED_FEATURES[task]}, "verifier_sha256": sha256}


def _tables(cascade: dict[str, Any] | None = None, **stacked: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """The metrics' documented default tables, with the stacked models and the statements' cascade band given."""
    plain = {RELEVANCE_KEY: create_metric("context_relevance").default_calibration.describe(), ATTRIBUTION_KEY: create_metric("context_recall").default_calibration.describe()}
    tables = {task: {**table, STACKED: stacked[task]} if task in stacked else table for task, table in plain.items()}
    if cascade is not None:
        tables[ATTRIBUTION_KEY] = {**tables[ATTRIBUTION_KEY], CASCADE: cascade}
    return tables


STATEMENTS = ["The tower was completed in 1889.", "The tower is made of cheese."]
SENTENCES = ["The Eiffel Tower is in Paris.", "It was completed on 31 March 1889."]


def test_the_stacked_model_weighs_the_judge_rules_features_and_the_verifiers_logits(small_judge: Any) -> None:
    judge = TablesOf(small_judge, _tables(relevance=_stacked(RELEVANCE_KEY, judge_passage=1.5, verifier=0.4, verifier_passage=0.1, verifier_vs_best=0.7)))
    calibration = create_metric("context_relevance").calibration_for({})
    needs = StackedGrader(judge, calibration).needed(QUESTION, UNITS, CONTEXTS, UsageTally())
    alone = JudgeRule(judge, calibration).needed(QUESTION, UNITS, CONTEXTS, UsageTally())
    read = VerifierGrader(None, calibration).needed(QUESTION, UNITS, CONTEXTS, UsageTally())
    assert needs.notes["decided_by"] == "stacked"
    top = max(v["verifier"] for v in read.features)
    for probability, features, judged, verifier in zip(needs.probabilities, needs.features, alone.features, read.features):
        below_top = verifier["verifier"] - top
        assert features == {**judged, "verifier": verifier["verifier"], "verifier_passage": verifier["best_in_context"], "verifier_vs_best": below_top}
        by_hand = -1.0 + 1.5 * judged["judge_passage"] + 0.4 * verifier["verifier"] + 0.1 * verifier["best_in_context"] + 0.7 * below_top
        assert probability == pytest.approx(1 / (1 + math.exp(-by_hand)))
    assert needs.rule is alone.rule  # the judge rule's selection: the unit holding its short answer is kept


def test_statements_are_weighed_with_the_verifiers_best_window(small_judge: Any) -> None:
    judge = TablesOf(small_judge, _tables(attribution=_stacked(ATTRIBUTION_KEY, judge=0.5, best_coverage=1.0, verifier=0.3)))
    calibration = create_metric("context_recall").calibration_for({})
    statements, sentences = ["The tower was completed in 1889.", "The tower is made of cheese."], ["The Eiffel Tower is in Paris.", "It was completed on 31 March 1889."]
    stacked = StackedGrader(judge, calibration).supported(statements, sentences, UsageTally())
    alone = JudgeRule(judge, calibration).supported(statements, sentences, UsageTally())
    logits = [read.logit for read in verified_windows(load_verifier(), statements, sentences)]
    for answer, judged, logit in zip(stacked, alone, logits):
        assert answer.features == {**judged.features, "verifier": logit}
        by_hand = -1.0 + 0.5 * judged.features["judge"] + 1.0 * judged.features["best_coverage"] + 0.3 * logit
        assert answer.probability == pytest.approx(1 / (1 + math.exp(-by_hand)))
        assert answer.scope == judged.scope  # the reason still quotes the judge's deciding chunk


def test_the_cascade_asks_the_judge_only_for_statements_inside_its_band(small_judge: Any) -> None:
    """A band around the first statement's logit only: the judge rule decides it, exactly as alone
    (asked for that statement only), and the verifier decides the second, exactly as alone."""
    logits = [read.logit for read in verified_windows(load_verifier(), STATEMENTS, SENTENCES)]
    assert abs(logits[0] - logits[1]) > 0.2
    band = {"low": logits[0] - 0.1, "high": logits[0] + 0.1, "verifier_sha256": SHIPPED_SHA256}
    judge = TablesOf(small_judge, _tables(cascade=band))
    calibration = create_metric("context_recall").calibration_for({})
    tally = UsageTally()
    cascade = StackedGrader(judge, calibration).supported(STATEMENTS, SENTENCES, tally)
    alone_tally = UsageTally()
    judged = JudgeRule(judge, calibration).supported(STATEMENTS[:1], SENTENCES, alone_tally)[0]
    verified = VerifierGrader(None, calibration).supported(STATEMENTS, SENTENCES, UsageTally())[1]
    assert (cascade[0].probability, cascade[0].judge_log_odds, cascade[0].scope) == (judged.probability, judged.judge_log_odds, judged.scope)
    assert cascade[0].features == {**judged.features, "verifier": logits[0]}
    assert cascade[0].decided_by is not None and cascade[0].decided_by.startswith("judge rule (verifier logit inside the cascade band")
    assert (cascade[1].probability, cascade[1].features, cascade[1].scope, cascade[1].judge_log_odds) == (verified.probability, verified.features, verified.scope, None)
    assert cascade[1].decided_by is not None and cascade[1].decided_by.startswith("verifier (logit outside the cascade band")
    assert tally.calls == alone_tally.calls >= 1  # the judge was asked about the first statement only


def test_the_metric_says_which_rule_decided_each_statement(small_judge: Any) -> None:
    everything = {"low": -1000.0, "high": 1000.0, "verifier_sha256": SHIPPED_SHA256}
    nothing = {"low": 1000.0, "high": 1000.0, "verifier_sha256": SHIPPED_SHA256}
    metric = create_metric("context_recall", {"grader": "stacked"})
    sample = Sample(user_input="When was it completed?", retrieved_contexts=[" ".join(SENTENCES)], reference=" ".join(STATEMENTS))
    asked = metric.score_statements(sample, STATEMENTS, TablesOf(small_judge, _tables(cascade=everything)))
    unasked = metric.score_statements(sample, STATEMENTS, TablesOf(small_judge, _tables(cascade=nothing)))
    assert all(v["decided_by"].startswith("judge rule") and "judge_log_odds" in v for v in asked.details["statements"])
    assert all(v["decided_by"].startswith("verifier") and "judge_log_odds" not in v for v in unasked.details["statements"])
    assert unasked.usage is not None and unasked.usage["calls"] == 0 < asked.usage["calls"]  # type: ignore[index]


def test_a_cascade_band_is_read_only_for_its_verifier_file_and_a_malformed_one_is_refused() -> None:
    band = {"low": -1.5, "high": 0.5, "verifier_sha256": SHIPPED_SHA256}
    assert cascade_band(_tables(cascade=band), ATTRIBUTION_KEY, SHIPPED_SHA256) == CascadeBand(-1.5, 0.5)
    assert cascade_band(_tables(cascade={**band, "verifier_sha256": "0" * 64}), ATTRIBUTION_KEY, SHIPPED_SHA256) is None
    assert cascade_band(_tables(), ATTRIBUTION_KEY, SHIPPED_SHA256) is None
    for wrong in ({"low": -1.5}, {**band, "high": -2.0}, {**band, "low": "low"}, {**band, "high": float("inf")}, {**band, "low": True}):
        with pytest.raises(ConfigError, match=r"calibration 'attribution.cascade'"):
            cascade_band(_tables(cascade=wrong), ATTRIBUTION_KEY, SHIPPED_SHA256)
    with pytest.raises(ConfigError, match=r"calibration 'attribution.cascade'"):
        create_metric("faithfulness", {"grader": "stacked"}).check_calibration(_tables(cascade={**band, "low": None}))


@pytest.mark.parametrize(
    "tables, why",
    [
        (_tables(), "judge rule (no stacked model in this judge's table)"),
        (_tables(relevance=_stacked(RELEVANCE_KEY, "0" * 64, verifier=5.0)), "judge rule (the stacked model in this judge's table was fitted on another verifier file's logits)"),
    ],
)
def test_without_a_stacked_model_for_this_judge_and_verifier_the_judge_rule_decides_alone(small_judge: Any, tables: dict[str, Any], why: str) -> None:
    judge = TablesOf(small_judge, tables)
    calibration = create_metric("context_relevance").calibration_for({})
    needs = StackedGrader(judge, calibration).needed(QUESTION, UNITS, CONTEXTS, UsageTally())
    alone = JudgeRule(judge, calibration).needed(QUESTION, UNITS, CONTEXTS, UsageTally())
    assert (needs.probabilities, needs.features) == (alone.probabilities, alone.features), why
    assert needs.notes["decided_by"] == why


class DefaultJudgeTables(TablesOf):
    """The real small judge, describing itself as the catalog's default judge (whose catalog table
    holds a stacked model), with the tables a test gives it: what decided_by reads is which judge
    the catalog knows it as, and its tables."""

    def describe(self) -> dict[str, Any]:
        return {**self._judge.describe(), "model": DEFAULT_MODEL}


def test_a_calibration_file_that_replaces_the_tasks_table_leaves_the_decision_to_the_judge_rule(small_judge: Any) -> None:
    """The user's own `localeval calibrate` table replaces the catalog's whole table for the task,
    stacked model included (localeval.judge.backends.calibration_tables, as every backend merges);
    decided_by said "no stacked model in this judge's table", which the catalog's table has."""
    from localeval.calibration.combination import CalibrationFile
    from localeval.judge.backends import calibration_tables
    from localeval.models.store import CATALOG

    assert STACKED in CATALOG[DEFAULT_MODEL].calibration[RELEVANCE_KEY]
    users = create_metric("context_relevance").default_calibration.describe()
    merged = calibration_tables(CATALOG[DEFAULT_MODEL].calibration, CalibrationFile("mine.json", "0" * 64, {RELEVANCE_KEY: users}))
    calibration = create_metric("context_relevance").calibration_for(merged)
    needs = StackedGrader(DefaultJudgeTables(small_judge, merged), calibration).needed(QUESTION, UNITS, CONTEXTS, UsageTally())
    alone = JudgeRule(small_judge, calibration).needed(QUESTION, UNITS, CONTEXTS, UsageTally())
    assert (needs.probabilities, needs.features) == (alone.probabilities, alone.features)
    assert needs.notes["decided_by"] == "judge rule (a calibration file replaced the catalog's relevance table for this judge, and its table has no stacked model)"
    unreplaced = StackedGrader(DefaultJudgeTables(small_judge, CATALOG[DEFAULT_MODEL].calibration), calibration).needed(QUESTION, UNITS, CONTEXTS, UsageTally())
    assert unreplaced.notes["decided_by"] == "stacked"


def test_a_question_longer_than_the_verifier_reads_is_decided_by_the_judge_rule_saying_so(small_judge: Any) -> None:
    judge = TablesOf(small_judge, _tables(relevance=_stacked(RELEVANCE_KEY, verifier=5.0)))
    calibration = create_metric("context_relevance").calibration_for({})
    question = "When was the Eiffel Tower, " + "the wrought-iron lattice tower on the Champ de Mars in Paris, " * 6 + "completed?"
    needs = StackedGrader(judge, calibration).needed(question, UNITS, CONTEXTS, UsageTally())
    alone = JudgeRule(judge, calibration).needed(question, UNITS, CONTEXTS, UsageTally())
    assert (needs.probabilities, needs.features) == (alone.probabilities, alone.features)
    assert needs.notes["decided_by"].startswith("judge rule (the question has ") and "more than the 64 the verifier reads" in needs.notes["decided_by"]


def test_a_rubric_leaves_the_decision_to_the_judge_rule(small_judge: Any, tmp_path: Any) -> None:
    """A rubric replaces the judge's task, so its log-odds are not the ones the model was fitted on."""
    rubric = tmp_path / "rubric.txt"
    rubric.write_text("Is this paragraph needed to answer {question}? {paragraph} Answer Yes or No.", encoding="utf-8")
    metric = create_metric("context_relevance", {"grader": "stacked", "rubric": str(rubric)})
    judge = TablesOf(small_judge, _tables(relevance=_stacked(RELEVANCE_KEY, verifier=5.0)))
    needs = metric.grader(judge).needed(QUESTION, UNITS, CONTEXTS, UsageTally())
    assert needs.notes["decided_by"] == "judge rule (a rubric replaces the task the stacked model was fitted on)"
    assert "verifier" not in needs.features[0]


def test_a_malformed_stacked_model_is_refused_naming_its_table() -> None:
    with pytest.raises(ConfigError, match=r"calibration 'relevance.stacked'.*verifier_sha256"):
        stacked_model(_tables(relevance={"intercept": 0.0, "weights": {}}), RELEVANCE_KEY, SHIPPED_SHA256)
    with pytest.raises(ConfigError, match=r"calibration 'attribution.stacked': no such feature wrong"):
        stacked_model(_tables(attribution={**_stacked(ATTRIBUTION_KEY), "weights": {"wrong": 1.0}}), ATTRIBUTION_KEY, SHIPPED_SHA256)
    with pytest.raises(ConfigError, match="no weight for"):
        create_metric("context_recall", {"grader": "stacked"}).check_calibration(_tables(attribution={**_stacked(ATTRIBUTION_KEY), "weights": {"judge": 1.0}}))
    assert isinstance(stacked_model(_tables(relevance=_stacked(RELEVANCE_KEY)), RELEVANCE_KEY, SHIPPED_SHA256), LogisticModel)


def test_the_catalogs_stacked_models_weigh_the_shipped_verifier_file() -> None:
    """A retrained verifier file ships only with stacked models refitted on its logits
    (training/choose_decision.py --ship): otherwise the default judge's models would be ignored."""
    from localeval.models.store import CATALOG

    tables = CATALOG[DEFAULT_MODEL].calibration
    stacked = {task: table[STACKED] for task, table in tables.items() if STACKED in table}
    assert set(stacked) == {RELEVANCE_KEY}  # docs/metrics.md: context_relevance's ships; statements' none (within noise)
    for task, table in stacked.items():
        assert table["verifier_sha256"] == SHIPPED_SHA256, task
        assert stacked_model(tables, task, load_verifier().sha256) is not None
    assert CASCADE not in tables[ATTRIBUTION_KEY]  # docs/metrics.md: the statements' cascade lost to the judge rule held out
    assert load_verifier().sha256 == SHIPPED_SHA256 and shipped_path().is_file()


def test_the_verifier_option_of_0_5_names_a_grader_and_a_contradiction_is_refused() -> None:
    assert create_metric("context_relevance", {"verifier": True}).params.grader == "verifier"
    assert create_metric("faithfulness", {"verifier": "false"}).params.grader == "judge"
    assert create_metric("context_recall", {"grader": "stacked"}).grader_class() is GRADERS["stacked"]
    with pytest.raises(ConfigError, match=r"metric 'context_recall' options: verifier=true names the grader 'verifier', and grader='stacked' another"):
        create_metric("context_recall", {"verifier": True, "grader": "stacked"})
    with pytest.raises(ConfigError, match="verifier must be true or false"):
        create_metric("context_recall", {"verifier": "sometimes"})


def test_replacing_a_catalog_table_keeps_the_other_lines_and_writes_toml_that_reads_back() -> None:
    text = 'default = "m"\n\n[[model]]\nname = "m"\ncalibration.relevance = { intercept = 1.0, weights = { a = 2.0 } }\ncalibration.usefulness = { intercept = 0.5, weights = { judge = 1.0 } }\n\n[[model]]\nname = "n"\n'
    table = {"intercept": -1.5, "weights": {"a": 0.25}, STACKED: {"intercept": 0.1, "weights": {"a": 1.0}, "verifier_sha256": "ab" * 32}}
    written = tomllib.loads(replace_calibrations(text, "m", {RELEVANCE_KEY: table}))
    assert written["model"][0]["calibration"] == {"relevance": table, "usefulness": {"intercept": 0.5, "weights": {"judge": 1.0}}}
    assert written["model"][1] == {"name": "n"}


def test_the_command_line_names_the_grader_and_refuses_two_that_disagree(write_jsonl: Any, tmp_path: Any) -> None:
    data = write_jsonl([{"id": "a", "user_input": "Who wrote it?", "retrieved_contexts": ["Ann wrote the book."], "reference": "Ann wrote the book."}])
    out = tmp_path / "out.jsonl"
    done = run_score(data, "-m", "context_recall", "--grader", "verifier", "-o", out, "-q")
    assert done.exit_code == 0, done.output
    header = json.loads(out.read_text(encoding="utf-8").splitlines()[0])
    assert header["run"]["metrics"]["context_recall"]["grader"] == "verifier" and header["run"]["judge"] is None
    assert len(result_rows(out)) == 1
    refused = run_score(data, "-m", "context_recall", "--verifier", "--grader", "stacked", "-o", tmp_path / "other.jsonl", "-q")
    assert refused.exit_code == 2 and "verifier=true names the grader 'verifier', and grader='stacked' another" in refused.output


def test_refitting_the_judge_rules_table_keeps_the_stacked_model_and_the_cascade(tmp_path: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """benchmarks/write_catalog.py replaces the judge rule's combination; the stacked model and the
    cascade band read the judge rule's raw features and the verifier's logits, not that combination,
    so they stay (the release step must not drop them)."""
    from pathlib import Path

    monkeypatch.syspath_prepend(str(Path(__file__).resolve().parents[1] / "benchmarks"))
    from write_catalog import CATALOG_FILE, write_catalog

    def tables_in(path: Path) -> dict[str, Any]:
        return next(m for m in tomllib.loads(path.read_text(encoding="utf-8"))["model"] if m["name"] == DEFAULT_MODEL)["calibration"]

    shipped = tables_in(CATALOG_FILE)
    band = {"low": -1.5, "high": 0.5, "verifier_sha256": SHIPPED_SHA256}
    catalog = tmp_path / "catalog.toml"
    catalog.write_text(replace_calibrations(CATALOG_FILE.read_text(encoding="utf-8"), DEFAULT_MODEL, {ATTRIBUTION_KEY: {**shipped[ATTRIBUTION_KEY], CASCADE: band}}), encoding="utf-8")
    refit = {"intercept": -1.0, "weights": {name: 0.5 for name in STACKED_FEATURES[RELEVANCE_KEY] if not name.startswith("verifier")}}
    write_catalog(DEFAULT_MODEL, {RELEVANCE_KEY: refit}, catalog)
    table = tables_in(catalog)[RELEVANCE_KEY]
    assert {k: table[k] for k in ("intercept", "weights")} == refit and table[STACKED] == shipped[RELEVANCE_KEY][STACKED]
    assert tables_in(catalog)[ATTRIBUTION_KEY][CASCADE] == band
    write_catalog(DEFAULT_MODEL, {ATTRIBUTION_KEY: {"intercept": 0.5, "weights": {"judge": 1.0}}}, catalog)
    assert tables_in(catalog)[ATTRIBUTION_KEY] == {"intercept": 0.5, "weights": {"judge": 1.0}, CASCADE: band}
