"""`localeval calibrate`: fit the judge metrics' combination to a user's own labelled text.

The shipped calibrations were fitted on public dev sets; a fit on a few hundred of a
user's own statements or questions suits their kind of text better (docs/measured.md
shows how much on the dev sets). A labels file is JSON Lines; each line is one of:

    {"retrieved_contexts": [...], "statement": "...", "label": 1, "user_input": "..."}   # attribution (context_recall)
    {"user_input": "...", "retrieved_contexts": [...], "required": ["a sentence", ...]}  # relevance (context_relevance)

`label` is 1 when the statement can be attributed to the contexts, else 0;
`required` lists the context sentences needed to answer, verbatim ([] = nothing
answers: "insufficient information"). Each row goes through the metric's own code
(same judge prompts and evidence as `localeval score`), a logistic combination of
the metric's features is fitted, and figures are cross-validated (folds by row)
against the calibration the judge ships with, on the same rows.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from localeval.calibration.combination import CALIBRATION_FORMAT, CALIBRATION_VERSION, LogisticModel
from localeval.calibration.fitting import FOLDS, Fit, auc, balanced_accuracy, balancing_weights, fit_logistic, fit_selection, folds_by_group, selection_f1
from localeval.data.jsonl import input_name
from localeval.data.labels import LeftOut, read_labels, required_sentences
from localeval.data.samples import Sample
from localeval.errors import JudgeError, LocalevalError
from localeval.graders import judge_units
from localeval.judge import Judge
from localeval.metrics import calibrated_metric, recall, relevance

MIN_ROWS = 20  # below this, a fit of seven weights says more about the rows than the text


@dataclass
class LabelledRows:
    """Features and labels of the rows read so far, per task."""

    statements: list[dict[str, float]] = field(default_factory=list)
    labels: list[int] = field(default_factory=list)
    questions: list[list[dict[str, float]]] = field(default_factory=list)
    required: list[set[int]] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)


def collect(path: str, judge: Judge, on_row: Callable[[int], None] = lambda _: None) -> LabelledRows:
    """Each labelled row through the metric's own code: its features and its label."""
    rows = LabelledRows()
    statements = recall.ContextRecall()
    units = relevance.ContextRelevance()
    name = input_name(path)
    for number, row in read_labels(path):
        if "useful" in row:  # labels a scored sample's contexts (score --labels); no usefulness fit
            on_row(number)
            continue
        sample = Sample(user_input=row.get("user_input", ""), retrieved_contexts=row["retrieved_contexts"])
        try:
            if "statement" in row:
                score = statements.score_statements(sample, [row["statement"]], judge)
                rows.statements.append(score.details["statements"][0]["features"])
                rows.labels.append(int(row["label"]))
            else:
                labelled = required_sentences(row, name, number)  # the metric's default units: English pysbd sentences
                score = units.score_batch([sample], judge)[0]
                rows.questions.append(score.details.get("features", []))
                rows.required.append(labelled.required)
        except LeftOut as left_out:
            rows.errors.append(str(left_out))
        except JudgeError as error:
            rows.errors.append(f"{name}:{number}: {error}")
        on_row(number)
    return rows


def _out_of_fold(count: int, fit: Callable[[list[int]], Callable[[list[int]], list[Any]]]) -> list[Any]:
    """Predictions for every row from a model fitted on the other folds (folds by row)."""
    folds = folds_by_group([str(i) for i in range(count)], min(FOLDS, count))
    predicted: list[Any] = [None] * count
    for fold in set(folds):
        train = [i for i, f in enumerate(folds) if f != fold]
        test = [i for i, f in enumerate(folds) if f == fold]
        for index, value in zip(test, fit(train)(test)):
            predicted[index] = value
    return predicted


def _verdict_figures(labels: Sequence[int], probabilities: Sequence[float]) -> dict[str, float]:
    return {"balanced_accuracy": balanced_accuracy(labels, [int(p >= 0.5) for p in probabilities]), "auc": auc(labels, probabilities)}


def fit_attribution(rows: LabelledRows, shipped: LogisticModel) -> tuple[Fit, dict[str, Any]]:
    features, labels = rows.statements, rows.labels
    if len(labels) < MIN_ROWS or len(set(labels)) < 2:
        raise LocalevalError(f"attribution needs at least {MIN_ROWS} labelled statements of both labels; got {len(labels)} ({sum(labels)} attributable)")
    weights = balancing_weights(labels, ["attribution"] * len(labels))
    names = list(recall.ContextRecall.calibration_features)

    def fitted(train: list[int]) -> Callable[[list[int]], list[float]]:
        model = fit_logistic([features[i] for i in train], [labels[i] for i in train], [weights[i] for i in train], names)
        return lambda test: list(model.probabilities([features[i] for i in test]))

    figures = {
        "rows": len(labels),
        "fitted": _verdict_figures(labels, _out_of_fold(len(labels), fitted)),
        "shipped": _verdict_figures(labels, [shipped.probability(f) for f in features]),
    }
    return fit_logistic(features, labels, weights, names), figures


def _selection_figures(selections: Sequence[set[int]], required: Sequence[set[int]]) -> dict[str, float]:
    answerable = [(s, g) for s, g in zip(selections, required) if g]
    unanswerable = [s for s, g in zip(selections, required) if not g]
    return {
        "f1": float(np.mean([selection_f1(s, g)[2] for s, g in answerable])) if answerable else math.nan,
        "insufficient_when_nothing_answers": float(np.mean([not s for s in unanswerable])) if unanswerable else math.nan,
    }


def fit_relevance(rows: LabelledRows, shipped: LogisticModel) -> tuple[Fit, dict[str, Any]]:
    questions, required = rows.questions, rows.required
    if len(questions) < MIN_ROWS:
        raise LocalevalError(f"relevance needs at least {MIN_ROWS} labelled questions; got {len(questions)}")
    units = sum(len(q) for q in questions)
    chosen = sum(len(r) for r in required)
    if not units:
        raise LocalevalError("relevance: none of the labelled questions has a sentence in its retrieved contexts, so there is nothing to fit")
    if chosen in (0, units):
        every = "no sentence is" if not chosen else "every sentence is"
        raise LocalevalError(f"relevance: {every} labelled required in all {len(questions)} questions, so nothing tells required sentences from others; label questions of both kinds")
    names = list(relevance.ContextRelevance.calibration_features)

    def fitted(train: list[int]) -> Callable[[list[int]], list[set[int]]]:
        model = fit_selection([questions[i] for i in train], [required[i] for i in train], names, judge_units.select_units)
        return lambda test: [set(judge_units.select_units(model.probabilities(questions[i]).tolist(), questions[i], 0.5)) for i in test]

    figures = {
        "rows": len(questions),
        "fitted": _selection_figures(_out_of_fold(len(questions), fitted), required),
        "shipped": _selection_figures([set(judge_units.select_units([shipped.probability(f) for f in q], q, 0.5)) for q in questions], required),
    }
    return fit_selection(questions, required, names, judge_units.select_units), figures


# The tables calibrate fits, each from the rows that label it: (whether the rows hold any, the fit).
FITS: dict[str, tuple[Callable[[LabelledRows], bool], Callable[[LabelledRows, LogisticModel], tuple[Fit, dict[str, Any]]]]] = {
    "attribution": (lambda rows: bool(rows.labels), fit_attribution),
    "relevance": (lambda rows: bool(rows.questions), fit_relevance),
}


def fit_tables(rows: LabelledRows, calibration: Mapping[str, Mapping[str, Any]]) -> tuple[dict[str, Fit], dict[str, Any], list[str]]:
    """Every table the rows label, each fitted on its own and compared with the combination the
    judge ships (`calibration`, as the metric calibrated by that table reads it): a table that
    cannot be fitted (too few rows, one class) is reported, and the others are still written.
    Returns the tables, their figures, and why any could not be fitted."""
    tables: dict[str, Fit] = {}
    figures: dict[str, Any] = {}
    unfitted: list[str] = []
    for task, (labelled, fit) in FITS.items():
        if not labelled(rows):
            continue
        try:
            tables[task], figures[task] = fit(rows, calibrated_metric(task).calibration_for(calibration))
        except LocalevalError as error:
            unfitted.append(str(error))
    return tables, figures, unfitted


def calibration_document(tables: dict[str, Fit], figures: dict[str, Any], judge: dict[str, Any]) -> dict[str, Any]:
    """The calibration file: tables by task, and what they were fitted on and how well."""
    return {
        "format": CALIBRATION_FORMAT,
        "version": CALIBRATION_VERSION,
        "tables": {task: fit.table() for task, fit in tables.items()},
        "fitted": {"judge": {k: judge.get(k) for k in ("backend", "model", "sha256", "url")}, "cross_validated": figures},
    }

