"""The stacked decision: the judge rule and the verifier read the same units, and one logistic
model fitted on validation rows weighs both answers into one verdict.

Neither grader is right everywhere (docs/measured.md): the judge rule picks the answering
sentence of one short context far better; the verifier says "insufficient information" far more
often where nothing answers, and reads news summaries better. A model of the judge rule's
features beside the verifier's logit (and, for relevance, the best logit in the unit's context)
is fitted on the validation split's rows (training/decision_rows.py, training/choose_decision.py,
out of fold by question) and stored inside the task's calibration table of the judge it was fitted
with, as `stacked`, with the SHA-256 of the verifier file whose logits it weighs:

    calibration.relevance = { intercept = ..., weights = { ... }, stacked = { intercept = ...,
        weights = { judge_passage = ..., verifier = ..., ... }, verifier_sha256 = "..." } }

So the stacked model is used only where it was fitted: with that judge, that verifier file, and
the task's table as the catalog has it. A calibration file that replaces the task's table (the
user's own `localeval calibrate`) has no `stacked`, and the judge rule under the user's table
decides, as it did before; so does a judge the catalog fits no stacked model for (a GGUF file of
your own, the test model). context_relevance's details say which rule decided (`decided_by`);
a statement's features hold `verifier` where the stacked model decided it.

The statements (context_recall, faithfulness, factual_correctness) may instead be decided by a
cascade: the verifier decides a statement whose logit is outside a band, and only a statement
inside it asks the judge rule, which decides it (most statements never reach the judge, so it
costs a fraction of the judge rule's time). A band chosen on validation claims
(training/choose_decision.py --task attribution --ship cascade) is stored beside the stacked
models, tied the same way to the verifier file it was chosen with:

    calibration.attribution = { intercept = ..., weights = { ... }, cascade = { low = ..., high = ...,
        verifier_sha256 = "..." } }

Each statement's verdict then says which decided (`decided_by`). None ships today: neither a
stacked model nor the best band beat the judge rule on dev claims (docs/HISTORY.md, "The
stacked decision"), so the judge rule decides statements under grader=stacked.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from localeval.calibration.combination import LogisticModel
from localeval.errors import ConfigError
from localeval.graders import Grader, Needs, Support, Unanswerable, Unit, Usefulness
from localeval.graders.evidence import statement_evidence
from localeval.graders.judge_rule import ATTRIBUTION_FEATURES, ATTRIBUTION_KEY, JudgeRule
from localeval.graders.judge_units import RELEVANCE_FEATURES, RELEVANCE_KEY
from localeval.graders.verifier import VerifierGrader, verified_windows, verifier_support
from localeval.judge import Judge
from localeval.judge.reading import UsageTally
from localeval.judge.rubric import Rubric
from localeval.models.store import CATALOG
from localeval.verifier import load_verifier

STACKED = "stacked"  # the key of the stacked model inside a task's calibration table
CASCADE = "cascade"  # the key of the statements' cascade band inside the attribution table
# What each task's stacked model weighs: the judge rule's features and the verifier's readings.
STACKED_FEATURES: dict[str, tuple[str, ...]] = {
    RELEVANCE_KEY: (*RELEVANCE_FEATURES, "verifier", "verifier_passage", "verifier_vs_best"),
    ATTRIBUTION_KEY: (*ATTRIBUTION_FEATURES, "verifier"),
}


def stacked_model(tables: Mapping[str, Any], task: str, verifier_sha256: str) -> LogisticModel | None:
    """The task's stacked model from a judge's calibration tables, or None where there is none,
    or where it was fitted on another verifier file's logits (its weights would read them wrong).
    A malformed one is a ConfigError naming the table."""
    found = _tied_entry(tables, task, STACKED, "a stacked model needs 'intercept', 'weights'", verifier_sha256)
    if found is None or not found[2]:
        return None
    return LogisticModel.from_table(found[0], found[1], STACKED_FEATURES[task])


def _tied_entry(tables: Mapping[str, Any], task: str, key: str, needs: str, verifier_sha256: str) -> tuple[Mapping[str, Any], str, bool] | None:
    """The `key` entry of the task's table (None where there is none), the name its errors give,
    and whether it was made with this verifier file (its `verifier_sha256`); an entry that is not
    a table or names no file is a ConfigError."""
    table = tables.get(task)
    entry = table.get(key) if isinstance(table, Mapping) else None
    if entry is None:
        return None
    where = f"calibration '{task}.{key}'"
    if not isinstance(entry, Mapping) or not isinstance(entry.get("verifier_sha256"), str):
        raise ConfigError(f"{where}: {needs} and the 'verifier_sha256' of the verifier file it was made with")
    return entry, where, entry["verifier_sha256"] == verifier_sha256


def _holds_stacked(tables: Mapping[str, Any], task: str) -> bool:
    """Whether the task's table holds a stacked model (for any verifier file)."""
    table = tables.get(task)
    return isinstance(table, Mapping) and table.get(STACKED) is not None


@dataclass(frozen=True)
class CascadeBand:
    """The verifier logits for which a statement asks the judge rule: [low, high). Outside it the
    verifier's own verdict stands (chosen on validation claims: where the verifier is sure, it
    was right more often than the judge rule)."""

    low: float
    high: float

    def asks_judge(self, logit: float) -> bool:
        return self.low <= logit < self.high


def cascade_band(tables: Mapping[str, Any], task: str, verifier_sha256: str) -> CascadeBand | None:
    """The task's cascade band from a judge's calibration tables, or None where there is none, or
    where it was chosen on another verifier file's logits. A malformed one is a ConfigError
    naming the table."""
    found = _tied_entry(tables, task, CASCADE, "a cascade needs 'low', 'high'", verifier_sha256)
    if found is None:
        return None
    band, where, ours = found
    low, high = _finite(band.get("low")), _finite(band.get("high"))
    if low is None or high is None or low > high:
        raise ConfigError(f"{where}: 'low' and 'high' must be finite numbers with low <= high, not {band.get('low')!r} and {band.get('high')!r}")
    return CascadeBand(low, high) if ours else None


def _finite(value: Any) -> float | None:
    """The value as a float when it is a finite number (not a bool), else None."""
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value) else None


def relevance_features(judged: Sequence[Mapping[str, float]], logits: Sequence[float], best_in_context: Sequence[float]) -> list[dict[str, float]]:
    """Each unit's judge rule features beside the verifier's readings: its logit, the best logit
    of its context, and its distance below the sample's best logit (in one short context the
    verifier scores the answer's neighbours high too; the answer is the one on top)."""
    top = max(logits, default=0.0)
    return [{**f, "verifier": v, "verifier_passage": b, "verifier_vs_best": v - top} for f, v, b in zip(judged, logits, best_in_context)]


class StackedGrader(Grader):
    """The judge rule and the verifier together (the module docstring): each question is put to
    both, and the stacked model fitted for this judge and verifier decides; where none is fitted,
    the judge rule alone does."""

    needs_judge = True

    def __init__(self, judge: Judge | None, calibration: LogisticModel, language: str = "en", rubric: Rubric | None = None) -> None:
        super().__init__(judge, calibration, language, rubric)
        self.rule = JudgeRule(judge, calibration, language, rubric)
        self.verifier = VerifierGrader(None, calibration, language, rubric)
        tables = judge.calibration if judge is not None else {}
        sha256 = load_verifier().sha256
        # A rubric replaces the judge's task, so its log-odds are not those the model was fitted on.
        self.models = {task: None if rubric is not None else stacked_model(tables, task, sha256) for task in STACKED_FEATURES}
        self.band = None if rubric is not None else cascade_band(tables, ATTRIBUTION_KEY, sha256)

    @classmethod
    def recorded(cls) -> dict[str, Any]:
        return {"verifier_file": load_verifier().describe()}

    @classmethod
    def check_tables(cls, tables: Mapping[str, Mapping[str, Any]]) -> None:
        for task in STACKED_FEATURES:
            stacked_model(tables, task, load_verifier().sha256)
        cascade_band(tables, ATTRIBUTION_KEY, load_verifier().sha256)

    def supported(self, statements: Sequence[str], sentences: Sequence[str], tally: UsageTally, chunks: int = 2) -> list[Support]:
        model = self.models[ATTRIBUTION_KEY]
        if model is not None:
            judged = self.rule.supported(statements, sentences, tally, chunks)
            read = verified_windows(load_verifier(), statements, sentences, self.language)
            answers = []
            for support, reading in zip(judged, read):
                features = {**support.features, "verifier": reading.logit}
                answers.append(Support(model.probability(features), features, support.evidence, support.scope, support.judge_log_odds, reading.pieces, "stacked"))
            return answers
        if self.band is not None:
            return self._cascade(self.band, statements, sentences, tally, chunks)
        return self.rule.supported(statements, sentences, tally, chunks)

    def _cascade(self, band: CascadeBand, statements: Sequence[str], sentences: Sequence[str], tally: UsageTally, chunks: int) -> list[Support]:
        """The verifier's verdict where its logit is outside the band; the judge rule's inside,
        the judge asked for those statements only (in one call, so its chunks are shared)."""
        verifier = load_verifier()
        read = verified_windows(verifier, statements, sentences, self.language)
        asked = [n for n, reading in enumerate(read) if band.asks_judge(reading.logit)]
        judged = dict(zip(asked, self.rule.supported([statements[n] for n in asked], sentences, tally, chunks))) if asked else {}
        calibration = verifier.calibration["attribution"]
        answers = []
        for number, reading in enumerate(read):
            support = judged.get(number)
            if support is None:
                found = statement_evidence(statements[number], sentences, self.language)
                answers.append(verifier_support(calibration, reading, found, f"verifier (logit outside the cascade band [{band.low:g}, {band.high:g}))"))
            else:
                features = {**support.features, "verifier": reading.logit}
                answers.append(Support(support.probability, features, support.evidence, support.scope, support.judge_log_odds, reading.pieces, f"judge rule (verifier logit inside the cascade band [{band.low:g}, {band.high:g}))"))
        return answers

    def needed(self, question: str, units: Sequence[Unit], passages: Sequence[str], tally: UsageTally, judged_contexts: int = 0, whole_contexts: bool = False) -> Needs:
        judged = self.rule.needed(question, units, passages, tally, judged_contexts, whole_contexts)
        model = self.models[RELEVANCE_KEY]
        if model is None:
            return Needs(judged.probabilities, judged.features, judged.rule, {**judged.notes, "decided_by": self._alone(RELEVANCE_KEY)})
        try:
            logits, best, notes = self.verifier.read_units(question, units, passages)
        except Unanswerable as refusal:
            return Needs(judged.probabilities, judged.features, judged.rule, {**judged.notes, "decided_by": f"judge rule ({refusal})"})
        features = relevance_features(judged.features, logits, best)
        return Needs([model.probability(f) for f in features], features, judged.rule, {**judged.notes, **notes, "decided_by": "stacked"})

    def _alone(self, task: str) -> str:
        """Why the judge rule decides the task alone: a rubric, a stacked model fitted on another
        verifier file, a calibration file whose table for the task replaced the catalog's (with
        the stacked model it held: the judge's table lacks the one the catalog has for it), or
        none for this judge."""
        if self.rubric is not None:
            return "judge rule (a rubric replaces the task the stacked model was fitted on)"
        if _holds_stacked(self.judge.calibration if self.judge is not None else {}, task):
            return "judge rule (the stacked model in this judge's table was fitted on another verifier file's logits)"
        name = self.judge.describe().get("model") if self.judge is not None else None
        if isinstance(name, str) and name in CATALOG and _holds_stacked(CATALOG[name].calibration, task):
            return f"judge rule (a calibration file replaced the catalog's {task} table for this judge, and its table has no stacked model)"
        return "judge rule (no stacked model in this judge's table)"

    def useful(self, question: str, answer: str, contexts: Sequence[str], tally: UsageTally, answer_name: str = "answer") -> list[Usefulness | None]:
        """The judge rule's: no validation rows label usefulness, so nothing fits a stacked model for it."""
        return self.rule.useful(question, answer, contexts, tally, answer_name)
