"""How well the judge metrics agree with people, on the human-labelled dev sets in ../shared/data.

Runs localeval's own metric code (the same prompts, evidence and decision rule as
`localeval score`) through a judge whose answers are cached per prompt
(benchmarks/judge_cache.py), then reports, for each task, side by side on the same
rows: the evidence signals alone, the judge alone, and their calibrated
combination, every fitted figure cross-validated (10 folds by claim, summary or
question); per source; and judge seconds and prompt tokens evaluated per sample.

- attribution (SciFact + WiCE claims), recall (QAGS summary statements), vitaminc and
  fever (public claim/evidence pairs, benchmarks/DATA_SOURCES.md; --shift 1 scores their
  second half, the dev rows choices were made on): balanced accuracy, AUC; the combination is fitted on all of them at
  once, each task and each class weighing the same;
- relevance (HotpotQA supporting facts in five shapes: 10, 3 and 1 contexts, and the
  distractors alone) and squad (SQuAD 2.0 single-paragraph questions: the paragraph alone,
  between two others of its article, and with a question it cannot answer): sentence
  precision / recall / F1 of the selection, the share of "insufficient information"
  answers; one rule is fitted on both, each source weighing the same;
- plain: the hand-written cases of benchmarks/data/plain_cases.jsonl, right or wrong;
- the combination as shipped in localeval/catalog.toml for this judge, applied to the
  same rows (in-sample when the catalog was fitted on them: reported as such);
- unanswerable: hand-written questions whose contexts cannot answer them
  (benchmarks/data/unanswerable.jsonl): how often "insufficient information" is
  said, and, with the answer added as one more context, whether it is selected;
- retrieval: id_context_recall against the file's id_recall (must match every row).

    python benchmarks/accuracy.py --task attribution --limit 20        # a quick look
    python benchmarks/accuracy.py                                       # the whole dev split

benchmarks/write_catalog.py takes the same options and stores the fitted calibrations.

Judge answers are cached in benchmarks/.cache/judge/<model file>/, so a rerun that
changes only the evidence or the fit needs no model.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from judge_cache import CACHE, CachedJudge, with_calibration_file
from labelled_rows import (
    EXTERNAL_SETS,
    PLAIN,
    RELEVANCE_SHAPES,
    UNANSWERABLE,
    answer_sentence,
    parse_limits,
    question_shapes,
    read,
    read_external,
    read_squad,
    same_sentence,
    sentences,
)

from localeval import evaluate
from localeval.calibration.fitting import (
    FOLDS,
    Fit,
    auc,
    balanced_accuracy,
    balancing_weights,
    cross_validated,
    fit_logistic,
    fit_selection,
    folds_by_group,
    selection_f1,
)
from localeval.data.samples import Sample
from localeval.errors import JudgeError
from localeval.graders import judge_units
from localeval.judge import load_judge
from localeval.metrics import create_metric
from localeval.metrics import recall as recall_rules
from localeval.metrics.recall import CALIBRATION_KEY as ATTRIBUTION_KEY
from localeval.metrics.recall import FEATURES as ATTRIBUTION_METRIC_FEATURES
from localeval.metrics.relevance import CALIBRATION_KEY as RELEVANCE_KEY
from localeval.metrics.relevance import FEATURES as RELEVANCE_METRIC_FEATURES
from localeval.models.store import CATALOG, DEFAULT_MODEL, resolve_model

# The features of each combination. Few on purpose: the second half of the same
# sources (dev rows) checks that they generalise.
EVIDENCE_FEATURES = ["coverage", "best_coverage", "similarity", "number_coverage", "entity_coverage", "missing"]
# One calibration serves every kind of text (claims against abstracts, Wikipedia pages and
# single evidence sentences; summary statements against news articles), since a run cannot
# tell which it has: fitted on all tasks at once, each task weighing the same. Fitted on the
# four tasks (2026-11-23, docs/HISTORY.md), all seven features did worse than the judge and the best
# sentence's coverage alone (mean balanced accuracy 0.710 vs 0.718): the shipped combination
# weighs those two, and the catalog lists the other features with weight 0.
ATTRIBUTION_FEATURES = ["judge", "best_coverage"]
ALL_FEATURES = list(ATTRIBUTION_METRIC_FEATURES)
# The relevance combination the catalog ships: every feature but the subject ones. With the judge's
# short answer among the features, leaving them out selected better in every HotpotQA shape and
# said "insufficient information" as often, on both row sets measured (lab/explore_relevance.py,
# docs/HISTORY.md); the metric still computes them for calibrations that weigh them.
RELEVANCE_FEATURES = [f for f in RELEVANCE_METRIC_FEATURES if f not in ("subject_asked", "focus_vs_best")]
RELEVANCE_JUDGE_FEATURES = [f for f in RELEVANCE_FEATURES if f.startswith("judge_")]


def progress(task: str, done: int, total: int, started: float) -> None:
    print(f"{task}: {done}/{total} ({time.perf_counter() - started:.0f} s)", file=sys.stderr, flush=True)


# -- running the metrics ----------------------------------------------------------


StatementItem = tuple[str, str, Sample, list[str], list[int]]  # id, source, sample, statements, their labels


def statement_items(task: str, limit: int | None, shift: int) -> list[StatementItem]:
    """A statement task's samples, each with its human-segmented statements and their labels."""
    if task in EXTERNAL_SETS:
        return [(r["id"], r["source"], Sample(user_input="", retrieved_contexts=[r["context"]]), [r["claim"]], [r["label"]]) for r in read_external(task, limit, shift > 0)]
    if task == "attribution":
        return [
            (r["id"], r["source"], Sample(user_input=f"Tell me about {r['wiki_title']}." if r.get("wiki_title") else "", retrieved_contexts=[r["context"]]), [r["claim"]], [r["label"]])
            for r in read("attribution_dev.jsonl", limit, shift)
        ]
    return [
        (r["id"], r["source"], Sample(user_input=r["user_input"], retrieved_contexts=r["retrieved_contexts"]), r["statements"], r["statement_labels"])
        for r in read("recall_dev.jsonl", limit, shift)
    ]


VERIFIER_FEATURE: list[bool] = [False]  # --verifier-feature: add the trained verifier's logit to each statement's features


def statement_rows(judge: CachedJudge, task: str, limit: int | None, shift: int) -> list[dict[str, Any]]:
    """One record per statement: label, source, group, the metric's features (with
    --verifier-feature also the verifier's best-window logit, "verifier"); plus per-sample cost."""
    metric = recall_metric()
    verifier_metric = create_metric("context_recall", {**RECALL_OPTIONS, "verifier": True, "reasons": False}) if VERIFIER_FEATURE[0] else None
    records: list[dict[str, Any]] = []
    items = statement_items(task, limit, shift)
    started = time.perf_counter()
    for number, (row_id, source, sample, statements, labels) in enumerate(items, start=1):
        before = judge.seconds
        try:
            score = metric.score_statements(sample, statements, judge)
        except JudgeError as error:
            records.append({"group": row_id, "error": str(error)})
            continue
        cost = {**(score.usage or {}), "seconds": judge.seconds - before}
        verdicts = score.details["statements"]
        if verifier_metric is not None:
            for verdict, verified in zip(verdicts, verifier_metric.score_statements(sample, statements, None).details["statements"]):
                verdict["features"] = {**verdict["features"], "verifier": verified["features"]["verifier"]}
        for verdict, label in zip(verdicts, labels):
            records.append({"group": row_id, "source": source, "label": label, "features": verdict["features"], "cost": cost})
        progress(task, number, len(items), started)
    return records


def print_combinations(tasks: Mapping[str, list[dict[str, Any]]], combinations: Mapping[str, Sequence[str]]) -> None:
    """Each named feature combination fitted and cross-validated on the statement `tasks` at once."""
    print(f"\nbalanced accuracy / AUC, cross-validated ({', '.join(tasks)}):")
    for name, chosen in combinations.items():
        report = attribution_report(tasks, None, chosen)["combination"]
        print(f"  {name:<42} " + "  ".join(f"{task} {report[task]['balanced_accuracy']:.3f} / {report[task]['auc']:.3f}" for task in tasks))


RELEVANCE_OPTIONS: dict[str, Any] = {}  # options of the metrics under test (--judged-contexts, --recall-chunks)
RECALL_OPTIONS: dict[str, Any] = {}


def relevance_metric() -> Any:
    return create_metric("context_relevance", RELEVANCE_OPTIONS)


def recall_metric() -> Any:
    return create_metric("context_recall", RECALL_OPTIONS)


def relevance_rows(judge: CachedJudge, limit: int | None, shift: int) -> list[dict[str, Any]]:
    """One record per question and shape: every unit's features and the gold units (none in the
    shapes without gold: "insufficient information" is right there). Every paragraph is judged on
    its own, so the shapes of a question share their paragraphs' cached verdicts."""
    rows = read("relevance_dev.jsonl", limit, shift)
    metric = relevance_metric()
    records = []
    started = time.perf_counter()
    for number, row in enumerate(rows, start=1):
        for shape, variants in question_shapes(row).items():
            for contexts in (c for c in variants if c):
                units = sentences({"retrieved_contexts": contexts})
                gold = [] if "without" in shape else sorted(i for i, text in enumerate(units) if any(same_sentence(text, g) for g in row["gold_sentences"]))
                records.append(relevance_record(metric, judge, row["user_input"], contexts, gold, group=row["id"], shape=shape, source="hotpotqa", costed=shape == "10"))
        progress("relevance", number, len(rows), started)
    return records


def relevance_record(metric: Any, judge: CachedJudge, question: str, contexts: list[str], gold: list[int], *, group: str, shape: str, source: str, costed: bool) -> dict[str, Any]:
    """One scored sample as a record: every unit's features and the gold units; with `costed`, what the judge spent on it."""
    before = judge.seconds
    score = metric.score_batch([Sample(user_input=question, retrieved_contexts=contexts)], judge)[0]
    record = {"group": group, "shape": shape, "source": source, "features": score.details["features"], "gold": gold}
    if costed:
        record["cost"] = {**(score.usage or {}), "seconds": judge.seconds - before}
    return record


def squad_rows(judge: CachedJudge, limit: int | None, shift: int) -> list[dict[str, Any]]:
    """Relevance records of single-paragraph questions: the paragraph alone ("squad 1"), between
    two other paragraphs of its article ("squad 3"), and the paragraph with a question written
    against it that it cannot answer ("squad 1 without answer")."""
    metric = relevance_metric()
    records: list[dict[str, Any]] = []
    rows = read_squad(limit, shift > 0)
    started = time.perf_counter()
    for number, row in enumerate(rows, start=1):
        answer = answer_sentence(row["context"], row["answer_start"])
        before_answer = len(sentences({"retrieved_contexts": row["others"][:1]}))
        shapes = [("squad 1", row["question"], [row["context"]], [answer]),
                  ("squad 3", row["question"], [row["others"][0], row["context"], row["others"][1]], [before_answer + answer])]
        if row["impossible"]:
            shapes.append(("squad 1 without answer", row["impossible"], [row["context"]], []))
        for shape, question, contexts, gold in shapes:
            records.append(relevance_record(metric, judge, question, contexts, gold, group=row["id"], shape=shape, source="squad", costed=shape == "squad 1"))
        progress("squad", number, len(rows), started)
    return records


def source_weights(records: Sequence[Mapping[str, Any]]) -> list[float]:
    """Per record, so that every source's units weigh the same in a fit (HotpotQA's ten
    paragraphs would otherwise outweigh single paragraphs forty to one)."""
    units: dict[str, int] = {}
    for r in records:
        units[r["source"]] = units.get(r["source"], 0) + len(r["features"])
    total = sum(units.values())
    return [total / (len(units) * units[r["source"]]) for r in records]


def unanswerable_report(judge: CachedJudge) -> dict[str, Any]:
    """Hand-written questions whose retrieved contexts cannot answer them (on-topic
    distractors), each scored as written and with its answer added as one more context:
    how often "insufficient information" (score 0) is said, and whether the answer is
    then selected. Scored with the judge's shipped calibration (the catalog's)."""
    metric = relevance_metric()
    rows = [json.loads(line) for line in UNANSWERABLE.read_text(encoding="utf-8").splitlines() if line.strip()]
    said_insufficient, twin_insufficient, answer_selected = [], [], []
    for row in rows:
        alone = Sample(id=row["id"], user_input=row["user_input"], retrieved_contexts=row["retrieved_contexts"])
        twin = Sample(id=row["id"], user_input=row["user_input"], retrieved_contexts=[*row["retrieved_contexts"], row["answer"]])
        run = evaluate([alone, twin], [metric], judge=judge)
        first, second = (r["details"].get("context_relevance", {}) for r in run.results)
        said_insufficient.append(not first.get("selected"))
        twin_insufficient.append(not second.get("selected"))
        answer_selected.append(row["answer"] in second.get("selected_sentences", []))
        if first.get("selected"):
            print(f"  {row['id']}: selected {first['selected_sentences']}", file=sys.stderr)
    n = len(rows)
    return {"n": n, "insufficient": sum(said_insufficient) / n, "twin_insufficient": sum(twin_insufficient) / n, "twin_answer_selected": sum(answer_selected) / n}


def plain_relevance_records(judge: CachedJudge) -> list[dict[str, Any]]:
    """The hand-written relevance cases as records (features, gold unit indices), for checking a
    rule fitted elsewhere on them (lab/explore_relevance.py); never fitted on."""
    metric = relevance_metric()
    records = []
    for row in (json.loads(line) for line in PLAIN.read_text(encoding="utf-8").splitlines() if line.strip()):
        if row["kind"] == "relevance":
            details = metric.score_batch([Sample(user_input=row["user_input"], retrieved_contexts=row["retrieved_contexts"])], judge)[0].details
            units = sentences(row)
            records.append({"group": row["id"], "features": details["features"], "gold": [i for i, text in enumerate(units) if text in row["required"]]})
    return records


def plain_report(judge: CachedJudge) -> dict[str, Any]:
    """The hand-written plain cases (benchmarks/data/plain_cases.jsonl), scored with the shipped
    calibration: a relevance case is right when exactly its required sentences are selected
    (none: "insufficient information"), an attribution case when the verdict is its label.
    Never used in a fit. Every wrong case is printed with what was decided."""
    relevance, recall = relevance_metric(), recall_metric()
    rows = [json.loads(line) for line in PLAIN.read_text(encoding="utf-8").splitlines() if line.strip()]
    right: dict[str, list[bool]] = {"relevance": [], "attribution": []}
    for row in rows:
        sample = Sample(user_input=row["user_input"], retrieved_contexts=row["retrieved_contexts"])
        if row["kind"] == "relevance":
            details = relevance.score_batch([sample], judge)[0].details
            ok = set(details["selected_sentences"]) == set(row["required"])
            said = f"selected {details['selected_sentences']} (P {[p for p in details['probabilities']]})"
        else:
            verdict = recall.score_statements(sample, [row["statement"]], judge).details["statements"][0]
            ok = verdict["attributed"] == row["label"]
            said = f"attributed={verdict['attributed']} P={verdict['probability']}"
        right[row["kind"]].append(ok)
        if not ok:
            print(f"  plain case {row['id']} wrong: {said}", file=sys.stderr)
    return {kind: {"right": sum(oks), "n": len(oks)} for kind, oks in right.items()}


# -- figures ----------------------------------------------------------------------


def verdict_figures(records: Sequence[Mapping[str, Any]], scores: Sequence[float], threshold: float) -> dict[str, Any]:
    labels = [r["label"] for r in records]
    out: dict[str, Any] = {"balanced_accuracy": balanced_accuracy(labels, [int(s >= threshold) for s in scores]), "auc": auc(labels, scores), "n": len(records)}
    for source in sorted({r["source"] for r in records}):
        picked = [(r["label"], s) for r, s in zip(records, scores) if r["source"] == source]
        out[source] = balanced_accuracy([g for g, _ in picked], [int(s >= threshold) for _, s in picked])
    return out


def attribution_report(tasks: Mapping[str, list[dict[str, Any]]], shipped: Mapping[str, Any] | None, combination: Sequence[str] = ATTRIBUTION_FEATURES) -> dict[str, Any]:
    """Evidence alone, judge alone, the combination: each fitted and cross-validated on both
    tasks at once; and the shipped combination applied as is."""
    records = [{**r, "task": task} for task, rows in tasks.items() for r in rows if "error" not in r]
    labels = [r["label"] for r in records]
    weights = balancing_weights(labels, [r["task"] for r in records])
    features = [r["features"] for r in records]
    groups = [f"{r['task']}/{r['group']}" for r in records]
    report: dict[str, Any] = {}
    for name, chosen in (("evidence", EVIDENCE_FEATURES), ("judge", ["judge"]), ("all features", ALL_FEATURES), ("combination", list(combination))):

        def fitted(train: list[int], chosen: list[str] = chosen) -> Any:
            model = fit_logistic([features[i] for i in train], [labels[i] for i in train], [weights[i] for i in train], chosen)
            return lambda test: model.probabilities([features[i] for i in test])

        predicted = cross_validated(features, groups, fitted)
        report[name] = {task: verdict_figures([r for r in records if r["task"] == task], [p for r, p in zip(records, predicted) if r["task"] == task], 0.5) for task in tasks}
    final = fit_logistic(features, labels, weights, list(combination))
    table = final.table()
    report["fit"] = {**table, "weights": {name: table["weights"].get(name, 0.0) for name in ALL_FEATURES}}
    if shipped:
        model = Fit(float(shipped["intercept"]), {k: float(v) for k, v in shipped["weights"].items()})
        predicted = model.probabilities(features)
        report["shipped"] = {task: verdict_figures([r for r in records if r["task"] == task], [p for r, p in zip(records, predicted) if r["task"] == task], 0.5) for task in tasks}
    report["errors"] = sum(1 for rows in tasks.values() for r in rows if "error" in r)
    report["cost"] = {task: judge_cost(rows) for task, rows in tasks.items()}
    return report


def judge_cost(records: Iterable[Mapping[str, Any]]) -> dict[str, float]:
    """Per sample: judge calls and prompt tokens evaluated (after prefix reuse)."""
    per_group: dict[str, Mapping[str, Any]] = {}
    for r in records:
        if "cost" in r:
            per_group[r["group"]] = r["cost"]
    costs = list(per_group.values())
    if not costs:
        return {}
    return {
        "samples": len(costs),
        "calls": statistics.fmean(c["calls"] for c in costs),
        "prompt_evaluated": statistics.fmean(c["prompt_evaluated"] for c in costs),
        "seconds": statistics.fmean(c["seconds"] for c in costs),
    }


def relevance_report(records: Sequence[dict[str, Any]], shipped: Mapping[str, Any] | None) -> dict[str, Any]:
    """Sentence selection per shape, cross-validated by question: a logistic model of "required"
    per unit, fitted on every shape at once (the shapes without gold teach it when nothing is
    required), with the selection threshold that maximises the mean selection score (F1, and for a
    shape without gold 1 for "insufficient information") folded into the intercept."""
    report: dict[str, Any] = {"cost": {source: judge_cost([r for r in records if "cost" in r and r["source"] == source]) for source in sorted({r["source"] for r in records})}}
    for name, chosen in (("evidence", [f for f in RELEVANCE_FEATURES if f not in RELEVANCE_JUDGE_FEATURES]), ("judge", RELEVANCE_JUDGE_FEATURES), ("combination", RELEVANCE_FEATURES)):
        report[name] = shape_figures(records, relevance_cv(records, chosen))
    table = fit_selection([r["features"] for r in records], [set(r["gold"]) for r in records], RELEVANCE_FEATURES, judge_units.select_units, row_weights=source_weights(records)).table()
    report["fit"] = {**table, "weights": {name: table["weights"].get(name, 0.0) for name in RELEVANCE_METRIC_FEATURES}}
    if shipped:
        model = Fit(float(shipped["intercept"]), {k: float(v) for k, v in shipped["weights"].items()})
        report["shipped"] = shape_figures(records, [set(judge_units.select_units(model.probabilities(r["features"]), r["features"], 0.5)) for r in records])
    return report


def relevance_cv(records: Sequence[Mapping[str, Any]], chosen: list[str]) -> list[set[int]]:
    assignment = folds_by_group([r["group"] for r in records], FOLDS)
    selections: list[set[int]] = [set() for _ in records]
    for fold in range(FOLDS):
        train = [r for r, f in zip(records, assignment) if f != fold]
        if not train:
            continue
        model = fit_selection([r["features"] for r in train], [set(r["gold"]) for r in train], chosen, judge_units.select_units, row_weights=source_weights(train))
        for index, (r, f) in enumerate(zip(records, assignment)):
            if f == fold:
                selections[index] = set(judge_units.select_units(model.probabilities(r["features"]), r["features"], 0.5))
    return selections


def shape_figures(records: Sequence[Mapping[str, Any]], selections: Sequence[set[int]]) -> dict[str, Any]:
    """Per shape: precision / recall / F1 where something answers, "insufficient" where nothing does."""
    out: dict[str, Any] = {}
    for shape in RELEVANCE_SHAPES:
        picked = [(s, set(r["gold"])) for s, r in zip(selections, records) if r["shape"] == shape]
        if not picked:
            continue
        if "without" in shape:
            out[shape] = {"insufficient": statistics.fmean(not s for s, _ in picked), "n": len(picked)}
        else:
            scores = [selection_f1(s, g) for s, g in picked]
            out[shape] = {
                "precision": statistics.fmean(p for p, _, _ in scores),
                "recall": statistics.fmean(r for _, r, _ in scores),
                "f1": statistics.fmean(f for _, _, f in scores),
                "insufficient": statistics.fmean(not s for s, _ in picked),
                "n": len(picked),
            }
    return out


def retrieval_report(limit: int | None) -> dict[str, Any]:
    rows = read("retrieval_dev.jsonl", limit)
    samples = [Sample(retrieved_context_ids=r["retrieved_context_ids"], reference_context_ids=r["reference_context_ids"]) for r in rows]
    run = evaluate(samples, ["id_context_recall"])
    mismatches = sum(1 for r, res in zip(rows, run.results) if res["scores"]["id_context_recall"] != r["id_recall"])
    return {"n": len(rows), "id_recall_mismatches": mismatches}


# -- output -------------------------------------------------------------------------


def fmt(value: Any) -> str:
    return "-" if value is None or (isinstance(value, float) and value != value) else f"{value:.3f}" if isinstance(value, float) else str(value)


def print_report(report: dict[str, Any]) -> None:
    print(f"judge: {report['judge']}")
    if "verdicts" in report:
        v = report["verdicts"]
        print("\nstatement verdicts (balanced accuracy / AUC, 10-fold cross-validated; per source: balanced accuracy)")
        for name in ("evidence", "judge", "all features", "combination", "shipped"):
            if name in v:
                cells = "   ".join(f"{task} {fmt(f['balanced_accuracy'])} / {fmt(f['auc'])} ({', '.join(f'{k} {fmt(x)}' for k, x in f.items() if k not in ('balanced_accuracy', 'auc', 'n'))})" for task, f in v[name].items())
                label = "shipped (catalog, as is)" if name == "shipped" else name
                print(f"  {label:<26} {cells}")
        print(f"  fitted on all rows: {v['fit']}")
        for task, cost in v["cost"].items():
            print(f"  {task}: {fmt(cost.get('seconds'))} judge seconds, {fmt(cost.get('calls'))} calls and {fmt(cost.get('prompt_evaluated'))} prompt tokens evaluated per sample ({cost.get('samples')} samples)")
        print(f"  judge errors: {v['errors']}")
    if "relevance" in report:
        r = report["relevance"]
        print("\ncontext relevance by shape (HotpotQA: contexts retrieved; SQuAD 2.0): sentence precision / recall / F1 where the gold is present,")
        print("'insufficient information' share where it is not; 10-fold cross-validated by question")
        for name in ("evidence", "judge", "combination", "shipped"):
            if name in r:
                cells = []
                for shape, f in r[name].items():
                    if "f1" in f:
                        cells.append(f"[{shape}] {fmt(f['precision'])} / {fmt(f['recall'])} / {fmt(f['f1'])}")
                    else:
                        cells.append(f"[{shape}] insufficient {fmt(f['insufficient'])}")
                print(f"  {name:<12} " + "   ".join(cells))
        print(f"  fitted on all rows: {r['fit']} (selection threshold folded into the intercept)")
        for source, cost in r["cost"].items():
            shape = "HotpotQA, 10 contexts" if source == "hotpotqa" else "SQuAD, 1 context"
            print(f"  {shape}: {fmt(cost.get('seconds'))} judge seconds, {fmt(cost.get('calls'))} calls and {fmt(cost.get('prompt_evaluated'))} prompt tokens evaluated per question")
    if "unanswerable" in report:
        u = report["unanswerable"]
        print(f"\nunanswerable questions (benchmarks/data/unanswerable.jsonl, {u['n']} hand-written, calibration: {report['calibration']}): "
              f"insufficient information {fmt(u['insufficient'])}; with the answer added: insufficient {fmt(u['twin_insufficient'])}, "
              f"answer selected {fmt(u['twin_answer_selected'])}")
    if "plain" in report:
        cells = ", ".join(f"{kind} {f['right']} of {f['n']} right" for kind, f in report["plain"].items())
        print(f"\nplain cases (benchmarks/data/plain_cases.jsonl, hand-written, calibration: {report['calibration']}): {cells}")
    if "retrieval" in report:
        print(f"\nretrieval: id_context_recall vs the file's id_recall: {report['retrieval']['id_recall_mismatches']} mismatches in {report['retrieval']['n']} rows")


def build_parser(description: str | None = __doc__) -> argparse.ArgumentParser:
    """The benchmark's options (write_catalog.py takes the same ones, to fit on the same rows)."""
    parser = argparse.ArgumentParser(description=description, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--task", default="attribution,recall,vitaminc,fever,relevance,squad,plain,retrieval", help="comma-separated: attribution, recall, vitaminc, fever, relevance, squad, plain, unanswerable, retrieval")
    parser.add_argument("--limit", type=parse_limits, default={}, help="rows per task, evenly spaced: N for every task, or TASK=N,... (default: the whole dev split)")
    parser.add_argument("--shift", type=int, default=0, help="with --limit: take the rows this many rows after the usual ones (--shift 1: the dev half, which choices have read; not unseen rows)")
    parser.add_argument("--model", default=DEFAULT_MODEL, help="catalog name or GGUF path (default: the default judge)")
    parser.add_argument("--threads", type=int)
    parser.add_argument("--judged-contexts", type=int, help="context_relevance's judged_contexts option (default: the metric's); 0 reads every context")
    parser.add_argument("--choice-passages", type=int, help="how many contexts context_relevance asks the judge to pick a sentence of (default: judge_units.CHOICE_PASSAGES)")
    parser.add_argument("--recall-chunks", type=int, help="context_recall's chunks option (default: the metric's)")
    parser.add_argument("--next-chunk-coverage", type=float, help="context_recall reads a chunk after the best only when one of its sentences holds this share of the statement's words (default: recall.NEXT_CHUNK_COVERAGE; 0 reads it always)")
    parser.add_argument("--combination", default=",".join(ATTRIBUTION_FEATURES), help="comma-separated features of the statement-verdict combination to fit (default: the shipped ones)")
    parser.add_argument("--verifier-feature", action="store_true", help="statement tasks: also fit and cross-validate combinations with the trained verifier's logit as a feature")
    parser.add_argument("--calibration", type=Path, help="a calibration file whose tables replace the catalog's (localeval calibrate's, or choose_decision.py --write-calibration's): the figures called \"shipped\" are then that file's")
    parser.add_argument("--cache", type=Path, help="the judge answer cache (default: benchmarks/.cache/judge/MODEL/answers.jsonl); a new file measures cost afresh")
    parser.add_argument("--json", type=Path, help="also write the report here")
    return parser


def measure(parser: argparse.ArgumentParser, args: argparse.Namespace) -> dict[str, Any]:
    """Run the tasks `args` names and return the report (print_report prints it)."""
    unknown = set(args.combination.split(",")) - set(ALL_FEATURES)
    if unknown:
        parser.error(f"--combination: unknown features {sorted(unknown)}; the metric computes {ALL_FEATURES}")
    if args.judged_contexts is not None:
        RELEVANCE_OPTIONS["judged_contexts"] = args.judged_contexts
    if args.choice_passages is not None:
        judge_units.CHOICE_PASSAGES = args.choice_passages
    if args.recall_chunks is not None:
        RECALL_OPTIONS["chunks"] = args.recall_chunks
    if args.next_chunk_coverage is not None:
        recall_rules.NEXT_CHUNK_COVERAGE = args.next_chunk_coverage
    VERIFIER_FEATURE[0] = args.verifier_feature
    tasks = args.task.split(",")
    path, catalog_name = resolve_model(args.model)
    shipped = with_calibration_file(CATALOG[catalog_name].calibration if catalog_name else {}, args.calibration)
    judge = CachedJudge(args.cache or CACHE / path.name / "answers.jsonl", lambda: load_judge(str(path), threads=args.threads, cache=False), shipped)
    limit = args.limit.get
    report: dict[str, Any] = {"judge": catalog_name or path.name, "catalog_name": catalog_name, "limit": args.limit, "shift": args.shift,
                              "calibration": f"the tables of {args.calibration} where it has one, else the shipped" if args.calibration else "shipped"}
    verdict_tasks = {task: statement_rows(judge, task, limit(task, limit("*")), args.shift) for task in ("attribution", "recall", *EXTERNAL_SETS) if task in tasks}
    if verdict_tasks:
        report["verdicts"] = attribution_report(verdict_tasks, shipped.get(ATTRIBUTION_KEY), args.combination.split(","))
        if VERIFIER_FEATURE[0]:
            print_combinations(verdict_tasks, {
                "judge rule (judge, best_coverage)": ["judge", "best_coverage"],
                "verifier alone": ["verifier"],
                "verifier, best_coverage": ["verifier", "best_coverage"],
                "verifier, judge": ["verifier", "judge"],
                "verifier, judge, best_coverage": ["verifier", "judge", "best_coverage"],
            })
    if "relevance" in tasks or "squad" in tasks:
        records = relevance_rows(judge, limit("relevance", limit("*")), args.shift) if "relevance" in tasks else []
        records += squad_rows(judge, limit("squad", limit("*")), args.shift) if "squad" in tasks else []
        report["relevance"] = relevance_report(records, shipped.get(RELEVANCE_KEY))
    if "unanswerable" in tasks:
        report["unanswerable"] = unanswerable_report(judge)
    if "plain" in tasks:
        report["plain"] = plain_report(judge)
    if "retrieval" in tasks:
        report["retrieval"] = retrieval_report(limit("retrieval", limit("*")))
    judge.close()
    report["judge_cache_misses"] = judge.misses
    return report


def main(argv: Iterable[str] | None = None) -> None:
    parser = build_parser()
    args = parser.parse_args(argv)
    report = measure(parser, args)
    print_report(report)
    if args.json:
        args.json.write_text(json.dumps(report, indent=2, default=str) + "\n")


if __name__ == "__main__":
    main()
